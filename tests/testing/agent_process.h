// A real corral-agent process for end-to-end tests: one simulated node on loopback.
// crash_node() is what a dead machine looks like: kill -9 of the agent and of every
// worker process group it started (the test must not leave a "lost" node's workers
// running, as a real power loss would not).
//
// Thread safety: one test thread drives an AgentProcess.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <sys/types.h>

#include "core/status.h"

namespace corral::testing {

class AgentProcess {
 public:
  AgentProcess(std::string node, std::filesystem::path state_dir);
  ~AgentProcess();
  AgentProcess(const AgentProcess&) = delete;
  AgentProcess& operator=(const AgentProcess&) = delete;

  // Starts `corral-agent --simulate PRESET` against corrald at `server` (host:port); an
  // empty `preset` or `labels` leaves its flag out (`--emulate N --fleet FILE`).
  // PATH gets corral-trainer's directory so job specs can name it bare.
  core::Status start(const std::string& server, const std::filesystem::path& join_token,
                     const std::string& preset, const std::string& labels,
                     std::vector<std::string> extra_args = {});
  void kill9();       // the agent alone: its workers keep running
  void crash_node();  // the agent and every worker it started, all with SIGKILL
  void stop();        // SIGTERM (workers keep running, as documented)
  // Replaces the injected faults file atomically (protocol §7).
  void inject_faults(const std::string& json) const;
  // Every worker process group this agent started that is still alive.
  std::vector<pid_t> live_worker_groups() const;

  const std::string& node() const { return node_; }
  const std::filesystem::path& state_dir() const { return state_dir_; }

 private:
  std::string node_;
  std::filesystem::path state_dir_;
  pid_t pid_ = -1;
};

// The path of the built corral-trainer.
std::string trainer_path();

// Pids of live processes (workers and their supervisors) whose environment says they
// belong to `job` (CORRAL_JOB_ID) with checkpoints in `checkpoint_dir`, whichever agent
// (or cluster) started them. The dir tells this test's job N from another test's job N
// running on the same machine at the same time.
std::vector<int> processes_of_job(std::int64_t job, const std::string& checkpoint_dir);

}  // namespace corral::testing
