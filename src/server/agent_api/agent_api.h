// The corrald side of the node-agent protocol (docs/agent-protocol.md), plus job logs,
// served through the RequestPipeline (request_pipeline.h):
//
//   POST /v1/agents/join                    join token -> agent token, epoch, logKey, clusterId
//   GET  /v1/agents/{node}/assignments      long poll: the node's desired workers
//   POST /v1/agents/{node}/heartbeat        GPU health + worker states -> controllers
//   POST /v1/agents/{node}/checkpoints      a finished checkpoint, forwarded by the agent
//   POST /v1/agents/{node}/runs             a worker's metric points and artifacts, forwarded
//   POST /v1/agents/{node}/features/lookup  a worker's point-in-time lookup, answered at once
//   POST /v1/agents/{node}/telemetry        GPU samples -> TelemetrySink (202, best effort)
//   GET  /v1/jobs/{id}/logs                 a rank's log, fetched from its agent
//
// An agent token touches only its own node (403 otherwise); a report carrying an old
// epoch is `409 fenced`; a checkpoint from an attempt that is not the job's current one
// is `409 stale`. The assignments answer is the only read that carries secretEnv
// values. The long poll waits on the AssignmentBoard with no store transaction open.
// What the reports do to stored state is the agent controller's (agent_reports.h).
//
// Thread safety: handlers run on httplib's worker threads; AgentApi is safe for that.
#pragma once

#include "core/result.h"
#include "server/base/spec_cache.h"
#include "server/controllers/assignment_board.h"
#include "server/controllers/lifecycle.h"
#include "server/controllers/telemetry_sink.h"
#include "server/http/request_pipeline.h"

namespace httplib {
class Server;
}  // namespace httplib

namespace corral::server {

class AgentApi {
 public:
  // `telemetry` may be null: the telemetry route then takes nothing (503).
  AgentApi(RequestPipeline& pipeline, AssignmentBoard& board, SpecCache& specs,
           AgentSettings settings, TelemetrySink* telemetry = nullptr);
  AgentApi(const AgentApi&) = delete;
  AgentApi& operator=(const AgentApi&) = delete;

  void install(httplib::Server& http);

 private:
  LifecycleContext lifecycle(Effects& fx) const;
  core::Result<Reply> join(const Call& c);
  core::Result<Reply> assignments(const Call& c);
  core::Result<Reply> heartbeat(const Call& c);
  core::Result<Reply> checkpoint(const Call& c);
  core::Result<Reply> run_report(const Call& c);
  core::Result<Reply> feature_lookup(const Call& c);
  core::Result<Reply> telemetry(const Call& c);
  core::Result<Reply> logs(const Call& c);

  RequestPipeline& pipeline_;
  AssignmentBoard& board_;
  SpecCache& specs_;
  const AgentSettings settings_;
  TelemetrySink* const telemetry_;
};

}  // namespace corral::server
