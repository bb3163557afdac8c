// Reconciler: makes the node's workers match what corrald wants, level-triggered.
//
// `apply(desired)` compares the desired workers with the known ones and acts on the
// difference only: start a wanted worker that never ran, stop one that is running but
// marked "stop" or no longer listed, forget an exited one once its exit was reported
// and corrald stopped listing it. Applying the same list twice changes nothing, and a
// (job, attempt, rank) that ran is never started again.
//
// A new Reconciler on an existing state dir `adopt()`s what the last agent started:
// live workers stay running, exit codes recorded meanwhile are reported, and the first
// apply() (corrald's first answer) stops those it does not list.
//
// A worker that cannot be started (its log cannot be created, the supervisor cannot be
// spawned) is reported as exited with kStartFailedExitCode at once, so corrald ends the
// gang attempt and its restart policy (backoff, maxRestarts) decides what happens next,
// instead of the agent retrying a broken start unseen forever.
//
// Thread safety: safe for concurrent use (one mutex).
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/worker_runner.h"
#include "core/agent_protocol.h"

namespace corral::agent {

// The exit code reported for a worker that could not be started (the shell's "command
// cannot be run").
constexpr std::int32_t kStartFailedExitCode = 127;

class Reconciler {
 public:
  // `on_start_failed` (optional) hears each failed start: the agent logs it and sends a
  // heartbeat so corrald learns at once. Called with the reconciler's lock held.
  using StartFailed = std::function<void(const core::WorkerKey&, const core::Status&)>;
  explicit Reconciler(WorkerRunner& launcher, StartFailed on_start_failed = {})
      : launcher_(launcher), on_start_failed_(std::move(on_start_failed)) {}

  // Loads the workers recorded in the state dir. Call once, before apply().
  void adopt();

  // Makes the workers match `desired` (remembered for reapply()).
  void apply(const std::vector<core::DesiredWorker>& desired);
  // apply() with the last desired list: retries stops that could not be sent yet and
  // forgets workers whose exit has been reported since. Does nothing before the first
  // apply() (or stop_all()): adopted workers wait for corrald's answer, they are not
  // stopped for want of one.
  void reapply();

  // Every known worker's current state, sorted by key.
  std::vector<core::WorkerStatus> observe();
  // A heartbeat carrying `reported` was accepted: their exits are known to corrald.
  void mark_reported(const std::vector<core::WorkerStatus>& reported);

  // Fenced: stop every worker (with `grace_ms`) and forget the desired list.
  void stop_all(std::int64_t grace_ms);
  // The agent left this reconciler's cluster (it joined another): from now on apply()
  // and reapply() do nothing and no worker token is answered. Its workers are stopped
  // through the launcher by whoever closed it (agent/cluster_scope.h sweep()).
  void close();

  // The worker a CORRAL_WORKER_TOKEN belongs to.
  std::optional<core::WorkerKey> worker_for_token(const std::string& token) const;
  // The GPUs of the workers running now (telemetry's simulated load).
  std::set<std::int32_t> busy_gpus() const;
  // True while some stop could not be sent yet (its supervisor is still starting).
  bool stops_pending() const;

 private:
  struct Entry {
    LaunchRecord record;
    bool stop_sent = false;
    bool exit_reported = false;
    std::optional<core::WorkerStatus> start_failed;  // set: never ran; this is its report
  };
  core::WorkerStatus observe(const Entry& entry) const;
  void apply_locked(const std::vector<core::DesiredWorker>& desired);
  void send_stop(Entry& entry, std::int64_t grace_ms);

  WorkerRunner& launcher_;
  const StartFailed on_start_failed_;
  mutable std::mutex mu_;
  std::map<core::WorkerKey, Entry> entries_;
  std::vector<core::DesiredWorker> desired_;
  bool desired_known_ = false;  // apply() or stop_all() ran: desired_ is corrald's word
  bool stops_pending_ = false;
  bool closed_ = false;
};

}  // namespace corral::agent
