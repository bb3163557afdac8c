// Training runs (docs/runs.md): a job is its run. What a run records beyond the job row,
// written where the facts arise: each attempt as it is placed (its GPUs, their topology
// level, the checkpoint it restores from), and the metric points and artifacts its
// workers report through their agent.
//
// Thread safety: free functions over one transaction.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/agent_protocol.h"
#include "core/checkpoint.h"
#include "core/job_spec.h"
#include "core/result.h"
#include "core/time.h"
#include "sched/decisions.h"
#include "store/store.h"

namespace corral::server {

// A run keeps at most this many metric points (distinct name and step); a report past it
// is refused whole, so the run's series stay complete up to where they stop.
inline constexpr std::int64_t kMaxRunMetricPoints = 1'000'000;

// The newest checkpoint an earlier attempt wrote: attempt `attempt` restores from it, and
// it cannot move while the attempt runs (the attempt's own do not count). Null: step 0.
const core::Checkpoint* restore_point(const std::vector<core::Checkpoint>& oldest_first,
                                      std::int32_t attempt);

// Records attempt `attempt` of `job` as placed on `gpus` (sorted) at `now`, held at
// topology level `packed` (nullopt: the level recorded for the attempt before).
core::Status record_run_attempt(store::Tx& tx, core::JobId job, std::int32_t attempt,
                                const core::GpuTypeId& gpu_type,
                                const std::vector<sched::GpuRef>& gpus,
                                std::optional<core::PackLevel> packed, core::Time now);

// What a report added to its run: new (name, step) points, and newly recorded artifacts.
// A retry adds none of either.
struct RunReportTaken {
  std::int64_t points = 0;
  std::vector<core::ArtifactReport> artifacts;
};

// Writes a report of attempt `attempt` of `job` (the caller checked the attempt may
// report). FailedPrecondition past kMaxRunMetricPoints; AlreadyExists for an artifact uri
// the run holds with another digest.
core::Result<RunReportTaken> record_run_report(store::RunRepo& runs, core::JobId job,
                                               std::int32_t attempt, const core::RunReport& report,
                                               core::Time now);

}  // namespace corral::server
