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

Explanation explain_no_fit(const Plan& plan, const PlaceRequest& r, const PlaceMiss& miss) {
  const ClusterSnapshot& s = plan.snapshot();
  const std::string& type = s.gpu_types()[r.type].id.value;
  const bool required = r.topology.mode == core::TopologyMode::kRequired;

  // 1. Shapes this fleet can never hold, whatever runs.
  const std::int32_t total = s.total_gpus(r.type);
  if (r.gpus > total) {
    return {PendingKind::kUnschedulable,
            cat("unschedulable: asks for ", r.gpus, " ", type, " but the fleet has ", total)};
  }
  if (r.per_node > s.max_node_gpus(r.type)) {
    return {PendingKind::kUnschedulable,
            cat("unschedulable: asks for ", r.per_node, " ", type, " per node but the largest ",
                type, " node has ", s.max_node_gpus(r.type))};
  }
  if (required && r.topology.pack == PackLevel::kNode && r.gpus > s.max_node_gpus(r.type)) {
    return {PendingKind::kUnschedulable, cat("unschedulable: requires one node but the largest ",
                                             type, " node has ", s.max_node_gpus(r.type), " GPUs")};
  }

  // 2. Not enough free GPUs anywhere.
  const std::int32_t free = plan.type_free(r.type);
  if (free < r.gpus) {
    return {PendingKind::kCapacity, cat("capacity: ", free, " of ", r.gpus, " ", type, " free")};
  }

  // 3. Enough GPUs, but power, CPUs/memory or packing stand in the way.
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
