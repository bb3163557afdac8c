// Arrays and dependencies in decide(): a job waits out of line until its dependencies are
// met, is abandoned when one can never be, and an array runs at most maxRunning tasks.
#include <map>
#include <random>

#include <gtest/gtest.h>

#include "sched/check.h"
#include "sched/decide.h"
#include "sched/dependencies.h"
#include "testing/decide_helpers.h"
#include "testing/fleet_builder.h"

namespace corral::sched {
namespace {

using core::DependencyCondition;
using testing::decide_checked;
using testing::FleetBuilder;
using testing::JobBuilder;
using testing::pending_of;
using testing::placement_of;

DependencyFact on(std::int64_t job, DependencyCondition c, bool started, bool ended,
                  bool succeeded) {
  return {
      .job = core::JobId(job), .on = c, .started = started, .ended = ended, .succeeded = succeeded};
}

TEST(Dependencies, EachConditionIsMetNeverOrWaiting) {
  using enum DependencyCondition;
  using enum DependencyState;
  struct Case {
    DependencyCondition c;
    bool started, ended, succeeded;
    DependencyState want;
  };
  const Case cases[] = {
      {kSuccess, false, false, false, kWaiting}, {kSuccess, true, false, false, kWaiting},
      {kSuccess, true, true, true, kMet},        {kSuccess, true, true, false, kNever},
      {kFailure, true, false, false, kWaiting},  {kFailure, true, true, false, kMet},
      {kFailure, false, true, false, kMet},      {kFailure, true, true, true, kNever},
      {kFinish, true, false, false, kWaiting},   {kFinish, true, true, true, kMet},
      {kFinish, false, true, false, kMet},       {kStart, false, false, false, kWaiting},
      {kStart, true, false, false, kMet},        {kStart, true, true, false, kMet},
      {kStart, false, true, false, kNever},
  };
  for (const Case& k : cases) {
    const auto v = judge_dependencies({on(41, k.c, k.started, k.ended, k.succeeded)});
    EXPECT_EQ(v.state, k.want) << core::to_string(k.c) << " started=" << k.started
                               << " ended=" << k.ended << " succeeded=" << k.succeeded;
    EXPECT_EQ(v.reason.empty(), k.want == kMet);
  }
}

TEST(Dependencies, AWaitingJobIsOutOfLineAndSaysWhatItWaitsFor) {
  const auto s =
      FleetBuilder()
          .dgx("n0")
          .pending(JobBuilder(1).gpus(8).queued_at(1))
          .pending(JobBuilder(2).gpus(1).queued_at(2).depends(
              on(41, DependencyCondition::kSuccess, true, false, false)))
          .pending(JobBuilder(3)
                       .gpus(1)
                       .queued_at(3)
                       .depends(on(41, DependencyCondition::kSuccess, true, false, false))
                       .depends(on(40, DependencyCondition::kStart, false, false, false)))
          .build();
  const Decisions d = decide_checked(s);
  ASSERT_NE(placement_of(d, 1), nullptr);
  ASSERT_NE(pending_of(d, 2), nullptr);
  EXPECT_EQ(pending_of(d, 2)->kind, PendingKind::kDependency);
  EXPECT_EQ(pending_of(d, 2)->position, 0);
  EXPECT_EQ(pending_of(d, 2)->reason, "waiting for job 41 to succeed");
  EXPECT_EQ(pending_of(d, 3)->reason, "waiting for job 41 to succeed (and 1 more)");
  // Not queued: never considered, so never ahead of anything.
  for (const QueueEntry& q : d.queue) EXPECT_NE(q.job.value, 2);
}

TEST(Dependencies, AMetDependencyRunsAndANeverMetOneIsAbandoned) {
  const auto s = FleetBuilder()
                     .dgx("n0")
                     .pending(JobBuilder(2).gpus(1).depends(
                         on(41, DependencyCondition::kSuccess, true, true, true)))
                     .pending(JobBuilder(3).gpus(1).depends(
                         on(42, DependencyCondition::kSuccess, true, true, false)))
                     .build();
  const Decisions d = decide_checked(s);
  EXPECT_NE(placement_of(d, 2), nullptr);
  EXPECT_EQ(pending_of(d, 3), nullptr);
  ASSERT_EQ(d.abandoned.size(), 1u);
  EXPECT_EQ(d.abandoned[0].job.value, 3);
  EXPECT_EQ(d.abandoned[0].reason,
            "dependency never met: job 42 ended without succeeding (on: success)");
}

// A job's age counts from when its last dependency was met, not from its submission:
// one that waited on a long step is not starved the moment the step ends.
TEST(Dependencies, AgeCountsFromWhenTheDependencyWasMet) {
  DependencyFact done = on(41, DependencyCondition::kSuccess, true, true, true);
  done.ended_at = testing::kNow - core::seconds(60);
  PendingJob p = JobBuilder(2).queued_at(0).depends(done).pending();
  EXPECT_EQ(queued_since(p), done.ended_at);
  // `on: start` counts from the start, not the end (a running job has none).
  DependencyFact running = on(42, DependencyCondition::kStart, true, false, false);
  running.started_at = testing::kNow - core::seconds(30);
  EXPECT_EQ(queued_since(JobBuilder(3).queued_at(0).depends(running).pending()),
            running.started_at);
  p.dependencies.clear();
  EXPECT_EQ(queued_since(p), core::time_from_ms(0));
}

TEST(Arrays, AtMostMaxRunningTasksArePlacedInOneCycle) {
  FleetBuilder f;
  f.dgx("n0").dgx("n1");
  for (int i = 0; i < 10; ++i) f.pending(JobBuilder(100 + i).gpus(1).queued_at(i).array(100, 3));
  const Decisions d = decide_checked(f.build());
  EXPECT_EQ(d.placements.size(), 3u);
  const Pending* waiting = pending_of(d, 109);
  ASSERT_NE(waiting, nullptr);
  EXPECT_EQ(waiting->kind, PendingKind::kArrayLimit);
  EXPECT_EQ(waiting->position, 0);
  EXPECT_EQ(waiting->reason, "array 100 has 3 of its tasks running (maxRunning 3)");
}

TEST(Arrays, RunningAndStoppingTasksCountAgainstTheLimit) {
  const auto s = FleetBuilder()
                     .dgx("n0")
                     .running(JobBuilder(100).gpus(1).array(100, 2), {{"n0", 0}})
                     .running(JobBuilder(101).gpus(1).array(100, 2), {{"n0", 1}})
                     .run_state(101, {.stopping = true})
                     .pending(JobBuilder(102).gpus(1).array(100, 2))
                     .pending(JobBuilder(200).gpus(1).array(200, 2))
                     .build();
  const Decisions d = decide_checked(s);
  EXPECT_EQ(pending_of(d, 102)->kind, PendingKind::kArrayLimit);
  EXPECT_NE(placement_of(d, 200), nullptr);  // another array's limit is its own
}

// The property: a 200-task array with maxRunning 16 never holds more than 16
// tasks' GPUs, under random completions and failures (a failed task goes back to the
// queue, as a restart does), cycle after cycle, and sched::check() agrees every time.
TEST(Arrays, NeverMoreThanMaxRunningUnderRandomCompletionsAndFailures) {
  for (std::uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937 rng(seed);
    std::map<std::int64_t, std::vector<GpuRef>> running;  // task -> GPUs
    std::map<std::int64_t, std::int64_t> pending;         // task -> queued at (ms)
    for (std::int64_t i = 0; i < 200; ++i) pending[1000 + i] = i;
    std::int32_t done = 0;
    for (int cycle = 0; cycle < 400 && done < 200; ++cycle) {
      FleetBuilder f;
      for (int n = 0; n < 4; ++n) f.dgx("n" + std::to_string(n));
      for (const auto& [id, gpus] : running) {
        std::vector<std::pair<std::string, std::int32_t>> at;
        for (const GpuRef& g : gpus) at.emplace_back(g.node.value, g.index);
        f.running(JobBuilder(id).gpus(static_cast<std::int32_t>(gpus.size())).array(1000, 16), at);
      }
      for (const auto& [id, queued] : pending) {
        f.pending(JobBuilder(id)
                      .gpus(1 + static_cast<std::int32_t>(id % 2))
                      .queued_at(queued)
                      .array(1000, 16));
      }
      const auto s = f.build();
      const Decisions d = decide(s, {}, testing::kNow);
      ASSERT_EQ(check(s, d, {}, testing::kNow), std::vector<std::string>{}) << "seed " << seed;
      for (const Placement& p : d.placements) {
        running[p.job.value] = p.gpus;
        pending.erase(p.job.value);
      }
      ASSERT_LE(running.size(), 16u) << "seed " << seed << " cycle " << cycle;
      // Each running task ends with chance 1/3: succeeds, or fails and is queued again.
      for (auto it = running.begin(); it != running.end();) {
        const auto roll = rng() % 6;
        if (roll < 1) {
          pending[it->first] = 1000 + cycle;  // failed: back in the queue
          it = running.erase(it);
        } else if (roll < 2) {
          ++done;
          it = running.erase(it);
        } else {
          ++it;
        }
      }
    }
    EXPECT_EQ(done, 200) << "seed " << seed;
  }
}

}  // namespace
}  // namespace corral::sched
