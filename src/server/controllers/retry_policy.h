// Retry policies by failure category (core::RetryPolicy; docs/jobspec.md#retry): what
// ended an attempt decides whether the job runs again, on which budget, after what
// backoff, and whether it keeps its place in the queue.
//
//   category  what ended the attempt                          budget
//   node      its node was lost, or drained under it          retry.onNodeFailure, else maxRestarts
//   oom       a rank killed by SIGKILL that Corral did not    retry.onOutOfMemory, else as an exit
//             send (the out-of-memory killer's signal)        (code 137)
//   exit      a rank exited non-zero or by another signal     maxRestarts, for retry.onExitCodes
//   only
//   preemption  the scheduler preempted it                    retry.onPreemption (default
//                                                             always), never maxRestarts
//
// A preemption is no failure: it never counts in maxRestarts, and by default a preempted
// job always goes back to the queue. retry.onPreemption may bound that (never, or N times)
// for work that is worth nothing late.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/job_spec.h"
#include "core/time.h"
#include "server/base/settings.h"
#include "store/store.h"

namespace corral::server {

enum class FailureCategory { kExit, kOutOfMemory, kNodeFailure, kPreemption };
std::string_view to_string(FailureCategory c);  // "exit", "oom", "node", "preemption"

// The category of a failed rank (a rank Corral asked to stop is no failure).
FailureCategory category_of(const store::WorkerRow& rank);

struct RetryVerdict {
  bool retry = false;
  // "restart 2 of 3" ("restart 1 of 5 (retry.onNodeFailure)" on a category's own budget),
  // or why the job ends: "out of restarts (maxRestarts 3)", "exit code 3 is not retried
  // (retry.onExitCodes)".
  std::string reason;
};

// Whether the attempt `next` ended by `category` runs again; when it does, `next` counts
// the restart (restarts, its category's count, retry_category) and its backoff
// (not_before, from `now`; none after a node failure: the job did nothing wrong).
// `exit_code`: the failed rank's (128 + signal for a signal).
RetryVerdict decide_retry(const core::JobSpec& spec, store::JobRow& next, FailureCategory category,
                          std::int32_t exit_code, const AgentSettings& settings, core::Time now);

// Whether a job preempted for the `preemptions`-th time (counting this one) goes back to
// the queue: "requeued (retry.onPreemption always)", "requeue 2 of 3 (retry.onPreemption)",
// or why not: "not retried after a preemption (retry.onPreemption never)", "out of
// requeues after preemption (retry.onPreemption 2)".
RetryVerdict decide_preemption_retry(const core::JobSpec& spec, std::int32_t preemptions);

// Whether a job requeued after a retry of `category` keeps its queued_at (its place).
bool keeps_place(const core::JobSpec& spec, std::string_view category);

}  // namespace corral::server
