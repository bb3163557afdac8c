#include "sched/internal/lend.h"

#include <algorithm>

namespace corral::sched::detail {

bool may_borrow_promise(const PendingJob& job, const PendingJob& head, core::Time at,
                        const SchedulerConfig& config, core::Time now) {
  const JobRequest& r = job.request;
  if (!config.preemption.enabled || config.backfill || r.checkpoint_interval.count() <= 0 ||
      r.tier > head.request.tier || job.preemptions >= config.preemption.max_preemptions_per_job) {
    return false;
  }
  const core::Duration pays = r.checkpoint_interval + r.restore_time;
  return now + std::max(pays, config.preemption.min_runtime_for(r.tier)) <= at;
}

}  // namespace corral::sched::detail
