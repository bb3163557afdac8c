// TimerRunner: a node's workers as timers, for the fleet emulator (emulated_fleet.h). A
// worker "runs" for the steps its spec asks for and exits as a real one would: with its
// exit code when the steps are done, with 143 shortly after a stop (a checkpoint first,
// as corral-trainer does on SIGTERM), killed (signal 9) when stopped with no grace. Rank
// 0 of a worker with a checkpoint dir reports a checkpoint every `checkpointEvery` steps;
// a worker restored from `step-N...` starts at step N.
//
// What a worker does comes from its spec (emulated_work()), in this order:
//   EMULATE_SECONDS (run length, one step a second), EMULATE_CHECKPOINT_SECONDS,
//   EMULATE_EXIT_CODE and EMULATE_XID (its GPUs report that XID when it ends;
//   exit code 1 unless one is given) in the spec's env; else corral-trainer's flags
//   (--steps, --step-ms, --checkpoint-every) when the command is corral-trainer; else 60
//   one-second steps.
//
// Nothing is kept on disk: an emulated node that goes down loses its workers, as a
// machine that loses power does.
//
// Thread safety: safe for concurrent use (one mutex): the Reconciler calls it under its
// lock, the emulator's sender threads take checkpoints and read XIDs.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "agent/worker_runner.h"
#include "core/clock.h"

namespace corral::agent {

// What an emulated worker does.
struct EmulatedWork {
  std::int64_t steps = 60;
  std::int64_t step_ms = 1000;
  std::int64_t checkpoint_every = 0;  // in steps; 0: never
  std::int32_t exit_code = 0;         // when the steps are done
  std::int32_t xid = 0;               // reported by its GPUs when it ends; 0: none
};

// The work `spec` asks for. InvalidArgument names the env variable or flag that does not
// parse (the worker is then reported as failing to start, as a bad command would be).
core::Result<EmulatedWork> emulated_work(const core::WorkerSpec& spec);

// The step a restore path names ("DIR/step-000000040-attempt-1" → 40); 0 when none.
std::int64_t restored_step(const std::string& restore_from);

class TimerRunner final : public WorkerRunner {
 public:
  // A checkpoint a worker reports.
  struct Checkpoint {
    core::WorkerKey key;
    core::CheckpointReport report;
  };

  explicit TimerRunner(const core::Clock& clock) : clock_(clock) {}

  core::Result<LaunchRecord> start(const core::WorkerSpec& spec) override;
  core::Status stop(const core::WorkerKey& key, std::int64_t grace_ms) override;
  core::WorkerStatus observe(const LaunchRecord& record) override;
  std::vector<LaunchRecord> recorded() const override { return {}; }
  void watch(const core::WorkerKey&) override {}
  void forget(const core::WorkerKey& key) override;
  core::Time now() const override { return clock_.now(); }

  // The checkpoints reported by now, oldest first; each is returned once.
  std::vector<Checkpoint> take_checkpoints();
  // The XID each GPU reports: those of workers that ended with one (GPU index → XID).
  std::map<std::int32_t, std::int32_t> xids();
  // The GPUs of the workers running now.
  std::vector<std::int32_t> busy_gpus();
  // When the next exit or checkpoint happens (ms since the epoch); none when idle.
  std::optional<std::int64_t> next_event_ms();

 private:
  struct Timer {
    LaunchRecord record;
    std::int64_t pid = 0;  // a stable fake one, unique within the runner
    std::vector<std::int32_t> gpus;
    EmulatedWork work;
    std::string checkpoint_dir;  // empty: no checkpoints
    std::int64_t first_step = 0;
    std::int64_t next_checkpoint = 0;  // the next step to report; > steps: none left
    std::int64_t end_ms = 0;           // when it exits (moves earlier on a stop)
    std::int32_t exit_code = 0;
    std::int32_t signal = 0;
    bool stopped = false;
  };
  std::int64_t step_at(const Timer& t, std::int64_t ms) const;
  std::int64_t checkpoint_ms(const Timer& t) const;  // when next_checkpoint is reached
  core::CheckpointReport checkpoint(const Timer& t, std::int64_t step) const;

  const core::Clock& clock_;
  std::mutex mu_;
  std::map<core::WorkerKey, Timer> timers_;
  std::vector<Checkpoint> reported_;  // on stops, waiting for take_checkpoints()
  std::map<std::int32_t, std::int32_t> xids_;
  std::int64_t started_ = 0;  // workers started: tokens and pids
};

}  // namespace corral::agent
