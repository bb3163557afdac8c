// Every job waiting for room gets an expected start (issue 38 item 7), not only the
// backfill head: a forecast by GPU counts, in queue order, from running jobs' expected
// ends (forecast.h).
#include <gtest/gtest.h>

#include "testing/decide_helpers.h"
#include "testing/fleet_builder.h"

namespace corral::sched {
namespace {

using namespace corral::testing;
using std::chrono::hours;

std::int64_t start_hours(const Decisions& d, std::int64_t job) {
  const Pending* p = pending_of(d, job);
  EXPECT_NE(p, nullptr) << "job " << job;
  if (p == nullptr || p->start == core::Time{}) return -1;
  return core::to_ms(p->start - kNow) / kHour;
}

// One 8-GPU node, busy for 1 more hour. Three 8-GPU jobs of 2 h each queue behind it:
// they start one after another at 1 h, 3 h and 5 h; a 4-GPU job of 1 h behind them fits
// nowhere sooner than after the last (conservative: it may not delay any of them).
TEST(Forecast, EveryJobWaitingForRoomGetsAStartInQueueOrder) {
  const auto s = FleetBuilder()
                     .dgx("a")
                     .running(JobBuilder(9).gpus(8).max_runtime(hours(2)), whole("a"))
                     .run_state(9, {.started_ms = 9 * kHour})
                     .pending(JobBuilder(1).gpus(8).max_runtime(hours(2)).queued_at(1))
                     .pending(JobBuilder(2).gpus(8).max_runtime(hours(2)).queued_at(2))
                     .pending(JobBuilder(3).gpus(8).max_runtime(hours(2)).queued_at(3))
                     .pending(JobBuilder(4).gpus(4).max_runtime(hours(1)).queued_at(4))
                     .build();
  const Decisions d = decide_checked(s, kNoBackfill, kNow);
  EXPECT_TRUE(d.planned_starts.empty());  // no promise without backfill or starvation
  EXPECT_EQ(start_hours(d, 1), 1);
  EXPECT_EQ(start_hours(d, 2), 3);
  EXPECT_EQ(start_hours(d, 3), 5);
  EXPECT_EQ(start_hours(d, 4), 7);
}

// A later job fills a hole the queue ahead leaves, without delaying it: on two nodes, one
// frees in 1 h and the other in 4 h; the 16-GPU job first in line starts at 4 h, an 8-GPU
// job of 2 h behind it fits in between (1 h to 3 h), and a 3-h one does not (it would
// delay the first), so it starts when the first ends.
TEST(Forecast, ALaterJobFillsAHoleTheJobsAheadLeave) {
  const auto s = FleetBuilder()
                     .dgx("a")
                     .dgx("b")
                     .running(JobBuilder(9).gpus(8).max_runtime(hours(2)), whole("a"))
                     .run_state(9, {.started_ms = 9 * kHour})
                     .running(JobBuilder(10).gpus(8).max_runtime(hours(5)), whole("b"))
                     .run_state(10, {.started_ms = 9 * kHour})
                     .pending(JobBuilder(1).gpus(16).max_runtime(hours(2)).queued_at(1))
                     .pending(JobBuilder(2).gpus(8).max_runtime(hours(2)).queued_at(2))
                     .pending(JobBuilder(3).gpus(8).max_runtime(hours(3)).queued_at(3))
                     .build();
  const Decisions d = decide_checked(s, kNoBackfill, kNow);
  EXPECT_EQ(start_hours(d, 1), 4);
  EXPECT_EQ(start_hours(d, 2), 1);
  EXPECT_EQ(start_hours(d, 3), 6);
}

// The forecast uses run-time estimates where running jobs have them, and the backfill
// head keeps its planned start (a promise, with a latest start) as its expected start;
// the jobs behind it queue after it.
TEST(Forecast, TheHeadKeepsItsPlannedStartAndTheJobsBehindItFollowIt) {
  const auto s = FleetBuilder()
                     .dgx("a")
                     .running(JobBuilder(9).gpus(8).max_runtime(hours(10)).estimate(
                                  hours(2), EstimateBasis::kSpec),
                              whole("a"))
                     .run_state(9, {.started_ms = 9 * kHour})
                     .pending(JobBuilder(1).gpus(8).max_runtime(hours(2)).queued_at(1))
                     .pending(JobBuilder(2).gpus(8).max_runtime(hours(3)).queued_at(2))
                     .build();
  const Decisions d = decide_checked(s, SchedulerConfig{.backfill = true}, kNow);
  ASSERT_EQ(d.planned_starts.size(), 1u);
  EXPECT_EQ(d.planned_starts[0].job.value, 1);
  EXPECT_EQ(pending_of(d, 1)->start, d.planned_starts[0].expected);
  EXPECT_EQ(start_hours(d, 1), 1);  // the estimate: started 1 h ago, 2 h expected
  EXPECT_EQ(start_hours(d, 2), 3);
}

// No forecast where none can be computed: a job that can never fit, and one held by its
// tenant's quota, have none.
TEST(Forecast, NoStartForAJobThatNeverFitsOrWaitsForQuota) {
  const auto s = FleetBuilder()
                     .dgx("a")
                     .quota("t", "H100", 0, 0)
                     .pending(JobBuilder(1).gpus(16).queued_at(1))
                     .pending(JobBuilder(2).tenant("t").gpus(1).queued_at(2))
                     .build();
  const Decisions d = decide_checked(s, kNoBackfill, kNow);
  EXPECT_EQ(pending_of(d, 1)->kind, PendingKind::kUnschedulable);
  EXPECT_EQ(start_hours(d, 1), -1);
  EXPECT_EQ(pending_of(d, 2)->kind, PendingKind::kQuota);
  EXPECT_EQ(start_hours(d, 2), -1);
}

}  // namespace
}  // namespace corral::sched
