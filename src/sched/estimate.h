// Run-time estimates: what a job is expected to take, for the planned starts of the jobs
// that wait behind it (docs/scheduling.md, "Planned starts").
#pragma once

#include <vector>

#include "core/time.h"
#include "sched/snapshot.h"

namespace corral::sched {

// How many of a tenant's recent runs of one job name an estimate looks at.
inline constexpr std::size_t kEstimateRuns = 20;

// The job's own expectedRuntime when it has one; else the median of `recent_runs` (its
// tenant's successful runs of jobs with the same name, latest first; only the first
// kEstimateRuns count), which one outlier does not move; else none (max_runtime stands).
// corrald and corral-sim both call it, so both forecast alike.
RuntimeEstimate estimate_runtime(core::Duration spec_expected,
                                 std::vector<core::Duration> recent_runs);

}  // namespace corral::sched
