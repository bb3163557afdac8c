// CheckpointRepo: checkpoint metadata (job, attempt, step, uri, bytes, checksum, time),
// written by agents on workers' behalf and read by the scheduler (preemption cost) and the
// launcher (restore). The bytes live at the uri, never in the database.
//
// One of the repositories store::Tx is made of (store.h).
// Thread safety: as Tx (used only by the thread running the transaction, only during it).
#pragma once

#include <optional>
#include <vector>

#include "core/checkpoint.h"
#include "core/ids.h"
#include "core/result.h"
#include "core/status.h"
#include "core/time.h"

namespace corral::store {

// The latest confirmed checkpoint of a job holding GPUs.
struct CheckpointTimeRow {
  core::JobId job;
  core::Time time;
};

// The newest throughput a job's workers reported on one GPU type at one size.
struct ThroughputRow {
  core::JobId job;
  core::GpuTypeId gpu_type;
  std::int32_t gpus = 0;
  double throughput = 0;
  core::Time time;  // of the report
};

class CheckpointRepo {
 public:
  virtual ~CheckpointRepo() = default;

  virtual core::Status insert_checkpoint(const core::Checkpoint& checkpoint) = 0;
  virtual core::Result<std::optional<core::Checkpoint>> latest_checkpoint(core::JobId job) = 0;
  // Every checkpoint of `job`, oldest first (by time, then insertion).
  virtual core::Result<std::vector<core::Checkpoint>> list_checkpoints(core::JobId job) = 0;
  // The time of the newest checkpoint of each job that holds an active allocation, by job:
  // one query for the whole snapshot, not one per job.
  virtual core::Result<std::vector<CheckpointTimeRow>> list_holders_checkpoint_times() = 0;
  // Replaces the job's figure at (type, size) with `row`.
  virtual core::Status record_throughput(const ThroughputRow& row) = 0;
  // For every job not yet ended, its figure at each (type, size) it ran at, by job, type,
  // then GPUs: one query for the whole snapshot, a row per size.
  virtual core::Result<std::vector<ThroughputRow>> list_observed_throughput() = 0;
};

}  // namespace corral::store
