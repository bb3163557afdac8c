// corral-sim's snapshot adapter: the fleet model's state in, a complete
// sched::SnapshotInput out.
//
// One contract, two adapters (ARCHITECTURE.md, "The scheduling cycle"): corrald fills the
// same SnapshotInput from its store (server/cycle/snapshot_from_store.h), and
// tests/server/cycle/snapshot_contract_test.cc builds one small cluster through both and
// compares the results field by field. A field added to the snapshot must be filled here
// and there, or that test fails.
//
// The engine (engine.h) keeps one ModelJob per job and moves it through its states; this
// adapter derives what the scheduler sees from it: when the last checkpoint was written
// (from the job's interval and the runtime model's checkpoint cost), the service attained
// over every attempt, the run-time estimate from the tenant's earlier runs of the name.
//
// Thread safety: free functions over values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/ids.h"
#include "core/reservation.h"
#include "core/tenant.h"
#include "core/time.h"
#include "core/topology.h"
#include "sched/estimate.h"
#include "sched/snapshot.h"

namespace corral::sim {

enum class JobState { kFuture, kPending, kRunning, kDone };

// One job of the fleet model. The engine owns these; the first block is what the
// scheduler's view derives from, the second the engine's own bookkeeping.
struct ModelJob {
  sched::JobRequest request;
  std::string name;  // the trace's, for run-time history
  JobState state = JobState::kFuture;
  std::int64_t queued_at_ms = 0;  // pending: when it (re-)entered the queue
  // The running attempt.
  std::int64_t run_start_ms = 0;
  std::int64_t restore_ms = 0;  // start-up and restore time paid at the start of it
  std::vector<sched::GpuRef> gpus;
  bool borrowed = false;
  // Over every attempt.
  std::int32_t attempts = 0;      // starts so far
  std::int32_t preemptions = 0;   // decide()'s preemptions of it so far
  std::int64_t ended_gpu_ms = 0;  // GPU-milliseconds held by attempts that ended

  std::int64_t remaining_work_ms = 0;  // base run time left, at ideal packing
  double slowdown = 1.0;
  core::GpuTypeId type;
  std::int32_t generation = 0;  // bumped on every start; stale completions are ignored
  std::int32_t tenant = 0;      // index into the run's tenants
  // Workflows (core::ArraySpec, core::Dependency): the array it is a task of (its first
  // task's id; an array's tasks are consecutive jobs) and its index; the jobs it waits
  // for, by id; and how it ended.
  core::JobId array_job{0};
  std::int32_t array_index = 0;
  std::vector<core::Dependency> depends_on;
  bool cancelled = false;           // done: abandoned (a dependency never met), not succeeded
  std::int64_t first_start_ms = 0;  // when it was first placed (attempts > 0)
  std::int64_t ended_ms = 0;        // done: when
  // A trial of a sweep (TraceJob::trial): the rungs it passed; stopped by its sweep's
  // early-stopping rule (done, cancelled).
  bool sweep_trial = false;
  std::int32_t rungs_passed = 0;
  bool stopped_early = false;
};

// How checkpoints are written, for when a running job last wrote one (engine.h's
// RuntimeModel holds the same figures).
struct CheckpointModel {
  std::int64_t cost_ms = 0;  // wall time each write stalls the job
  bool on_stop = false;      // a stop keeps all work: as if checkpointed at every instant
};

using sched::RunHistory;

// The fleet part of the model.
struct FleetFacts {
  const std::vector<core::GpuType>& gpu_types;
  const std::vector<core::Node>& nodes;  // health as it stands now
  const std::vector<core::Rack>& racks;
  const std::vector<core::Tenant>& tenants;
  const std::vector<core::Reservation>& reservations;
};

// What an attempt's `held` milliseconds went to. It pays `restore` first, then works in
// periods of `interval` of work followed by `cost` of checkpoint writing; a checkpoint
// counts once written. `partial` is the work since the last written checkpoint.
struct AttemptSplit {
  std::int64_t restart = 0;
  std::int64_t saved = 0;       // work covered by written checkpoints
  std::int64_t checkpoint = 0;  // writing, an unfinished write included
  std::int64_t partial = 0;
  std::int64_t written = 0;          // checkpoints written
  std::int64_t last_written_at = 0;  // offset of the last write's end from the attempt start
};
AttemptSplit split_attempt(std::int64_t held, std::int64_t restore, std::int64_t interval,
                           std::int64_t cost);

// When the running attempt last wrote a checkpoint, if it has.
std::optional<core::Time> last_checkpoint(const ModelJob& j, const CheckpointModel& m,
                                          std::int64_t now_ms);
// GPU-seconds of service over every attempt, the running one included.
double attained_gpu_seconds(const ModelJob& j, std::int64_t now_ms);

// A sweep trial's attained service as the scheduler sees it: its whole sweep's, every
// trial's GPU-seconds (a sweep is one workload to fair share, as corrald counts it).
double sweep_attained_gpu_seconds(const ModelJob& j, const std::vector<ModelJob>& jobs,
                                  std::int64_t now_ms);

// The scheduler's view of one running and one pending job.
sched::RunningJob running_job(const ModelJob& j, const CheckpointModel& m, const RunHistory& runs,
                              std::int64_t now_ms);
// `jobs`: every job of the model, by id - 1, for the facts of j's dependencies.
sched::PendingJob pending_job(const ModelJob& j, const std::vector<ModelJob>& jobs,
                              const RunHistory& runs, std::int64_t now_ms);

// The facts of j's dependencies (sched::DependencyFact), as corrald reads them from its
// store (server/controllers/job_dependencies.h).
std::vector<sched::DependencyFact> dependency_facts(const ModelJob& j,
                                                    const std::vector<ModelJob>& jobs);

// The whole SnapshotInput at `now_ms`: the fleet, usage (decayed to now; tenants with
// none left out), and every pending and running job in id order.
sched::SnapshotInput snapshot_from_fleet(const FleetFacts& fleet,
                                         const std::map<core::TenantId, double>& usage,
                                         const std::vector<ModelJob>& jobs,
                                         const CheckpointModel& m, const RunHistory& runs,
                                         std::int64_t now_ms);

}  // namespace corral::sim
