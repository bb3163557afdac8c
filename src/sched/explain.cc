#include "sched/internal/explain.h"

#include <algorithm>

#include "sched/internal/text.h"

namespace corral::sched::detail {
namespace {

using core::PackLevel;

// The largest free count in any domain of `level`.
std::int32_t best_domain_free(const Plan& plan, Level level, TypeIx type) {
  std::int32_t best = 0;
  for (std::int32_t d = 0; d < plan.domain_count(level); ++d) {
    best = std::max(best, plan.stats(level, d, type).free);
  }
  return best;
}

std::int32_t best_node_free(const Plan& plan, TypeIx type) {
  for (std::int32_t c = kMaxGpusPerNode; c > 0; --c) {
    if (!plan.nodes_with_free(type, c).empty()) return c;
  }
  return 0;
}

}  // namespace

std::optional<NeverFits> never_fits(const ClusterSnapshot& s, const FleetBounds& bounds,
                                    const PlaceRequest& r) {
  // The common case, and the cheap one: no split, no required packing, and no more GPUs
  // than one cluster has (a cycle asks this for every pending job and type). Only numbers
  // are kept: the sentence is written once, for the reason a job ends up with.
  if (r.per_node == 0 && r.topology.mode != core::TopologyMode::kRequired &&
      r.gpus <= bounds.domain_gpus(Level::kCluster, r.type)) {
    return std::nullopt;
  }
  using Limit = NeverFits::Limit;
  NeverFits out{.type = r.type, .gpus = r.gpus, .per_node = r.per_node};
  const auto never = [&](Limit limit, std::int32_t most, std::int32_t nodes = 0) {
    out.limit = limit;
    out.most = most;
    out.nodes = nodes;
    return std::optional<NeverFits>(out);
  };
  const std::int32_t total = s.total_gpus(r.type);
  if (r.gpus > total) return never(Limit::kFleet, total);
  const std::int32_t largest_node = s.max_node_gpus(r.type);
  if (r.per_node > largest_node) return never(Limit::kPerNode, 0, largest_node);
  // A fixed split over several nodes needs that many nodes with room for per_node each.
  out.split = r.per_node > 0 && r.per_node < r.gpus;
  const auto most_in = [&](Level level) {
    return out.split ? r.per_node * bounds.domain_nodes(level, r.type, r.per_node)
                     : bounds.domain_gpus(level, r.type);
  };
  const auto too_big = [&](Level level, Limit limit) -> std::optional<NeverFits> {
    const std::int32_t most = most_in(level);
    if (r.gpus <= most) return std::nullopt;
    return never(limit, most, bounds.domain_nodes(level, r.type, r.per_node));
  };
  if (r.topology.mode == core::TopologyMode::kRequired) {
    switch (r.topology.pack) {
      case PackLevel::kNode:
        if (r.gpus > largest_node) return never(Limit::kOneNode, largest_node);
        break;
      case PackLevel::kNvlink: {
        // One NVLink domain: inside one node, or across the nodes of one NVLink rack.
        std::int32_t most =
            r.per_node == 0 || r.per_node == r.gpus ? bounds.node_nvlink_gpus(r.type) : 0;
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
  return too_big(Level::kCluster, s.cluster_count() > 1 ? Limit::kCluster : Limit::kFleetShape);
}

std::string never_fits_text(const ClusterSnapshot& s, const NeverFits& n) {
  using Limit = NeverFits::Limit;
  const std::string& type = s.gpu_types()[n.type].id.value;
  const auto needs = [&](const char* scope, const char* largest) {
    if (n.split) {
      return cat("needs ", n.gpus / n.per_node, " nodes with ", n.per_node, " ", type, scope, "; ",
                 largest, " has ", n.nodes);
    }
    return cat("needs ", n.gpus, " ", type, scope, "; ", largest, " has ", n.most);
  };
  switch (n.limit) {
    case Limit::kFleet:
      return cat("asks for ", n.gpus, " ", type, " but the fleet has ", n.most);
    case Limit::kPerNode:
      return cat("asks for ", n.per_node, " ", type, " per node but the largest ", type,
                 " node has ", n.nodes);
    case Limit::kOneNode:
      return cat("requires one node but the largest ", type, " node has ", n.most, " GPUs");
    case Limit::kNvlink:
      return cat("needs ", n.gpus, " ", type, " in one NVLink domain; the largest has ", n.most);
    case Limit::kLeaf:
      return needs(" on one leaf switch", "the largest leaf");
    case Limit::kSpine:
      return needs(" on one spine", "the largest spine");
    case Limit::kCluster:
      return needs(" in one cluster", "the largest cluster");
    case Limit::kFleetShape:
      return needs("", "the fleet");
  }
  return {};
}

Explanation explain_no_fit(const Plan& plan, const FleetBounds& bounds, const Gate& gate,
                           const PlaceRequest& r, const PlaceMiss& miss) {
  const ClusterSnapshot& s = plan.snapshot();
  const std::string& type = s.gpu_types()[r.type].id.value;
  const bool required = r.topology.mode == core::TopologyMode::kRequired;

  // 1. Not enough free GPUs anywhere. GPUs that are idle but not free for this job are
  //    counted apart, so the sentence does not read as if running work held them all.
  const std::int32_t free = plan.type_free(r.type);
  if (free < r.gpus) {
    std::string reason = cat("capacity: ", free, " of ", r.gpus, " ", type, " free");
    if (const std::int32_t own = gate.current().only_reservation; own >= 0) {
      reason += cat(" in reservation ", s.reservations()[own].id.value);
      return {PendingKind::kCapacity, std::move(reason)};
    }
    const Gate::Held held = gate.held_by_reservations(r.type);
    const std::string& out_of_service = bounds.out_of_service_text(r.type);
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
    const char* where = "cluster";
    if (required && r.topology.pack == PackLevel::kLeaf) {
      level = Level::kLeaf;
      where = "leaf switch";
    } else if (required && r.topology.pack == PackLevel::kSpine) {
      level = Level::kSpine;
      where = "spine";
    }
    std::int32_t best = 0;
    for (std::int32_t d = 0; d < plan.domain_count(level); ++d) {
      best = std::max(best, plan.stats(level, d, r.type).nodes_with_at_least(r.per_node));
    }
    return {PendingKind::kTopology, cat("topology: no ", where, " has ", nodes, " nodes with ",
                                        r.per_node, " free ", type, " (best has ", best, ")")};
  }
  switch (r.topology.pack) {
    case PackLevel::kNvlink:
      return {PendingKind::kTopology,
              cat("topology: no NVLink domain has ", r.gpus, " free ", type,
                  " (most on one node: ", best_node_free(plan, r.type), ")")};
    case PackLevel::kNode:
      return {PendingKind::kTopology,
              cat("topology: no node has ", r.gpus, " free ", type,
                  " (most on one node: ", best_node_free(plan, r.type), ")")};
    case PackLevel::kLeaf:
      return {PendingKind::kTopology,
              cat("topology: no leaf switch has ", r.gpus, " free ", type,
                  " (best leaf: ", best_domain_free(plan, Level::kLeaf, r.type), ")")};
    case PackLevel::kSpine:
      return {PendingKind::kTopology,
              cat("topology: no spine has ", r.gpus, " free ", type,
                  " (best spine: ", best_domain_free(plan, Level::kSpine, r.type), ")")};
    case PackLevel::kNone:
      break;
  }
  return {PendingKind::kTopology,
          cat("topology: ", free, " ", type, " free but no cluster has ", r.gpus,
              " (best cluster: ", best_domain_free(plan, Level::kCluster, r.type), ")")};
}

}  // namespace corral::sched::detail
