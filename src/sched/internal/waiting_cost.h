// What waiting costs a blocked job, against which a preemption that must pay for itself
// (preempt.h, must_pay) is weighed: the job's GPUs times how long until running jobs end,
// by their estimates, and make room for it (docs/scheduling.md, part 4).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "sched/internal/backfill.h"

namespace corral::sched::detail {

// One per decide() call: it keeps, per GPU type, the GPUs wanted by the jobs left waiting
// for room so far in queue order, and the running jobs' expected ends (built on first use).
class WaitingCost {
 public:
  explicit WaitingCost(const ClusterSnapshot& s)
      : ahead_(s.gpu_types().size(), 0), ends_(s.gpu_types().size()) {}

  // A job in line was left waiting for `gpus` GPUs of `type`.
  void left_waiting(TypeIx type, std::int32_t gpus) { ahead_[type] += gpus; }

  // GPU-seconds: `request.gpus` times the wait until room for it where it would be placed
  // (plan_start, topology included). `behind_queue` (a job taking GPUs across tenants: a
  // reclaim, a due promise): until room for it behind the jobs already left waiting for
  // its type (GPU counts only), if that comes later, since they would take the GPUs that
  // free first; a pause inside a tenant only reorders the tenant's own work and is weighed
  // alone. Infinite when no room would come. Exact up to `enough`; past it, any figure
  // above `enough` (the count alone settles it and the placement search is spared).
  double gpu_seconds(Plan& plan, const RunningIndex& running, const PlaceRequest& request,
                     const std::vector<std::uint64_t>& forbidden, core::Duration grace,
                     core::Time now, bool behind_queue, double enough);

 private:
  std::vector<std::int64_t> ahead_;
  std::vector<std::optional<std::vector<std::pair<core::Time, std::int32_t>>>> ends_;
};

}  // namespace corral::sched::detail
