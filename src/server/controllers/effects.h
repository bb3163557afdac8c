// What a store transaction asks for once it has committed (the controllers record it,
// the request pipeline and the agent API apply it): which agents' desired workers
// changed, which stops to mark, whether to wake the scheduler, and the log lines and
// metric counts of what happened. Kept apart from the controllers so that the request
// pipeline depends on this value and not on the job lifecycle.
//
// Thread safety: a plain value; apply_effects and wake_loop call thread-safe objects.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "server/base/log.h"
#include "server/base/metrics.h"
#include "server/controllers/assignment_board.h"
#include "server/controllers/scheduler_signals.h"

namespace corral::server {

// What a transaction asks for once it has committed.
struct Effects {
  std::set<std::string> bump;                            // nodes whose answer changed
  std::set<std::pair<std::int64_t, std::string>> stops;  // (job, node) asked to stop
  std::set<std::int64_t> released;                       // jobs whose GPUs were all released
  std::set<std::int64_t> requeued;                       // jobs put back in the queue
  std::set<std::string> rejoined;  // nodes whose agent (re)joined: applied version unknown
  bool wake_scheduler = false;
  std::int32_t succeeded = 0;  // jobs that ended in this transaction, for /metrics
  std::int32_t failed = 0;
  TenantEventMap tenant_events;  // for /metrics' per-tenant counters (metrics.h)
  std::vector<LogEvent> log;     // written once the transaction commits (log.h)

  void merge(const Effects& other);
};

// Runs after the commit: marks stops, bumps versions, forgets released jobs and the
// applied versions of rejoined agents, and writes the transaction's log lines.
void apply_effects(const Effects& fx, AssignmentBoard& board);

// Runs after the commit: asks the scheduler loop for a cycle when `fx` freed GPUs or
// requeued jobs. Neither needs a re-read of the whole pending queue (the loop reads the
// GPU holders every cycle, and each requeued job on its own), which matters when jobs
// finish by the hundred per second.
void wake_loop(const Effects& fx, SchedulerSignals& loop);

}  // namespace corral::server
