// FleetBounds: what the fleet could ever hold, were every GPU free and healthy, and how
// many GPUs are out of service; per GPU type, derived once per cycle from the plan's
// (fixed) domain lists. It tells a shape that never fits this fleet from one that does
// not fit now, and lets the capacity reason count GPUs that are not free for reasons
// other than running work.
//
// Every figure is kept for the whole fleet and, on a fleet of several regions, for each
// region alone: a region-bound job can only ever have what its region has.
//
// Thread safety: immutable after construction.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "sched/internal/plan.h"

namespace corral::sched::detail {

class FleetBounds {
 public:
  explicit FleetBounds(const Plan& plan);

  // In each accessor `region` is kAnyRegion (the whole fleet) or a region of the snapshot.

  // The most GPUs of `type` in one domain of `level` (every GPU, healthy or not).
  std::int32_t domain_gpus(Level level, TypeIx type, RegionIx region) const {
    return at(level, type, region)[0];
  }
  // The most nodes with at least `per_node` GPUs of `type` in one domain of `level`.
  std::int32_t domain_nodes(Level level, TypeIx type, std::int32_t per_node,
                            RegionIx region) const {
    return per_node > kMaxGpusPerNode ? 0 : at(level, type, region)[per_node];
  }
  // The largest NVLink domain inside one node of `type`.
  std::int32_t node_nvlink_gpus(TypeIx type, RegionIx region) const {
    return node_domain_[ix(type, region)];
  }
  // GPUs of `type`, usable or not, and the most any one node of `type` has.
  std::int32_t total_gpus(TypeIx type, RegionIx region) const { return total_[ix(type, region)]; }
  std::int32_t largest_node(TypeIx type, RegionIx region) const {
    return largest_[ix(type, region)];
  }
  // Clusters (gangs never span one).
  std::int32_t cluster_count(RegionIx region) const { return clusters_[scope(region)]; }
  // GPUs of `type` on cordoned or draining nodes, and unhealthy ones on active nodes, for
  // the capacity reason: "8 on cordoned/draining nodes, 1 unhealthy", or empty when there
  // are none (written once per cycle, not once per pending job).
  const std::string& out_of_service_text(TypeIx type, RegionIx region) const {
    return out_of_service_[ix(type, region)];
  }

 private:
  // [0]: most GPUs in one domain; [k], k >= 1: most nodes with at least k GPUs in one.
  using Row = std::array<std::int32_t, kMaxGpusPerNode + 1>;

  // Scope 0 is the fleet; scope 1 + r is region r, kept only when there are several (with
  // one region, the region is the fleet).
  std::size_t scope(RegionIx region) const {
    return scopes_ == 1 || region < 0 ? 0 : static_cast<std::size_t>(region) + 1;
  }
  // Calls f(scope) for each scope a domain or node of `region` counts in: the fleet's, and
  // its region's when that is kept apart.
  template <typename F>
  void for_scopes(RegionIx region, F f) const {
    f(std::size_t{0});
    if (scopes_ > 1 && region >= 0) f(static_cast<std::size_t>(region) + 1);
  }
  std::size_t ix(TypeIx type, RegionIx region) const {
    return scope(region) * types_ + static_cast<std::size_t>(type);
  }
  const Row& at(Level level, TypeIx type, RegionIx region) const {
    return rows_[(scope(region) * kLevelCount + static_cast<std::size_t>(level)) * types_ +
                 static_cast<std::size_t>(type)];
  }

  std::size_t types_;
  std::size_t scopes_;
  std::vector<Row> rows_;  // [(scope * levels + level) * types + type]
  // [scope * types + type]
  std::vector<std::int32_t> node_domain_, total_, largest_;
  std::vector<std::int32_t> clusters_;  // [scope]
  std::vector<std::string> out_of_service_;
};

}  // namespace corral::sched::detail
