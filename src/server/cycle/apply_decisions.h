// Applying one cycle's sched::Decisions to the store: corrald's one way to do it (the
// simulator has its own, over its fleet model, in sim/engine.cc).
//
// In the caller's transaction, already fenced by the shard's epoch:
//   1. preemptions: a victim run by agents goes to `preempting` and keeps its GPUs until
//      they confirm its workers are gone, asked to stop within the decision's grace and
//      counted against max_preemptions_per_job; one placed only on agent-less nodes
//      (nothing runs there) is requeued and released at once (lifecycle.h);
//   2. resizes, by checkpoint and restart: a `running` job is stopped the same way with
//      its new size recorded (elastic_targets), and placed again at that size once
//      requeued; a `launching` job on agent-less nodes has its allocation changed in
//      place;
//   3. placements: pending -> admitted -> launching (core/job_phase.h) with one
//      allocation row per GPU, unless the placement waits for a victim still stopping.
// Pending jobs' reasons are not written here: the scheduler loop writes them after the
// commit, in short transactions of their own.
//
// Thread safety: a free function over the caller's Tx.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "core/result.h"
#include "core/time.h"
#include "sched/decisions.h"
#include "server/controllers/lifecycle.h"
#include "store/store.h"

namespace corral::server {

struct ApplyContext {
  std::int64_t epoch = 0;  // written into each allocation row
  core::Time now;
  const std::map<std::int64_t, std::int32_t>& elastic_targets;  // from the cycle's read
  AssignmentBoard& board;
  SpecCache& specs;
  const AgentSettings& settings;
};

// What the transaction did, for the loop once it commits.
struct Applied {
  std::vector<core::JobId> placed;
  std::vector<core::JobId> preempted;  // asked to stop, or requeued at once
  std::vector<core::JobId> resized;
  // Jobs that left the pending queue (placed, or found not pending any more).
  std::vector<std::int64_t> left_queue;
  // Jobs stopped at once (nothing of them ran) and pending again, as now stored.
  std::vector<store::JobRow> back_in_queue;
  Effects fx;  // for apply_effects() after the commit
};

core::Result<Applied> apply_decisions(store::Tx& tx, const sched::Decisions& d,
                                      const ApplyContext& ctx);

}  // namespace corral::server
