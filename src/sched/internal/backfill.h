// EASY backfill: the planned start of the first blocked job in line.
#pragma once

#include <optional>
#include <vector>

#include "sched/internal/place.h"
#include "sched/internal/running.h"

namespace corral::sched::detail {

struct PlannedPlacement {
  core::Time at;
  std::vector<Plan::Take> takes;
  std::int32_t last_ix = -1;  // the running job whose end makes room: the time's basis
};

// How plan_start() takes a running job's end.
enum class EndBy {
  kMaxRuntime,  // start + max runtime: a bound, since a job is stopped at its limit
  kEstimate,    // start + its runtime estimate (JobRequest::expected_runtime()): a forecast
  // The estimate while the job is within it, its max runtime once it overran it: when
  // the cost of waiting is weighed, a job past its estimate is not taken to end now.
  kEstimateOrLimit,
};

// When running job `job` is expected to end: start + max runtime, or + its estimate (with
// kEstimateOrLimit, + max runtime once it overran the estimate); a job already stopping,
// within its grace. Never before `now`.
core::Time expected_end(const RunningJob& job, EndBy end_by, core::Duration grace, core::Time now);

// When `request` can start: running jobs are assumed to end at start + max runtime, or
// + their estimate (jobs already stopping: after their grace), and are released in that
// order until the request fits. GPUs in `forbidden` stay out of reach. Nothing when it
// never fits. Leaves the plan as it found it.
std::optional<PlannedPlacement> plan_start(Plan& plan, const RunningIndex& running,
                                           const PlaceRequest& request,
                                           const std::vector<std::uint64_t>& forbidden,
                                           core::Duration grace, core::Time now, EndBy end_by);

}  // namespace corral::sched::detail
