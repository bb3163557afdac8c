// Topology-aware gang placement: find GPUs for one job on one GPU type, all or none.
// The policy (levels, best fit, the remainder node) is described in docs/scheduling.md.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/job_spec.h"
#include "sched/internal/plan.h"

namespace corral::sched::detail {

struct PlaceRequest {
  TypeIx type = -1;
  std::int32_t gpus = 0;
  std::int32_t per_node = 0;  // 0: any split
  std::int32_t cpus_per_gpu = 0;
  std::int64_t memory_per_gpu_mib = 0;
  core::TopologyConstraint topology;
  bool scoring = true;  // false: first fit in node order, no topology preference
  // Only nodes of this region (ClusterSnapshot::region_of: kAnyRegion, or kNoSuchRegion,
  // which nothing holds).
  RegionIx region = kAnyRegion;
};

struct PlaceResult {
  std::vector<Plan::Take> takes;  // by node index
  core::PackLevel packed = core::PackLevel::kNone;
};

// Why a search came back empty, for the pending reason.
struct PlaceMiss {
  bool power_blocked = false;      // some node had the GPUs but its rack lacked the power
  bool resources_blocked = false;  // some node had the GPUs but not the CPUs or memory
  RackIx power_rack = -1;
};

// The best placement under the plan's current free GPUs, or nothing (and why in `miss`).
// REQUIRES: request.type is a GPU type of the snapshot.
std::optional<PlaceResult> find_placement(const Plan& plan, const PlaceRequest& request,
                                          PlaceMiss& miss);

// The tightest level that contains these GPUs: one NVLink domain (inside a node, or a
// multi-node NVLink rack), one node, one leaf, one spine, or none of these.
core::PackLevel packed_level(const ClusterSnapshot& s, const std::vector<Plan::Take>& takes);

// Whether GPUs packed at `packed` satisfy a constraint asking for `wanted`. Not a
// simple comparison: a multi-node NVLink rack is one NVLink domain but not one node.
bool satisfies(const ClusterSnapshot& s, const std::vector<Plan::Take>& takes,
               core::PackLevel wanted);

}  // namespace corral::sched::detail
