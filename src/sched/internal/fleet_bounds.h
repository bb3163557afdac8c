// FleetBounds: what the fleet could ever hold, were every GPU free and healthy, and how
// many GPUs are out of service; per GPU type, derived once per cycle from the plan's
// (fixed) domain lists. It tells a shape that never fits this fleet from one that does
// not fit now, and lets the capacity reason count GPUs that are not free for reasons
// other than running work.
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

  // The most GPUs of `type` in one domain of `level` (every GPU, healthy or not).
  std::int32_t domain_gpus(Level level, TypeIx type) const { return at(level, type)[0]; }
  // The most nodes with at least `per_node` GPUs of `type` in one domain of `level`.
  std::int32_t domain_nodes(Level level, TypeIx type, std::int32_t per_node) const {
    return per_node > kMaxGpusPerNode ? 0 : at(level, type)[per_node];
  }
  // The largest NVLink domain inside one node of `type`.
  std::int32_t node_nvlink_gpus(TypeIx type) const { return node_domain_[type]; }
  // GPUs of `type` on cordoned or draining nodes, and unhealthy ones on active nodes, for
  // the capacity reason: "8 on cordoned/draining nodes, 1 unhealthy", or empty when there
  // are none (written once per cycle, not once per pending job).
  const std::string& out_of_service_text(TypeIx type) const { return out_of_service_[type]; }

 private:
  // [0]: most GPUs in one domain; [k], k >= 1: most nodes with at least k GPUs in one.
  using Row = std::array<std::int32_t, kMaxGpusPerNode + 1>;
  const Row& at(Level level, TypeIx type) const {
    return rows_[static_cast<std::size_t>(level) * types_ + static_cast<std::size_t>(type)];
  }

  std::size_t types_;
  std::vector<Row> rows_;  // [level * types + type]
  std::vector<std::int32_t> node_domain_;
  std::vector<std::string> out_of_service_;
};

}  // namespace corral::sched::detail
