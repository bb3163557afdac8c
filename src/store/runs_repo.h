// RunRepo: what a job's run keeps beyond its job row (docs/runs.md): each attempt's GPUs,
// topology and restore point as it was placed, the metric points and artifacts its
// workers report, and the run a job reproduces. A job is its run: the run's id is the
// job's, its attempts are the job's attempts.
//
// One of the repositories store::Tx is made of (store.h).
// Thread safety: as Tx (used only by the thread running the transaction, only during it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/agent_protocol.h"
#include "core/ids.h"
#include "core/result.h"
#include "core/status.h"
#include "core/time.h"

namespace corral::store {

// An attempt as it was placed: recorded with its allocations, in their transaction.
struct RunAttemptRow {
  core::JobId job;
  std::int32_t attempt = 0;
  core::GpuTypeId gpu_type;
  std::vector<std::string> gpus;  // "node:index", by node then index
  std::string packed;             // core::PackLevel's name: the tightest level holding them
  std::string restored_from;      // the checkpoint it restores from; empty: from step 0
  std::int64_t restored_step = 0;
  core::Time started_at;
};

struct MetricRow {
  std::string name;
  std::int64_t step = 0;
  double value = 0;
  std::int32_t attempt = 0;  // the attempt that reported it last
  core::Time at;
};

// One metric of a run: how many points, and its newest.
struct MetricSummary {
  std::string name;
  std::int64_t points = 0;
  std::int64_t last_step = 0;
  double last_value = 0;
};

struct ArtifactRow {
  core::JobId job;
  std::int32_t attempt = 0;
  core::ArtifactReport artifact;
  core::Time at;
};

// One verdict of ASHA's stopping rule on a trial of a sweep at one rung (sched/asha.h).
struct SweepRungRow {
  core::JobId sweep;  // the sweep's id: its array's, its first trial's
  core::JobId trial;
  std::int32_t rung = 0;
  std::int32_t seq = 0;   // the order the sweep's trials reached this rung, 0 first
  std::int64_t step = 0;  // the step judged: the trial's first reported at or past the rung
  double value = 0;
  bool continued = true;
  core::Time at;
};

class RunRepo {
 public:
  virtual ~RunRepo() = default;

  // Writes the attempt's row, replacing one already there (a resize before launch).
  virtual core::Status put_run_attempt(const RunAttemptRow& row) = 0;
  virtual core::Result<std::vector<RunAttemptRow>> list_run_attempts(core::JobId job) = 0;

  // Writes each point, replacing the value already at its (name, step): a retried report
  // adds nothing. Returns how many (name, step) keys were new to the run.
  virtual core::Result<std::int64_t> put_metrics(core::JobId job, std::int32_t attempt,
                                                 const std::vector<core::MetricPoint>& points,
                                                 core::Time at) = 0;
  // The run's points, kept as a total by put_metrics (no rows counted).
  virtual core::Result<std::int64_t> count_metric_points(core::JobId job) = 0;
  // The points of `job` (only metric `name`'s when it is not empty) after (after_name,
  // after_step), by name then step, at most `limit`.
  virtual core::Result<std::vector<MetricRow>> list_metrics(core::JobId job, std::string_view name,
                                                            std::string_view after_name,
                                                            std::int64_t after_step,
                                                            std::int32_t limit) = 0;
  virtual core::Result<std::vector<MetricSummary>> summarize_metrics(core::JobId job) = 0;

  // true: recorded; false: the run already has this uri with this digest (a retry).
  // AlreadyExists when it has the uri with another digest or size.
  virtual core::Result<bool> insert_artifact(const ArtifactRow& row) = 0;
  // By report time, then uri.
  virtual core::Result<std::vector<ArtifactRow>> list_artifacts(core::JobId job) = 0;

  // The last point of metric `name` of each task of array `array` that reported one, by
  // task id.
  virtual core::Result<std::vector<std::pair<core::JobId, MetricRow>>> list_last_metric(
      core::JobId array, std::string_view name) = 0;

  // true: recorded; false: the trial has a verdict at this rung already (a retried
  // report). Aborted when another verdict took this (sweep, rung, seq) meanwhile.
  virtual core::Result<bool> insert_sweep_rung(const SweepRungRow& row) = 0;
  // The sweep's verdicts at `rung` (every rung's: nullopt) by rung, then seq.
  virtual core::Result<std::vector<SweepRungRow>> list_sweep_rungs(
      core::JobId sweep, std::optional<std::int32_t> rung) = 0;
  // One trial's verdicts by rung.
  virtual core::Result<std::vector<SweepRungRow>> list_trial_rungs(core::JobId trial) = 0;

  // `job` was submitted as a reproduction of run `of`.
  virtual core::Status set_run_origin(core::JobId job, core::JobId of) = 0;
  virtual core::Result<std::optional<core::JobId>> run_origin(core::JobId job) = 0;
};

}  // namespace corral::store
