// LocalServer: the agent's own HTTP server, for its workers and for corrald.
//   POST /local/checkpoint              a worker reports a checkpoint (its worker token)
//   POST /local/run                     a worker reports metric points and artifacts (same)
//   POST /local/features/lookup         a worker's point-in-time lookup, answered by corrald
//   GET  /local/logs/JOB/ATTEMPT/RANK   corrald fetches a rank's log (the logKey)
// Bind it to loopback unless corrald runs elsewhere: workers on the node reach it
// through CORRAL_AGENT_URL.
//
// Thread safety: safe for concurrent use; handlers run on the server's thread pool
// and call the hooks concurrently.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "core/agent_protocol.h"
#include "core/result.h"

namespace httplib {
class Server;
}

namespace corral::agent {

class LocalServer {
 public:
  // Who may read logs, and where they are: both from one look at the agent's session,
  // so a key of one cluster never opens another cluster's logs.
  struct LogAccess {
    std::string key;       // empty: no log access yet
    std::string logs_dir;  // DIR/logs of the cluster joined: JOB/attempt-A/rank-R.log
  };
  // corrald's answer to a call made for a worker, passed on as it came.
  struct Answer {
    int status = 0;
    std::string body;  // JSON
  };
  struct Hooks {
    std::function<std::optional<core::WorkerKey>(const std::string& token)> worker_for_token;
    // Queue the report of the worker `token` belongs to: Unauthenticated when it belongs
    // to none (any more), ResourceExhausted when the agent holds too many unsent.
    std::function<core::Status(const std::string& token, const core::CheckpointReport&)>
        on_checkpoint;
    // The same for a batch of metric points and artifacts (/local/run).
    std::function<core::Status(const std::string& token, const core::RunReport&)> on_run_report;
    // Forward a worker's feature lookup to corrald at once and return its answer (any
    // status): Unauthenticated when the token belongs to no worker, Unavailable when
    // corrald gave no answer (the worker gets 503 and may retry).
    std::function<core::Result<Answer>(const std::string& token, const core::FeatureLookupRequest&)>
        on_feature_lookup;
    std::function<LogAccess()> log_access;
  };

  explicit LocalServer(Hooks hooks);
  ~LocalServer();
  LocalServer(const LocalServer&) = delete;
  LocalServer& operator=(const LocalServer&) = delete;

  // Binds (port 0: any free port) and serves on a thread. Returns the bound port.
  core::Result<int> start(const std::string& host, int port);
  void stop();

 private:
  Hooks hooks_;
  std::unique_ptr<httplib::Server> http_;
  std::thread thread_;
  std::atomic<bool> listen_returned_{false};
};

// The last `tail_bytes` bytes of a file (all of it when it is shorter).
std::optional<std::string> read_tail(const std::string& path, std::int64_t tail_bytes);

}  // namespace corral::agent
