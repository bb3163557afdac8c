// Launcher: starts and stops workers through a supervisor process, and reads back
// what happened from the state dir, so the agent can die and come back without losing
// a worker or an exit code (protocol §1; layout in docs/agent.md).
//
// Each worker runs as:  agent ─spawn→ `corral-agent --supervise` (own session)
//                                      └─fork/exec→ worker (own session = process group)
// Files under DIR/run, per worker KEY = JOB-ATTEMPT-RANK (DIR is the state dir of one
// cluster's workers, STATE_DIR/clusters/ID: agent/cluster_scope.h):
//   KEY.json  written by the agent before spawning: token, start time, grace
//   KEY.lock  flock()ed by the supervisor for its whole life (held ⇔ supervisor alive;
//             the agent takes it before spawning and hands the descriptor over, so
//             there is no moment when a live supervisor does not hold it)
//   KEY.pid   written by the supervisor once the worker exec'd: supervisor and worker pids
//   KEY.exit  written by the supervisor after the worker's group is gone: exit status
// Stop = SIGTERM (sigqueue'd with the grace) to the supervisor, which sends SIGTERM to
// the worker's group, waits the grace, then SIGKILLs the group. When the worker exits
// on its own, the supervisor SIGKILLs what is left of its group before recording the
// exit, so "exited" means every process of the group is gone.
//
// Thread safety: needs external synchronization (the Reconciler holds a mutex), except
// that the exit watcher calls `on_change` from its own thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <sys/types.h>

#include "agent/worker_runner.h"
#include "core/agent_protocol.h"
#include "core/clock.h"
#include "core/result.h"

namespace corral::agent {

// A LaunchRecord (worker_runner.h) is kept as KEY.json.
class Launcher final : public WorkerRunner {
 public:
  struct Options {
    std::string state_dir;       // DIR: run/, logs/ and work/ go under it
    std::string supervisor_exe;  // a corral-agent binary (re-executed with --supervise)
    std::string agent_url;       // CORRAL_AGENT_URL for the workers
    std::string mps_pipe_dir;    // CUDA_MPS_PIPE_DIRECTORY for shares (AgentOptions)
    const core::Clock* clock = nullptr;
    std::function<void()> on_change;  // a worker started or exited (any thread)
  };

  explicit Launcher(Options options);
  ~Launcher() override;
  Launcher(const Launcher&) = delete;
  Launcher& operator=(const Launcher&) = delete;

  // Starts the worker. AlreadyExists when a worker with this key is running (its lock
  // is held) or has run (its exit file exists): a rank is never launched twice.
  core::Result<LaunchRecord> start(const core::WorkerSpec& spec) override;

  // Asks the worker to stop: SIGTERM now, SIGKILL of its group after `grace_ms`.
  // Idempotent. FailedPrecondition when its supervisor is not known yet (retry later).
  core::Status stop(const core::WorkerKey& key, std::int64_t grace_ms) override;

  // The worker's state from its files. A worker whose supervisor vanished without an
  // exit file has its group killed and is recorded as exited with code -1.
  core::WorkerStatus observe(const LaunchRecord& record) override;

  // Every worker recorded in the state dir (KEY.json), sorted by key.
  std::vector<LaunchRecord> recorded() const override;

  // Watches an adopted worker's supervisor so its exit triggers on_change.
  void watch(const core::WorkerKey& key) override;

  // Deletes the worker's run files. REQUIRES: it exited.
  void forget(const core::WorkerKey& key) override;

  const std::string& run_dir() const { return run_dir_; }
  core::Time now() const override { return options_.clock->now(); }
  void set_agent_url(std::string url) { options_.agent_url = std::move(url); }

 private:
  std::string path(const core::WorkerKey& key, const char* ext) const;
  bool lock_held(const core::WorkerKey& key) const;
  std::optional<std::pair<pid_t, pid_t>> read_pids(const core::WorkerKey& key) const;
  void watch_pid(pid_t pid);
  void watcher_loop();

  Options options_;
  std::string run_dir_;
  int wake_fd_ = -1;  // eventfd: new pids to watch, or shutdown
  std::mutex watch_mu_;
  std::vector<std::pair<pid_t, int>> pending_watch_;  // (pid, pidfd) to add
  std::atomic<bool> stopping_{false};
  std::thread watcher_;
};

// The entry point of `corral-agent --supervise ...` (argv from "--supervise" on).
int supervise_main(int argc, char** argv);

}  // namespace corral::agent
