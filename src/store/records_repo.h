// RecordRepo: append-mostly history that nothing schedules from directly: job events,
// successful runs (for run-time estimates), and telemetry: raw samples and their
// 1-minute and 1-hour rollups, and the usage history (the ledger is LedgerRepo's).
// Each has its own table, so a telemetry or billing backlog never touches desired state
// (ARCHITECTURE.md's state table).
//
// One of the repositories store::Tx is made of (store.h).
// Thread safety: as Tx (used only by the thread running the transaction, only during it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/result.h"
#include "core/status.h"
#include "core/time.h"
#include "core/topology.h"

namespace corral::store {

struct JobEventRow {
  std::int64_t id = 0;  // assigned by the store
  core::JobId job;
  core::Time time;
  std::string kind;  // "submitted", "placed", "pending", "cancelled", ...
  std::string message;
};

// One successful run of a job: how long its attempts held GPUs, for run-time estimates.
struct RunRow {
  core::TenantId tenant;
  std::string name;
  core::JobId job;
  core::Duration run{0};
  core::Time finished_at;
};

// One telemetry sample of one GPU (telemetry_raw; docs/telemetry.md).
struct TelemetryRow {
  core::NodeId node;
  std::int32_t gpu_index = 0;
  core::Time time;
  double utilization = 0;  // 0..1
  std::int64_t memory_used_mib = 0;
  double power_watts = 0;
  std::int32_t temperature_c = 0;
  std::vector<std::string> throttle;  // clock throttle reasons, sorted
  std::int64_t ecc_corrected = 0;
  std::int64_t ecc_uncorrected = 0;

  friend bool operator==(const TelemetryRow&, const TelemetryRow&) = default;
};

enum class TelemetryResolution { kMinute, kHour };
// The bucket length of a resolution, in ms.
inline std::int64_t resolution_ms(TelemetryResolution resolution) {
  return resolution == TelemetryResolution::kMinute ? 60'000 : 3'600'000;
}

// One GPU's samples of one minute or hour (telemetry_rollup_1m, telemetry_rollup_1h),
// added to as the samples are written. `start` is the bucket's start (aligned).
struct TelemetryRollupRow {
  core::NodeId node;
  std::int32_t gpu_index = 0;
  core::Time start;
  std::int64_t samples = 0;
  double avg_utilization = 0;
  double max_utilization = 0;
  double avg_power_watts = 0;
  double max_power_watts = 0;
  std::int32_t max_temperature_c = 0;
  std::int64_t max_memory_used_mib = 0;
  std::int64_t throttled_samples = 0;  // samples with any throttle reason
  std::int64_t max_ecc_uncorrected = 0;
};

// Everything older than these is deleted (delete_telemetry_before).
struct TelemetryCutoffs {
  core::Time raw;     // samples with time < raw
  core::Time minute;  // 1-minute rollups starting before this
  core::Time hour;    // 1-hour rollups starting before this
};

// One sample of a tenant's (or, tenant "*", the cluster's) use (usage_history; the
// dashboard's over-time views). Counts of events are over the interval ending at `time`.
struct UsageSampleRow {
  core::Time time;
  std::string tenant;      // "*": the whole cluster
  double gpus = 0;         // "*": GPUs registered; a tenant: its guarantees, summed (3.5)
  double allocated = 0;    // GPUs held, a share counting its fraction
  double borrowed = 0;     // of those, beyond its guarantee
  double utilization = 0;  // mean over its allocated GPUs, 0..1
  double share = 0;        // fair share of the fleet, 0..1
  double usage_gpus = 0;   // decayed usage, as average GPUs
  std::int64_t pending = 0;
  std::int64_t preemptions = 0;
  std::int64_t restarts = 0;
  std::int64_t placed = 0;       // jobs placed
  std::int64_t wait_ms_sum = 0;  // their queue waits, summed

  friend bool operator==(const UsageSampleRow&, const UsageSampleRow&) = default;
};

class RecordRepo {
 public:
  virtual ~RecordRepo() = default;

  virtual core::Status append_job_event(const JobEventRow& event) = 0;
  virtual core::Result<std::vector<JobEventRow>> list_job_events(core::JobId job) = 0;  // by id
  // Records a successful run, keeping the latest `keep` of its (tenant, name).
  virtual core::Status insert_run(const RunRow& row, std::int32_t keep) = 0;
  // The recorded runs of the given job names (any tenant), latest first per name.
  virtual core::Result<std::vector<RunRow>> list_runs(const std::vector<std::string>& names) = 0;

  // Telemetry (docs/telemetry.md): inserts the samples into telemetry_raw and adds each
  // to its GPU's 1-minute and 1-hour rollup. A sample is one GPU's reading at one time: one
  // stored already (an agent's retried batch), or twice in `rows`, is added once.
  virtual core::Status insert_telemetry_batch(const std::vector<TelemetryRow>& rows) = 0;
  // One GPU's raw samples with from <= time < to, by time.
  virtual core::Result<std::vector<TelemetryRow>> list_telemetry(const core::NodeId& node,
                                                                 std::int32_t gpu_index,
                                                                 core::Time from,
                                                                 core::Time to) = 0;
  // Rollups starting in [from, to), by (node, gpu, start); only `node`'s when given.
  virtual core::Result<std::vector<TelemetryRollupRow>> list_telemetry_rollup(
      TelemetryResolution resolution, core::Time from, core::Time to,
      const std::optional<core::NodeId>& node) = 0;
  // Deletes what is older than the cutoffs; returns how many rows went (all tables).
  virtual core::Result<std::int64_t> delete_telemetry_before(const TelemetryCutoffs& cutoffs) = 0;

  // Usage history: a sample is unique per (tenant, time); inserting one again replaces it.
  virtual core::Status insert_usage_samples(const std::vector<UsageSampleRow>& rows) = 0;
  // Samples with from <= time < to, by (time, tenant); only `tenant`'s when given.
  virtual core::Result<std::vector<UsageSampleRow>> list_usage_samples(
      core::Time from, core::Time to, const std::optional<std::string>& tenant) = 0;
  // Deletes the samples with time < `before`; returns how many went.
  virtual core::Result<std::int64_t> delete_usage_samples_before(core::Time before) = 0;
};

}  // namespace corral::store
