// CorraldClient: the agent's calls to corrald (protocol §1-§4), one HTTP connection.
// Outcomes are mapped to Status codes the agent acts on:
//   Aborted, kFenced    409 fenced: stop every worker and join again
//   Unauthenticated     401: the agent token is unknown (corrald lost it): join again
//   FailedPrecondition  a definitive refusal (409 stale, 403, 400): do not retry
//   Unavailable         corrald unreachable or 5xx: retry with backoff
//
// Thread safety: needs external synchronization; the agent gives each thread its own.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/agent_protocol.h"
#include "core/result.h"

namespace httplib {
class Client;
}

namespace corral::agent {

class CorraldClient {
 public:
  // `server_url`: "http://HOST:PORT". InvalidArgument("--server") when malformed.
  static core::Result<std::unique_ptr<CorraldClient>> connect(const std::string& server_url);
  ~CorraldClient();
  CorraldClient(const CorraldClient&) = delete;
  CorraldClient& operator=(const CorraldClient&) = delete;

  // InvalidArgument("clusterId") when the answer's cluster id is no safe path component.
  core::Result<core::JoinAnswer> join(const std::string& join_token,
                                      const core::JoinRequest& request);
  // Long poll; the read timeout covers `wait_ms` plus a margin.
  core::Result<core::Assignments> assignments(const std::string& node, const std::string& token,
                                              std::int64_t since, std::int64_t wait_ms);
  // The answer's assignment version.
  core::Result<std::int64_t> heartbeat(const std::string& node, const std::string& token,
                                       const core::Heartbeat& heartbeat);
  core::Status checkpoint(const std::string& node, const std::string& token,
                          const core::WorkerCheckpoint& checkpoint);
  // POST /v1/agents/{node}/telemetry (202): best effort, the caller drops what fails.
  core::Status telemetry(const std::string& node, const std::string& token,
                         const core::TelemetryBatch& batch);
  // Aborts a call in flight from another thread (shutdown of a long poll).
  void cancel();

 private:
  explicit CorraldClient(std::unique_ptr<httplib::Client> http);
  std::unique_ptr<httplib::Client> http_;
};

// "HOST:PORT" or "http://HOST:PORT" → (host, port). InvalidArgument names `field`.
core::Result<std::pair<std::string, int>> parse_host_port(const std::string& text,
                                                          const std::string& field);

}  // namespace corral::agent
