// Workers: one process (with its descendants) per rank of a job attempt on this node.
// WorkerSpec is what corrald asks for (protocol §2); WorkerStatus is what the agent
// observes and reports (protocol §3).
//
// Thread safety: value types.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace corral::agent {

struct WorkerKey {
  std::int64_t job = 0;
  std::int32_t attempt = 0;
  std::int32_t rank = 0;

  auto operator<=>(const WorkerKey&) const = default;
  // "JOB-ATTEMPT-RANK": the worker's file name stem under STATE_DIR/run.
  std::string name() const {
    return std::to_string(job) + "-" + std::to_string(attempt) + "-" + std::to_string(rank);
  }
};

struct WorkerSpec {
  WorkerKey key;
  std::int32_t local_rank = 0;
  std::int32_t node_rank = 0;
  std::int32_t world_size = 1;
  std::vector<std::int32_t> gpus;
  std::string visible_devices;
  std::vector<std::string> command;        // argv; command[0] is looked up in PATH
  std::map<std::string, std::string> env;  // the spec's env and secretEnv: never logged
  std::string master_addr;
  std::int32_t master_port = 0;
  std::string checkpoint_dir;
  std::string restore_from;
  std::int64_t grace_ms = 30000;
};

struct WorkerStatus {
  enum class State { kRunning, kExited };
  WorkerKey key;
  State state = State::kRunning;
  std::int64_t pid = 0;  // the worker's pid (its process group id); 0 before it is known
  std::int64_t started_at_ms = 0;
  // When exited: the exit status, or 128 + signal with `signal` set when a signal ended
  // it. -1 when its supervisor vanished without recording one (the group is killed).
  std::int32_t exit_code = 0;
  std::int32_t signal = 0;
  std::int64_t exited_at_ms = 0;
};

}  // namespace corral::agent
