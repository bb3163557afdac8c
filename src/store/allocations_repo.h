// AllocationRepo: which job attempt holds which GPU (desired state, written by the
// scheduler's decisions and released by the lifecycle and node-health controllers).
// The store refuses a second active allocation of one GPU with a unique index, so a
// scheduler bug cannot double-allocate (ARCHITECTURE.md, "The scheduling cycle" step 3);
// shares of a GPU (share_milli) may be several on one GPU, never more than the whole of it.
//
// One of the repositories store::Tx is made of (store.h).
// Thread safety: as Tx (used only by the thread running the transaction, only during it).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/ids.h"
#include "core/result.h"
#include "core/status.h"
#include "core/time.h"
#include "core/topology.h"

namespace corral::store {

// One GPU, or a share of one, held by one job attempt. Released rows stay as history
// (active = false).
struct AllocationRow {
  std::int64_t id = 0;  // assigned by the store
  core::JobId job;
  std::int32_t attempt = 0;
  core::NodeId node;
  std::int32_t gpu_index = 0;
  core::GpuTypeId gpu_type;
  std::int64_t epoch = 0;  // the scheduler epoch that made it
  bool active = true;
  bool borrowed = false;
  core::Time created_at;
  std::optional<core::Time> released_at;
  // The job's share of the GPU in thousandths (resources.gpuShare); 0: the whole GPU.
  std::int32_t share_milli = 0;

  // What the row holds of its GPU, in thousandths: its share, or 1000.
  std::int64_t milli() const { return share_milli > 0 ? share_milli : 1000; }
};

class AllocationRepo {
 public:
  virtual ~AllocationRepo() = default;

  // AlreadyExists, naming the GPU, when its active rows leave no room for this one: a
  // whole GPU needs it free, a share needs its thousandths free and none of its job's.
  virtual core::Status insert_allocation(const AllocationRow& row) = 0;
  // Marks every active allocation of `job` released at `now`; returns how many. Each
  // released GPU's held time, times its share, is added to the job's attained_gpu_ms (here
  // as below).
  virtual core::Result<std::int64_t> release_allocations(core::JobId job, core::Time now) = 0;
  // Every active allocation, by (node, GPU index).
  virtual core::Result<std::vector<AllocationRow>> list_active_allocations() = 0;
  // The active allocations of `jobs`, by (job, node, GPU index): a few queries however
  // many jobs (a page of the jobs list).
  virtual core::Result<std::vector<AllocationRow>> list_active_allocations_of(
      const std::vector<core::JobId>& jobs) = 0;
  // Every allocation of `job`, released ones included, by id.
  virtual core::Result<std::vector<AllocationRow>> list_allocations(core::JobId job) = 0;
  // Every allocation that held its GPU at some time in [from, to), released ones
  // included, by (node, GPU index, created_at): what the ledger accrues a period from.
  virtual core::Result<std::vector<AllocationRow>> list_allocations_overlapping(core::Time from,
                                                                                core::Time to) = 0;
  // Active allocations on one node, by GPU index.
  virtual core::Result<std::vector<AllocationRow>> list_active_allocations_on(
      const core::NodeId& node) = 0;
  // Marks every active allocation on `node` released (the node was fenced); returns how
  // many.
  virtual core::Result<std::int64_t> release_allocations_on(const core::NodeId& node,
                                                            core::Time now) = 0;
};

}  // namespace corral::store
