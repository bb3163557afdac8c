// MiniCluster: decide() in a loop, for scenario and property tests that span many
// cycles. Each step builds a snapshot, decides, asserts check() finds nothing, and applies
// the decisions the way the server would: placements start now, preempted jobs go back
// to the queue (counting the preemption), resizes change a job's GPUs; running jobs
// finish when their runtime is up and checkpoint every interval.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "sched/check.h"
#include "sched/decide.h"

namespace corral::testing {

class MiniCluster {
 public:
  explicit MiniCluster(sched::SnapshotInput fleet) : state_(std::move(fleet)) {}

  // Queues a job that will run for `runtime` once started (capped at its max runtime).
  void submit(sched::PendingJob job, core::Duration runtime);

  // One scheduling cycle at `now`; returns its decisions. Violations of check() are
  // returned in `violations` (tests assert it stays empty).
  sched::Decisions step(const sched::SchedulerConfig& config, core::Time now,
                        std::vector<std::string>& violations);

  const sched::SnapshotInput& state() const { return state_; }
  // Per job: when it first started, if it has.
  const std::map<core::JobId, core::Time>& first_start() const { return first_start_; }
  const std::map<core::JobId, core::Time>& finished() const { return finished_; }
  // GPU-seconds of work lost to preemptions (since each victim's last checkpoint).
  double lost_gpu_seconds() const { return lost_gpu_seconds_; }
  std::int64_t preemptions() const { return preemptions_; }

 private:
  sched::SnapshotInput state_;
  std::map<core::JobId, core::Duration> remaining_;  // work left per job
  std::map<core::JobId, core::Time> first_start_;
  std::map<core::JobId, core::Time> finished_;
  double lost_gpu_seconds_ = 0;
  std::int64_t preemptions_ = 0;
  core::Time last_step_{};
};

}  // namespace corral::testing
