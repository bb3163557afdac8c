// The fleet emulator's workers (agent/emulated/timer_runner.h), driven through the real
// Reconciler with an injected clock: how long a worker runs by its spec, the checkpoints
// rank 0 reports, a stop's checkpoint and exit 143, a kill's 137, a restore that starts
// at the checkpoint's step, XIDs, and that a rank never starts twice.
#include "agent/emulated/timer_runner.h"

#include <gtest/gtest.h>

#include "agent/reconciler.h"
#include "core/clock.h"

namespace corral::agent {
namespace {

using State = core::WorkerStatus::State;

core::DesiredWorker emulated_worker(std::int64_t job, std::int32_t rank,
                                    std::vector<std::string> command,
                                    std::map<std::string, std::string> env = {}) {
  return {.spec = {.key = {.job = job, .attempt = 1, .rank = rank},
                   .gpus = {rank},
                   .command = std::move(command),
                   .env = std::move(env),
                   .checkpoint_dir = "/ckpt/job" + std::to_string(job),
                   .grace_ms = 1000}};
}

class TimerRunnerTest : public ::testing::Test {
 protected:
  core::WorkerStatus status_of(std::int64_t job, std::int32_t rank) {
    for (const auto& s : reconciler_.observe()) {
      if (s.key.job == job && s.key.rank == rank) return s;
    }
    ADD_FAILURE() << "no worker " << job << "/" << rank;
    return {};
  }
  std::vector<std::int64_t> steps_reported() {
    std::vector<std::int64_t> out;
    for (const auto& c : runner_.take_checkpoints()) out.push_back(c.report.step);
    return out;
  }

  core::ManualClock clock_{core::time_from_ms(1'000'000)};
  TimerRunner runner_{clock_};
  std::vector<std::string> failed_;
  Reconciler reconciler_{runner_, [this](const core::WorkerKey& key, const core::Status& why) {
                           failed_.push_back(key.name() + ": " + why.to_string());
                         }};
};

TEST_F(TimerRunnerTest, TrainerFlagsSetTheRunAndRankZeroCheckpoints) {
  const std::vector<std::string> trainer = {
      "corral-trainer", "--steps", "100", "--step-ms", "50", "--checkpoint-every", "40"};
  reconciler_.apply({emulated_worker(7, 0, trainer), emulated_worker(7, 1, trainer)});
  EXPECT_EQ(status_of(7, 0).state, State::kRunning);
  EXPECT_EQ(runner_.next_event_ms(), 1'000'000 + 40 * 50);  // the first checkpoint
  clock_.advance(core::Duration(40 * 50));
  EXPECT_EQ(steps_reported(), std::vector<std::int64_t>{40});
  clock_.advance(core::Duration(60 * 50 - 1));
  EXPECT_EQ(steps_reported(), std::vector<std::int64_t>{80});
  EXPECT_EQ(status_of(7, 1).state, State::kRunning);
  clock_.advance(core::Duration(1));
  for (std::int32_t rank : {0, 1}) {
    const core::WorkerStatus s = status_of(7, rank);
    EXPECT_EQ(s.state, State::kExited);
    EXPECT_EQ(s.exit_code, 0);
    EXPECT_EQ(s.exited_at_ms, 1'000'000 + 100 * 50);
  }
  EXPECT_EQ(runner_.next_event_ms(), std::nullopt);
  EXPECT_TRUE(runner_.busy_gpus().empty());
}

TEST_F(TimerRunnerTest, EmulateEnvironmentWinsAndNamesABadValue) {
  reconciler_.apply(
      {emulated_worker(1, 0, {"python3", "train.py"}, {{"EMULATE_SECONDS", "2.5"}}),
       emulated_worker(2, 0, {"python3", "train.py"},
                       {{"EMULATE_SECONDS", "1"}, {"EMULATE_EXIT_CODE", "3"}}),
       emulated_worker(3, 0, {"python3", "train.py"}, {{"EMULATE_SECONDS", "soon"}})});
  ASSERT_EQ(failed_.size(), 1u);
  EXPECT_NE(failed_[0].find("EMULATE_SECONDS"), std::string::npos) << failed_[0];
  EXPECT_EQ(status_of(3, 0).exit_code, kStartFailedExitCode);
  clock_.advance(core::seconds(1));
  EXPECT_EQ(status_of(2, 0).exit_code, 3);
  EXPECT_EQ(status_of(1, 0).state, State::kRunning);  // 2.5 s is three one-second steps
  clock_.advance(core::seconds(2));
  EXPECT_EQ(status_of(1, 0).state, State::kExited);
}

TEST_F(TimerRunnerTest, StopCheckpointsAndExits143KillExits137) {
  const std::map<std::string, std::string> env = {{"EMULATE_SECONDS", "100"},
                                                  {"EMULATE_CHECKPOINT_SECONDS", "30"}};
  reconciler_.apply({emulated_worker(1, 0, {"x"}, env), emulated_worker(2, 0, {"x"}, env)});
  clock_.advance(core::seconds(45));
  auto stop1 = emulated_worker(1, 0, {"x"}, env);
  stop1.run = false;
  reconciler_.apply({stop1, emulated_worker(2, 0, {"x"}, env)});
  EXPECT_EQ(steps_reported(), (std::vector<std::int64_t>{30, 30, 45}));  // job 2's 30 too
  EXPECT_EQ(status_of(1, 0).state, State::kRunning);                     // checkpointing
  clock_.advance(core::Duration(50));
  EXPECT_EQ(status_of(1, 0).exit_code, 143);
  reconciler_.stop_all(0);  // fenced: no grace, no checkpoint
  EXPECT_EQ(status_of(2, 0).exit_code, 137);
  EXPECT_EQ(status_of(2, 0).signal, 9);
  EXPECT_TRUE(steps_reported().empty());
}

TEST_F(TimerRunnerTest, RestoreStartsAtTheCheckpointStep) {
  auto w = emulated_worker(5, 0, {"x"}, {{"EMULATE_SECONDS", "100"}});
  w.spec.restore_from = "/ckpt/job5/step-000000060-attempt-1";
  reconciler_.apply({w});
  clock_.advance(core::seconds(39));
  EXPECT_EQ(status_of(5, 0).state, State::kRunning);
  clock_.advance(core::seconds(1));
  EXPECT_EQ(status_of(5, 0).state, State::kExited);
  EXPECT_EQ(restored_step("/a/step-000000040"), 40);
  EXPECT_EQ(restored_step("/a/latest"), 0);
  EXPECT_EQ(restored_step(""), 0);
}

TEST_F(TimerRunnerTest, XidShowsOnItsGpusWhenTheWorkerEnds) {
  reconciler_.apply(
      {emulated_worker(9, 3, {"x"}, {{"EMULATE_SECONDS", "5"}, {"EMULATE_XID", "79"}})});
  EXPECT_TRUE(runner_.xids().empty());
  clock_.advance(core::seconds(5));
  EXPECT_EQ(status_of(9, 3).exit_code, 1);
  EXPECT_EQ(runner_.xids(), (std::map<std::int32_t, std::int32_t>{{3, 79}}));
  // Reported and no longer listed: forgotten, the XID stays (a real GPU's would).
  reconciler_.mark_reported(reconciler_.observe());
  reconciler_.apply({});
  EXPECT_TRUE(reconciler_.observe().empty());
  EXPECT_EQ(runner_.xids(), (std::map<std::int32_t, std::int32_t>{{3, 79}}));
}

TEST_F(TimerRunnerTest, ARankNeverStartsTwice) {
  const auto w = emulated_worker(4, 0, {"x"}, {{"EMULATE_SECONDS", "1"}});
  reconciler_.apply({w});
  clock_.advance(core::seconds(2));
  reconciler_.apply({w});  // exited, not yet reported: kept, not restarted
  EXPECT_EQ(status_of(4, 0).state, State::kExited);
  EXPECT_EQ(runner_.start(w.spec).status().code(), core::StatusCode::kAlreadyExists);
}

}  // namespace
}  // namespace corral::agent
