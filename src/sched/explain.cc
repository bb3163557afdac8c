#include "sched/internal/explain.h"

#include <algorithm>

#include "sched/internal/text.h"

namespace corral::sched::detail {
namespace {

using core::PackLevel;

// " in region eu-west" for a region-bound request, else nothing: the reasons' scope.
std::string where(const ClusterSnapshot& s, RegionIx region) {
  return region >= 0 ? cat(" in region ", s.region_name(region)) : std::string();
}

// The largest free count in any domain of `level` (inside `region`, if it names one).
std::int32_t best_domain_free(const Plan& plan, Level level, TypeIx type, RegionIx region) {
  std::int32_t best = 0;
  for (std::int32_t d = 0; d < plan.domain_count(level); ++d) {
    if (region != kAnyRegion && plan.domain_region(level, d) != region) continue;
    best = std::max(best, plan.stats(level, d, type).free);
  }
  return best;
}

std::int32_t best_node_free(const Plan& plan, TypeIx type, RegionIx region) {
  for (std::int32_t c = kMaxGpusPerNode; c > 0; --c) {
    for (NodeIx n : plan.nodes_with_free(type, c)) {
      if (region == kAnyRegion || plan.snapshot().topo()[n].region == region) return c;
    }
  }
  return 0;
}

}  // namespace

std::optional<NeverFits> never_fits(const FleetBounds& bounds, const PlaceRequest& r) {
  const RegionIx region = r.region;
  // The common case, and the cheap one: no split, no required packing, and no more GPUs
  // than one cluster (of the job's region) has (a cycle asks this for every pending job
  // and type). Only numbers are kept: the sentence is written once, for the reason a job
  // ends up with.
  if (r.per_node == 0 && r.topology.mode != core::TopologyMode::kRequired &&
      region != kNoSuchRegion && r.gpus <= bounds.domain_gpus(Level::kCluster, r.type, region)) {
    return std::nullopt;
  }
  using Limit = NeverFits::Limit;
  NeverFits out{.type = r.type, .region = region, .gpus = r.gpus, .per_node = r.per_node};
  const auto never = [&](Limit limit, std::int32_t most, std::int32_t nodes = 0) {
    out.limit = limit;
    out.most = most;
    out.nodes = nodes;
    return std::optional<NeverFits>(out);
  };
  if (region == kNoSuchRegion) return never(Limit::kRegion, 0);
  const std::int32_t total = bounds.total_gpus(r.type, region);
  if (total == 0) return never(Limit::kRegion, 0);
  if (r.gpus > total) return never(Limit::kFleet, total);
  const std::int32_t largest_node = bounds.largest_node(r.type, region);
  if (r.per_node > largest_node) return never(Limit::kPerNode, 0, largest_node);
  // A fixed split over several nodes needs that many nodes with room for per_node each.
  out.split = r.per_node > 0 && r.per_node < r.gpus;
  const auto most_in = [&](Level level) {
    return out.split ? r.per_node * bounds.domain_nodes(level, r.type, r.per_node, region)
                     : bounds.domain_gpus(level, r.type, region);
  };
  const auto too_big = [&](Level level, Limit limit) -> std::optional<NeverFits> {
    const std::int32_t most = most_in(level);
    if (r.gpus <= most) return std::nullopt;
    return never(limit, most, bounds.domain_nodes(level, r.type, r.per_node, region));
  };
  if (r.topology.mode == core::TopologyMode::kRequired) {
    switch (r.topology.pack) {
      case PackLevel::kNode:
        if (r.gpus > largest_node) return never(Limit::kOneNode, largest_node);
        break;
      case PackLevel::kNvlink: {
        // One NVLink domain: inside one node, or across the nodes of one NVLink rack.
        std::int32_t most =
            r.per_node == 0 || r.per_node == r.gpus ? bounds.node_nvlink_gpus(r.type, region) : 0;
        if (r.per_node != r.gpus) most = std::max(most, most_in(Level::kNvlRack));
        if (r.gpus > most) return never(Limit::kNvlink, most);
        break;
      }
      case PackLevel::kLeaf:
        if (auto n = too_big(Level::kLeaf, Limit::kLeaf)) return n;
        break;
      case PackLevel::kSpine:
        if (auto n = too_big(Level::kSpine, Limit::kSpine)) return n;
        break;
      case PackLevel::kNone:
        break;
    }
  }
  // No gang spans clusters.
  return too_big(Level::kCluster,
                 bounds.cluster_count(region) > 1 ? Limit::kCluster : Limit::kFleetShape);
}

std::string never_fits_text(const ClusterSnapshot& s, const NeverFits& n) {
  using Limit = NeverFits::Limit;
  const std::string& type = s.gpu_types()[n.type].id.value;
  const std::string in = where(s, n.region);
  const auto needs = [&](const char* scope, const std::string& largest) {
    if (n.split) {
      return cat("needs ", n.gpus / n.per_node, " nodes with ", n.per_node, " ", type, scope, "; ",
                 largest, " has ", n.nodes);
    }
    return cat("needs ", n.gpus, " ", type, scope, "; ", largest, " has ", n.most);
  };
  const std::string scope_name =
      n.region >= 0 ? cat("region ", s.region_name(n.region)) : std::string("the fleet");
  switch (n.limit) {
    case Limit::kRegion:
      return cat("no node", in, " has ", type);
    case Limit::kFleet:
      return cat("asks for ", n.gpus, " ", type, " but ", scope_name, " has ", n.most);
    case Limit::kPerNode:
      return cat("asks for ", n.per_node, " ", type, " per node but the largest ", type, " node",
                 in, " has ", n.nodes);
    case Limit::kOneNode:
      return cat("requires one node but the largest ", type, " node", in, " has ", n.most, " GPUs");
    case Limit::kNvlink:
      return cat("needs ", n.gpus, " ", type, " in one NVLink domain; the largest", in, " has ",
                 n.most);
    case Limit::kLeaf:
      return needs(" on one leaf switch", "the largest leaf" + in);
    case Limit::kSpine:
      return needs(" on one spine", "the largest spine" + in);
    case Limit::kCluster:
      return needs(" in one cluster", "the largest cluster" + in);
    case Limit::kFleetShape:
      return needs("", scope_name);
  }
  return {};
}

Explanation explain_no_fit(const Plan& plan, const FleetBounds& bounds, const Gate& gate,
                           const PlaceRequest& r, const PlaceMiss& miss) {
  const ClusterSnapshot& s = plan.snapshot();
  const std::string& type = s.gpu_types()[r.type].id.value;
  const bool required = r.topology.mode == core::TopologyMode::kRequired;
  const std::string in = where(s, r.region);  // a region-bound job sees only its region

  // 1. Not enough free GPUs anywhere. GPUs that are idle but not free for this job are
  //    counted apart, so the sentence does not read as if running work held them all.
  const std::int32_t free = plan.free_in(r.type, r.region);
  if (free < r.gpus) {
    std::string reason = cat("capacity: ", free, " of ", r.gpus, " ", type, " free", in);
    if (const std::int32_t own = gate.current().only_reservation; own >= 0) {
      reason += cat(" in reservation ", s.reservations()[own].id.value);
      return {PendingKind::kCapacity, std::move(reason)};
    }
    const Gate::Held held = gate.held_by_reservations(r.type, r.region);
    const std::string& out_of_service = bounds.out_of_service_text(r.type, r.region);
    if (held.gpus == 0 && out_of_service.empty())
      return {PendingKind::kCapacity, std::move(reason)};
    reason += " (";
    if (held.gpus > 0) {
      reason += cat(held.gpus, " held by reservation", held.reservations.size() > 1 ? "s " : " ");
      for (std::size_t i = 0; i < held.reservations.size(); ++i) {
        reason += cat(i > 0 ? ", " : "", s.reservations()[held.reservations[i]].id.value);
      }
      if (!out_of_service.empty()) reason += ", ";
    }
    reason += out_of_service;
    reason += ')';
    return {PendingKind::kCapacity, std::move(reason)};
  }

  // 2. Enough GPUs, but power, CPUs/memory or packing stand in the way.
  if (miss.power_blocked) {
    const RackIx rack = miss.power_rack;
    return {
        PendingKind::kPower,
        cat("power: rack ", s.rack_name(rack), " has ", plan.rack_power_used(rack), " of ",
            s.rack_power_cap_watts(rack), " W in use; ", r.gpus, " ", type, " would pass its cap")};
  }
  if (miss.resources_blocked) {
    return {PendingKind::kCapacity,
            cat("capacity: nodes with free ", type, " lack the CPUs or memory asked per GPU (",
                r.cpus_per_gpu, " CPUs, ", r.memory_per_gpu_mib, " MiB)")};
  }
  if (r.per_node > 0 && r.per_node < r.gpus) {
    // A fixed split: count nodes with room for per_node in the widest domain allowed.
    const std::int32_t nodes = r.gpus / r.per_node;
    Level level = Level::kCluster;
    const char* scope = "cluster";
    if (required && r.topology.pack == PackLevel::kLeaf) {
      level = Level::kLeaf;
      scope = "leaf switch";
    } else if (required && r.topology.pack == PackLevel::kSpine) {
      level = Level::kSpine;
      scope = "spine";
    }
    std::int32_t best = 0;
    for (std::int32_t d = 0; d < plan.domain_count(level); ++d) {
      if (r.region != kAnyRegion && plan.domain_region(level, d) != r.region) continue;
      best = std::max(best, plan.stats(level, d, r.type).nodes_with_at_least(r.per_node));
    }
    return {PendingKind::kTopology, cat("topology: no ", scope, in, " has ", nodes, " nodes with ",
                                        r.per_node, " free ", type, " (best has ", best, ")")};
  }
  switch (r.topology.pack) {
    case PackLevel::kNvlink:
      return {PendingKind::kTopology,
              cat("topology: no NVLink domain", in, " has ", r.gpus, " free ", type,
                  " (most on one node: ", best_node_free(plan, r.type, r.region), ")")};
    case PackLevel::kNode:
      return {PendingKind::kTopology,
              cat("topology: no node", in, " has ", r.gpus, " free ", type,
                  " (most on one node: ", best_node_free(plan, r.type, r.region), ")")};
    case PackLevel::kLeaf:
      return {PendingKind::kTopology,
              cat("topology: no leaf switch", in, " has ", r.gpus, " free ", type,
                  " (best leaf: ", best_domain_free(plan, Level::kLeaf, r.type, r.region), ")")};
    case PackLevel::kSpine:
      return {PendingKind::kTopology,
              cat("topology: no spine", in, " has ", r.gpus, " free ", type,
                  " (best spine: ", best_domain_free(plan, Level::kSpine, r.type, r.region), ")")};
    case PackLevel::kNone:
      break;
  }
  return {PendingKind::kTopology,
          cat("topology: ", free, " ", type, " free", in, " but no cluster has ", r.gpus,
              " (best cluster: ", best_domain_free(plan, Level::kCluster, r.type, r.region), ")")};
}

}  // namespace corral::sched::detail
