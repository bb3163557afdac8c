// Reconciler decisions that need no running process: its Launcher points at a supervisor
// that does not exist, so every start fails at spawn and no worker ever runs. What is
// left to see is what the reconciler decides: which starts it tries (once per key), what
// it reports for a start that failed (exited 127 at the injected clock's time), when it
// keeps or forgets a worker, and that it never signals one that never ran.
// The same decisions with real processes are in launcher_test.cc.
#include "agent/reconciler.h"

#include <string>
#include <vector>

#include "agent_test_util.h"
#include <gtest/gtest.h>

#include "core/clock.h"

namespace corral::agent {
namespace {

using State = core::WorkerStatus::State;
using testing::TempDir;

class ReconcilerTest : public ::testing::Test {
 protected:
  ReconcilerTest()
      : clock_(core::time_from_ms(5'000)),
        launcher_(Launcher::Options{.state_dir = dir_.path() + "/state",
                                    .supervisor_exe = dir_.path() + "/no-such-supervisor",
                                    .clock = &clock_}),
        reconciler_(launcher_, [this](const core::WorkerKey& key, const core::Status& why) {
          failures_.push_back(key.name() + ": " + why.message());
        }) {}

  core::DesiredWorker want(std::int64_t job, std::int32_t rank, bool run = true) {
    return {.spec = {.key = {.job = job, .attempt = 1, .rank = rank},
                     .command = {"/bin/true"},
                     .grace_ms = 1000},
            .run = run};
  }
  std::string failure(const std::string& key) const {
    return key + ": cannot start supervisor " + dir_.path() +
           "/no-such-supervisor: No such file or directory";
  }

  TempDir dir_;
  core::ManualClock clock_;
  Launcher launcher_;
  std::vector<std::string> failures_;
  Reconciler reconciler_;
};

// Each wanted worker is started once; a start that fails is reported as exited with
// kStartFailedExitCode, stamped with the clock's time, and never tried again.
TEST_F(ReconcilerTest, AFailedStartIsReportedOnceAndNeverRetried) {
  reconciler_.adopt();
  const std::vector<core::DesiredWorker> desired = {want(3, 0), want(3, 1)};
  reconciler_.apply(desired);
  EXPECT_EQ(failures_, (std::vector<std::string>{failure("3-1-0"), failure("3-1-1")}));
  clock_.advance(core::Duration(60'000));
  reconciler_.apply(desired);
  reconciler_.reapply();
  EXPECT_EQ(failures_.size(), 2u) << "a failed start was retried";
  const std::vector<core::WorkerStatus> want_status = {
      {.key = {3, 1, 0},
       .state = State::kExited,
       .started_at_ms = 5'000,
       .exit_code = kStartFailedExitCode,
       .exited_at_ms = 5'000},
      {.key = {3, 1, 1},
       .state = State::kExited,
       .started_at_ms = 5'000,
       .exit_code = kStartFailedExitCode,
       .exited_at_ms = 5'000},
  };
  EXPECT_EQ(reconciler_.observe(), want_status);
  EXPECT_TRUE(launcher_.recorded().empty()) << "a failed start leaves no record to adopt";
  EXPECT_FALSE(reconciler_.worker_for_token("")) << "a worker that never ran has no token";
}

// A worker desired "stop" that never ran here is not started, not stopped, not listed.
TEST_F(ReconcilerTest, AStopForAWorkerThatNeverRanHereDoesNothing) {
  reconciler_.adopt();
  reconciler_.apply({want(4, 0, /*run=*/false)});
  EXPECT_TRUE(failures_.empty()) << "it tried to start a worker desired stop";
  EXPECT_TRUE(reconciler_.observe().empty());
  EXPECT_FALSE(reconciler_.stops_pending());
}

// An exited worker stays (so its exit can be reported) until a heartbeat carried it AND
// corrald stopped listing it; a running status marked reported proves nothing.
TEST_F(ReconcilerTest, AnExitedWorkerIsForgottenOnlyOnceReportedAndUnlisted) {
  reconciler_.adopt();
  reconciler_.apply({want(5, 0)});
  const auto exited = reconciler_.observe();
  ASSERT_EQ(exited.size(), 1u);

  reconciler_.apply({});
  EXPECT_EQ(reconciler_.observe(), exited) << "unlisted but its exit was never reported";
  reconciler_.mark_reported({{.key = {5, 1, 0}, .state = State::kRunning}});
  reconciler_.apply({});
  EXPECT_EQ(reconciler_.observe(), exited) << "a running report is not an exit report";

  reconciler_.mark_reported(exited);
  reconciler_.apply({want(5, 0)});
  EXPECT_EQ(reconciler_.observe(), exited) << "reported but still listed: kept";
  EXPECT_EQ(failures_.size(), 1u);
  reconciler_.apply({});
  EXPECT_TRUE(reconciler_.observe().empty());
}

// Fenced: stop_all() stops only what ran. A worker whose start failed is never signalled
// (a stop of an unknown supervisor would leave stops_pending), and the desired list it
// leaves behind is empty, so reapply() forgets the worker once its exit is reported.
TEST_F(ReconcilerTest, StopAllNeverSignalsAWorkerThatNeverRan) {
  reconciler_.adopt();
  reconciler_.apply({want(6, 0)});
  reconciler_.stop_all(0);
  EXPECT_FALSE(reconciler_.stops_pending());
  reconciler_.reapply();
  ASSERT_EQ(reconciler_.observe().size(), 1u);
  reconciler_.mark_reported(reconciler_.observe());
  reconciler_.reapply();
  EXPECT_TRUE(reconciler_.observe().empty());
  EXPECT_EQ(failures_.size(), 1u);
}

// reapply() before the first answer has no desired list to apply: it starts nothing.
// After close() (the agent joined another cluster) apply() starts nothing either.
TEST_F(ReconcilerTest, NothingStartsBeforeTheFirstAnswerOrAfterClose) {
  reconciler_.adopt();
  reconciler_.reapply();
  EXPECT_TRUE(reconciler_.observe().empty());
  reconciler_.close();
  reconciler_.apply({want(7, 0)});
  reconciler_.reapply();
  EXPECT_TRUE(failures_.empty()) << "a closed reconciler tried a start";
  EXPECT_TRUE(reconciler_.observe().empty());
}

}  // namespace
}  // namespace corral::agent
