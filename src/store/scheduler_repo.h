// SchedulerRepo: what the scheduler loop alone writes: its shard lease with the fencing
// epoch, and the state it keeps across restarts (decayed tenant usage, elastic jobs'
// target sizes; migration 4).
//
// One of the repositories store::Tx is made of (store.h).
// Thread safety: as Tx (used only by the thread running the transaction, only during it).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/ids.h"
#include "core/result.h"
#include "core/status.h"
#include "core/time.h"

namespace corral::store {

struct TenantUsageRow {
  core::TenantId tenant;
  double gpu_seconds = 0;  // weighted GPU-seconds, decayed to as_of
  core::Time as_of;
};

struct ElasticTargetRow {
  core::JobId job;
  std::int32_t gpus = 0;  // the size the job restarts at
};

class SchedulerRepo {
 public:
  virtual ~SchedulerRepo() = default;

  // Fencing. acquire_epoch() bumps and returns the shard's epoch: every earlier holder is
  // fenced. check_epoch() is Aborted with ErrorReason::kStaleEpoch unless `epoch` is
  // current (is_stale_epoch() below: another holder took the shard; not retried), and
  // holds the lease row for the rest of the transaction.
  virtual core::Result<std::int64_t> acquire_epoch(std::string_view shard,
                                                   std::string_view holder) = 0;
  virtual core::Status check_epoch(std::string_view shard, std::int64_t epoch) = 0;

  // put_tenant_usage() replaces the tenant's row.
  virtual core::Status put_tenant_usage(const TenantUsageRow& row) = 0;
  virtual core::Result<std::vector<TenantUsageRow>> list_tenant_usage() = 0;  // by tenant
  // An elastic job's size after a resize until it is placed again; set replaces.
  virtual core::Status set_elastic_target(const ElasticTargetRow& row, core::Time now) = 0;
  virtual core::Status clear_elastic_target(core::JobId job) = 0;
  virtual core::Result<std::vector<ElasticTargetRow>> list_elastic_targets() = 0;  // by job
};

// True when `s` is check_epoch()'s refusal: this holder's epoch is stale, another holder
// took the shard. Decided by the reason alone, never the message.
inline bool is_stale_epoch(const core::Status& s) { return s.is(core::ErrorReason::kStaleEpoch); }

}  // namespace corral::store
