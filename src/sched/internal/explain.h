// Pending reasons: one short sentence a user can act on, for a job that was not placed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sched/decisions.h"
#include "sched/internal/fleet_bounds.h"
#include "sched/internal/gate.h"
#include "sched/internal/place.h"

namespace corral::sched::detail {

struct Explanation {
  PendingKind kind = PendingKind::kCapacity;
  std::string reason;
};

// A request shape this fleet can never hold as it is built (every GPU of the type,
// healthy or not, free or not): which limit it passes, and `most`, the most GPUs the
// fleet could give under that limit (to name the closest of several types). For a
// region-bound request every limit is its region's.
struct NeverFits {
  enum class Limit {
    kRegion,      // its region has no GPU of the type
    kFleet,       // more GPUs than the type has
    kPerNode,     // more per node than its largest node (`nodes` holds that node's GPUs)
    kOneNode,     // required one node, larger than any
    kNvlink,      // required one NVLink domain, larger than any
    kLeaf,        // required one leaf (or, split, not enough nodes on one)
    kSpine,       // the same for one spine
    kCluster,     // larger than any cluster (no gang spans clusters)
    kFleetShape,  // split: not enough nodes with per_node GPUs in the whole fleet
  };
  Limit limit = Limit::kFleet;
  TypeIx type = -1;
  RegionIx region = kAnyRegion;
  std::int32_t gpus = 0;
  std::int32_t per_node = 0;
  bool split = false;      // a fixed split over several nodes
  std::int32_t most = 0;   // GPUs the limit allows
  std::int32_t nodes = 0;  // split: nodes with per_node GPUs the limit allows
};
std::optional<NeverFits> never_fits(const FleetBounds& bounds, const PlaceRequest& request);
// The reason's text without its "unschedulable: " prefix, e.g. "needs 24 H100 on one
// leaf switch; the largest leaf has 16", or "no node in region eu-west has H100".
// REQUIRES: never.region is not kNoSuchRegion (the caller names a region no node is in).
std::string never_fits_text(const ClusterSnapshot& s, const NeverFits& never);

// Why `request` did not fit on `type` now (quota already granted), given the search's
// misses and the view the gate shows the job. REQUIRES: never_fits(request) is empty.
Explanation explain_no_fit(const Plan& plan, const FleetBounds& bounds, const Gate& gate,
                           const PlaceRequest& request, const PlaceMiss& miss);

}  // namespace corral::sched::detail
