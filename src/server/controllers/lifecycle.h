// The job lifecycle controller: turns what agents report into desired-state changes
// (docs/agent-protocol.md §5). Every function runs inside the caller's store
// transaction and records in `Effects` what must happen after it commits (bump the
// nodes whose desired workers changed, mark stops, wake the scheduler).
//
//   launching --every rank running--> running --every rank exited 0--> succeeded
//   launching/running --a rank failed--> preempting (restarts left: requeue after backoff)
//                                   \--> failed (out of restarts; GPUs held until confirmed)
//   preempting --every rank confirmed gone--> requeued --> pending
//   cancelled/failed with GPUs --every rank confirmed gone--> GPUs released
//
// GPUs return to the free pool ONLY when every rank of the attempt is confirmed gone:
// reported exited by its agent, never started (the agent applied the stop and does not
// list it), or its node fenced (declared lost, so its agent's late writes are refused).
// Never on a timer alone: a slow agent keeps the GPUs held, which is the safe failure.
//
// Agent-less nodes (registered with POST /v1/nodes and never joined by an agent) keep
// the behaviour they had before agents existed: nothing runs there, so a job placed only
// on such nodes stays `launching`, and preempting, draining or cancelling it releases
// its GPUs at once. A job that spans an agent-less node and an agent node is managed:
// its ranks on the agent-less node count as never started, and it never reaches
// `running` (no agent can report them).
//
// Thread safety: free functions over the caller's Tx; AssignmentBoard and SpecCache are
// thread-safe.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/job_spec.h"
#include "core/result.h"
#include "core/status.h"
#include "core/time.h"
#include "server/base/log.h"
#include "server/base/metrics.h"
#include "server/base/settings.h"
#include "server/base/spec_cache.h"
#include "server/controllers/assignment_board.h"
#include "server/controllers/effects.h"
#include "server/controllers/scheduler_signals.h"
#include "store/store.h"

namespace corral::server {

// Restart backoff after `restarts` failures: base x 2^(restarts-1), capped.
core::Duration restart_backoff(const AgentSettings& settings, std::int32_t restarts);

struct LifecycleContext {
  AssignmentBoard& board;
  const AgentSettings& settings;
  core::Time now;
  Effects& fx;
  // The jobs' decoded specs. A job's entry is forgotten when its GPUs are released, even
  // in a transaction that is retried after: that costs one decode, nothing else.
  SpecCache& specs;
};

// Advances one job from the reports stored so far (start, finish, gang failure,
// confirmed stop and release). Safe to call for any job, any number of times.
core::Status reconcile_job(store::Tx& tx, const LifecycleContext& ctx, core::JobId job);

// Whether any node of the job's active allocations has an agent (joined at least once).
core::Result<bool> is_managed(store::AgentRepo& agents,
                              const std::vector<store::AllocationRow>& allocs);

// How a stop is asked: within what grace (0: the agents' stop_grace_ms), and whether it is
// one of the scheduler's preemptions (counted against max_preemptions_per_job).
struct StopRequest {
  std::string reason;
  core::Duration grace{0};
  bool counts_as_preemption = false;
  // The job event's kind: an elastic resize is a stop too, but not a preemption, and its
  // event says so ("resizing", with the sizes in its message).
  std::string event = "preempted";
};

// Asks a launching or running job to checkpoint and stop (preempting), or, when no
// agent runs it, requeues it at once and releases its GPUs. Appends the event.
core::Status preempt_job(store::Tx& tx, const LifecycleContext& ctx, const store::JobRow& job,
                         const StopRequest& stop);

// Cancels a job that has not ended, with `note` as its reason. Agents are asked to stop
// its ranks (its GPUs stay held until they confirm, as for every stop); when no agent
// runs it, its GPUs are released at once. FailedPrecondition once it has ended, Aborted
// (raced) when it changed meanwhile. Returns the job as it now is.
core::Result<store::JobRow> cancel_job(store::Tx& tx, const LifecycleContext& ctx,
                                       const store::JobRow& job, const std::string& note);

// How many of a tenant's latest successful runs of one job name are kept for estimates.
inline constexpr std::int32_t kRunHistoryKept = 20;

// Drain: every launching or running job on `node` is preempted (checkpoint, requeue).
// Returns how many were.
core::Result<std::int32_t> drain_jobs_on(store::Tx& tx, const LifecycleContext& ctx,
                                         const core::NodeId& node, const std::string& reason);

}  // namespace corral::server
