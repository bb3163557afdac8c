// CorraldClient: the agent's calls to corrald (protocol §1-§4), one HTTP connection.
// Outcomes are mapped to Status codes the agent acts on:
//   Aborted, kFenced    409 fenced: stop every worker and join again
//   Unauthenticated     401: the agent token is unknown (corrald lost it): join again
//   FailedPrecondition  a definitive refusal (409 stale, 403, 400): do not retry
//   Unavailable         corrald unreachable or 5xx: retry with backoff
//
// Several corrald replicas (docs/scale-out.md): the agent is given all of them, and all
// its clients talk to the same one at a time (ServerList): when one cannot be reached or
// answers 503, every client moves on to the next, so the replica the agent polls is the
// one its heartbeats tell what it applied.
//
// Thread safety: needs external synchronization; the agent gives each thread its own
// client (cancel() may be called from another thread). ServerList is safe for
// concurrent use.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/agent_protocol.h"
#include "core/result.h"

namespace httplib {
class Client;
class Result;
}  // namespace httplib

namespace corral::agent {

// The replicas an agent may talk to, and which one its clients use now.
class ServerList {
 public:
  // "http://HOST:PORT[,http://HOST:PORT...]"; InvalidArgument("--server") names the bad one.
  static core::Result<std::shared_ptr<ServerList>> parse(const std::string& urls);
  struct Current {
    std::string host;
    int port = 0;
    std::uint64_t generation = 0;  // moves each time the agent changes replica
  };
  Current current() const;
  // A call to the server of `generation` failed: move every client to the next one (once
  // per generation, however many clients saw it fail).
  void failed(std::uint64_t generation);
  std::uint64_t generation() const { return generation_.load(); }
  std::size_t size() const { return servers_.size(); }
  std::string url() const;  // the current one, "http://HOST:PORT"

 private:
  std::vector<std::pair<std::string, int>> servers_;
  std::atomic<std::uint64_t> generation_{0};  // servers_[generation_ % size]
};

class CorraldClient {
 public:
  // Whether the connection stays open between calls. Only the long poll keeps it: it asks
  // again the moment an answer is applied. Calls seconds apart (heartbeats, reports,
  // telemetry) open one per call, because cpp-httplib 0.11 (Debian 12's) waits for a kept
  // connection's next request by waking every ~10 ms: at 1,250 agents, their idle
  // heartbeat connections took most of corrald's 2 cores (docs/performance.md).
  enum class Connection { kPerCall, kKeepAlive };

  // `server_url`: "http://HOST:PORT", or several separated by commas.
  // InvalidArgument("--server") when malformed.
  static core::Result<std::unique_ptr<CorraldClient>> connect(
      const std::string& server_url, Connection connection = Connection::kPerCall);
  static core::Result<std::unique_ptr<CorraldClient>> connect(
      std::shared_ptr<ServerList> servers, Connection connection = Connection::kPerCall);
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
  core::Status run_report(const std::string& node, const std::string& token,
                          const core::WorkerRunReport& report);
  // A call's answer as corrald gave it, for the agent to pass on.
  struct Answer {
    int status = 0;
    std::string body;
  };
  // POST /v1/agents/{node}/features/lookup: corrald's answer whatever its status (a
  // refusal is the worker's to read); Unavailable only when no answer came, and a 503
  // moves every client to the next replica as for any call.
  core::Result<Answer> feature_lookup(const std::string& node, const std::string& token,
                                      const core::WorkerFeatureLookup& lookup);
  // POST /v1/agents/{node}/telemetry (202): best effort, the caller drops what fails.
  core::Status telemetry(const std::string& node, const std::string& token,
                         const core::TelemetryBatch& batch);
  // Aborts a call in flight from another thread (shutdown of a long poll).
  void cancel();
  // The ServerList generation of the replica the last call went to.
  std::uint64_t generation() const { return generation_; }

 private:
  CorraldClient(std::shared_ptr<ServerList> servers, Connection connection);
  // The connection to the replica the list names now (a new one after a move).
  httplib::Client& http();
  // The call's outcome (status_of); an unreachable replica or a 503 moves the agent to
  // the next replica.
  core::Status check(const httplib::Result& res, const char* call);

  const std::shared_ptr<ServerList> servers_;
  const Connection connection_;
  std::mutex mu_;  // http_ against cancel()
  std::unique_ptr<httplib::Client> http_;
  std::uint64_t generation_ = 0;
  bool cancelled_ = false;
};

// How long to wait before try `tries` + 1 at corrald: 100 ms doubling, at most 5 s.
std::int64_t retry_backoff_ms(int tries);

// "HOST:PORT" or "http://HOST:PORT" → (host, port). InvalidArgument names `field`.
core::Result<std::pair<std::string, int>> parse_host_port(const std::string& text,
                                                          const std::string& field);

}  // namespace corral::agent
