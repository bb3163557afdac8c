// The corrald side of the node-agent protocol (docs/agent-protocol.md), plus job logs:
//
//   POST /v1/agents/join                    join token -> agent token, epoch, logKey, clusterId
//   GET  /v1/agents/{node}/assignments      long poll: the node's desired workers
//   POST /v1/agents/{node}/heartbeat        GPU health + worker states -> controllers
//   POST /v1/agents/{node}/checkpoints      a finished checkpoint, forwarded by the agent
//   GET  /v1/jobs/{id}/logs                 a rank's log, fetched from its agent
//
// An agent token touches only its own node (403 otherwise); a report carrying an old
// epoch is `409 fenced`; a checkpoint from an attempt that is not the job's current one
// is `409 stale`. The assignments answer is the only read that carries secretEnv
// values. The long poll waits on the AssignmentBoard with no store transaction open.
//
// Thread safety: handlers run on httplib's worker threads; AgentApi is safe for that.
#pragma once

#include <string>

#include "core/clock.h"
#include "core/result.h"
#include "server/assignment_board.h"
#include "server/lifecycle.h"
#include "server/metrics.h"
#include "server/scheduler_signals.h"
#include "server/spec_cache.h"
#include "server/token_auth.h"
#include "store/store.h"

namespace httplib {
class Server;
}  // namespace httplib

namespace corral::server {

class AgentApi {
 public:
  AgentApi(store::Store& store, const core::Clock& clock, SchedulerSignals& loop, Metrics& metrics,
           AssignmentBoard& board, SpecCache& specs, AgentSettings settings, TokenAuth& auth);

  void install(httplib::Server& http);

 private:
  struct Handlers;
  store::Store& store_;
  const core::Clock& clock_;
  SchedulerSignals& loop_;
  Metrics& metrics_;
  AssignmentBoard& board_;
  SpecCache& specs_;
  const AgentSettings settings_;
  TokenAuth& auth_;
};

}  // namespace corral::server
