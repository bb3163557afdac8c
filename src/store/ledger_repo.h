// LedgerRepo: the cost ledger (docs/ledger.md) and the GPU state history it is accrued
// from. Entries are append-only and keyed: writing an entry whose key exists writes
// nothing, so a period accrued twice (after a crash, or by two replicas) is in the ledger
// once. Daily sums are kept beside the entries, in the same transaction, for chargeback.
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

namespace corral::store {

// One ledger entry: a GPU's milliseconds of one bucket, for one job (0: none) and tenant
// ("": nobody), in the accrual period [period_start, period_end).
struct LedgerRow {
  std::string key;  // idempotency key
  core::NodeId node;
  std::int32_t gpu_index = 0;
  core::GpuTypeId gpu_type;
  std::string bucket;  // ledger::to_string(Bucket)
  core::TenantId tenant;
  core::JobId job;
  core::Time period_start;
  core::Time period_end;
  std::int64_t gpu_ms = 0;
  std::int64_t amount_micros = 0;
  friend bool operator==(const LedgerRow&, const LedgerRow&) = default;
};

// Entries summed by (UTC day of their period, tenant, job, GPU type, bucket).
struct LedgerSum {
  core::Time day;  // midnight UTC
  core::TenantId tenant;
  core::JobId job;
  core::GpuTypeId gpu_type;
  std::string bucket;
  std::int64_t gpu_ms = 0;
  std::int64_t amount_micros = 0;
  friend bool operator==(const LedgerSum&, const LedgerSum&) = default;
};

// Entries whose period starts in [from, to), of one tenant or job when given.
struct LedgerQuery {
  core::Time from;
  core::Time to;
  std::optional<core::TenantId> tenant;
  std::optional<core::JobId> job;
};

// A stretch of time when a GPU (or, gpu_index -1, every GPU of a node) was in a state
// the ledger bills apart: "unhealthy" (a failed GPU, a lost node) or "drained" (the node
// cordoned or draining). No end: still so.
struct GpuStateSpan {
  core::NodeId node;
  std::int32_t gpu_index = -1;
  std::string kind;
  std::string reason;
  core::Time start;
  std::optional<core::Time> end;
  friend bool operator==(const GpuStateSpan&, const GpuStateSpan&) = default;
};

class LedgerRepo {
 public:
  virtual ~LedgerRepo() = default;

  // Writes the entries whose key is new and adds them to the daily sums; returns how many
  // were new.
  virtual core::Result<std::int64_t> append_ledger(const std::vector<LedgerRow>& rows) = 0;
  // Entries matching `query`, by (period_start, node, gpu_index, key).
  virtual core::Result<std::vector<LedgerRow>> list_ledger(const LedgerQuery& query) = 0;
  // The same entries summed per day, tenant, job, GPU type and bucket (whole days from
  // the daily sums, the days `query` cuts from the entries); by day, then the rest.
  virtual core::Result<std::vector<LedgerSum>> sum_ledger(const LedgerQuery& query) = 0;
  // Every period ending at or before this is accrued (epoch 0: none yet).
  virtual core::Result<core::Time> accrued_until() = 0;
  // Moves the watermark forward to `until` (never back).
  virtual core::Status set_accrued_until(core::Time until) = 0;

  // Opens a span unless one of the same (node, gpu_index, kind) is open.
  virtual core::Status open_gpu_state(const GpuStateSpan& span) = 0;
  // Ends the open span of (node, gpu_index, kind) at `end`, if there is one.
  virtual core::Status close_gpu_state(const core::NodeId& node, std::int32_t gpu_index,
                                       const std::string& kind, core::Time end) = 0;
  // Spans overlapping [from, to), by (node, gpu_index, start).
  virtual core::Result<std::vector<GpuStateSpan>> list_gpu_states(core::Time from,
                                                                  core::Time to) = 0;
};

}  // namespace corral::store
