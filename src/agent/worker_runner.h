// WorkerRunner: what the Reconciler needs of whatever runs a node's workers. Two
// adapters: Launcher (launcher.h), real processes under a supervisor with their state in
// files; and TimerRunner (emulated/timer_runner.h), workers as timers in memory, for the
// fleet emulator. The Reconciler's rules (start once, stop what is unwanted, forget what
// was reported) are the same for both, so an emulated node answers corrald as a real one.
//
// Thread safety: needs external synchronization (the Reconciler holds a mutex), except
// where an adapter says otherwise.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/agent_protocol.h"
#include "core/result.h"
#include "core/time.h"

namespace corral::agent {

// What the runner recorded when it started a worker.
struct LaunchRecord {
  core::WorkerKey key;
  std::string token;  // CORRAL_WORKER_TOKEN: the worker's credential at the local server
  std::int64_t started_at_ms = 0;
  std::int64_t grace_ms = 30000;
};

class WorkerRunner {
 public:
  virtual ~WorkerRunner() = default;
  // Starts the worker. AlreadyExists when a worker with this key is running or has run:
  // a rank is never launched twice.
  virtual core::Result<LaunchRecord> start(const core::WorkerSpec& spec) = 0;
  // Asks the worker to stop: SIGTERM now, SIGKILL after `grace_ms`. Idempotent.
  // FailedPrecondition when it cannot be asked yet (retry later).
  virtual core::Status stop(const core::WorkerKey& key, std::int64_t grace_ms) = 0;
  // The worker's state now.
  virtual core::WorkerStatus observe(const LaunchRecord& record) = 0;
  // Every worker the runner holds records of (from before a restart), sorted by key.
  virtual std::vector<LaunchRecord> recorded() const = 0;
  // Watches an adopted worker so its exit is noticed.
  virtual void watch(const core::WorkerKey& key) = 0;
  // Drops the worker's records. REQUIRES: it exited.
  virtual void forget(const core::WorkerKey& key) = 0;
  virtual core::Time now() const = 0;
};

}  // namespace corral::agent
