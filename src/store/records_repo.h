// RecordRepo: append-mostly history that nothing schedules from directly: job events,
// successful runs (for run-time estimates), and telemetry samples (the ledger is
// LedgerRepo's).
// Each has its own table, so a telemetry or billing backlog never touches desired state
// (ARCHITECTURE.md's state table).
//
// One of the repositories store::Tx is made of (store.h).
// Thread safety: as Tx (used only by the thread running the transaction, only during it).
#pragma once

#include <cstdint>
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

struct TelemetrySample {
  core::NodeId node;
  std::int32_t gpu_index = 0;
  core::Time time;
  double utilization = 0;  // 0..1
  double power_watts = 0;
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
  virtual core::Status insert_telemetry(const TelemetrySample& sample) = 0;
};

}  // namespace corral::store
