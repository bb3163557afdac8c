// Elastic allocation on hand-drawn clusters: the scaling curves decide where GPUs go
// (water-filling over the harmonic mean of speedups, idle GPUs and those moved between
// running jobs), how large a job starts (the efficiency floor) and whether a resize is
// worth its restart (hysteresis, the re-plan period).
#include <cmath>

#include <gtest/gtest.h>

#include "core/job_spec.h"
#include "testing/decide_helpers.h"
#include "testing/fleet_builder.h"

namespace corral::sched {
namespace {

using testing::decide_checked;
using testing::FleetBuilder;
using testing::JobBuilder;
using testing::kHour;
using testing::kNow;
using testing::pending_of;
using testing::placement_of;

std::int32_t resized_to(const Decisions& d, std::int64_t job) {
  for (const Resize& r : d.resizes) {
    if (r.job.value == job) return r.to_gpus;
  }
  return 0;
}

TEST(Scaling, ThroughputInterpolatesThroughTheOriginAndIsFlatPastTheLastPoint) {
  const std::vector<core::ScalingPoint> curve = {{2, 10.0}, {4, 16.0}};
  EXPECT_DOUBLE_EQ(core::throughput_at(curve, 1), 5.0);
  EXPECT_DOUBLE_EQ(core::throughput_at(curve, 2), 10.0);
  EXPECT_DOUBLE_EQ(core::throughput_at(curve, 3), 13.0);
  EXPECT_DOUBLE_EQ(core::throughput_at(curve, 8), 16.0);
  EXPECT_DOUBLE_EQ(core::throughput_at({}, 7), 7.0) << "no curve: linear";
}

// Measured throughput replaces the declared curve where it was measured; elsewhere the
// declared points survive scaled by the geometric mean of measured / declared. With no
// curve declared the prior is linear over the range's ends.
TEST(Scaling, MeasurementsCorrectTheDeclaredCurve) {
  const core::ElasticRange declared{
      .min_gpus = 2, .max_gpus = 8, .scaling = {{2, 10.0}, {4, 20.0}, {8, 40.0}}};
  EXPECT_EQ(core::merge_scaling(declared, {}), declared.scaling) << "nothing measured";
  // Measured 15 at 4 and 20 at 8 (declared 20 and 40): scale sqrt(0.75 x 0.5) = 0.612.
  const auto merged = core::merge_scaling(declared, {{4, 15.0}, {8, 20.0}});
  ASSERT_EQ(merged.size(), 3u);
  EXPECT_NEAR(merged[0].throughput, 10 * std::sqrt(0.375), 1e-12);
  EXPECT_EQ(merged[1], (core::ScalingPoint{4, 15.0}));
  EXPECT_EQ(merged[2], (core::ScalingPoint{8, 20.0}));
  // Linear prior: measured 3 at 4 GPUs puts 1.5 at 2 and 6 at 8.
  const core::ElasticRange linear{.min_gpus = 2, .max_gpus = 8};
  EXPECT_EQ(core::merge_scaling(linear, {{4, 3.0}}),
            (std::vector<core::ScalingPoint>{{2, 1.5}, {4, 3.0}, {8, 6.0}}));
  // Flat from 4 to 8 (400 both): the linear prior's 16 is not believed past the slope.
  const core::ElasticRange wide{.min_gpus = 1, .max_gpus = 16};
  const auto flat = core::merge_scaling(wide, {{4, 400.0}, {8, 400.0}});
  ASSERT_EQ(flat.size(), 4u);
  EXPECT_EQ(flat.back(), (core::ScalingPoint{16, 400.0}));
  // Still rising (300 to 400 from 4 to 8): 16 at most 400 + 8 x 25.
  const auto rising = core::merge_scaling(wide, {{4, 300.0}, {8, 400.0}});
  EXPECT_EQ(rising.back(), (core::ScalingPoint{16, 600.0}));
}

// A curve that barely rises: 1 GPU 1.0, 2: 1.1, 4: 1.2, 8: 1.25.
const std::vector<core::ScalingPoint> kFlat = {{1, 1.0}, {2, 1.1}, {4, 1.2}, {8, 1.25}};

// One 8-GPU node, nothing idle: job 1 holds 6 GPUs it barely uses (kFlat), job 2 (linear)
// 2, both started `held_ms` before kNow.
FleetBuilder flat_and_linear(std::int64_t held_ms) {
  FleetBuilder f;
  f.dgx("a");
  f.running(JobBuilder(1).gpus(6).elastic(1, 8).scaling(kFlat),
            {{"a", 0}, {"a", 1}, {"a", 2}, {"a", 3}, {"a", 4}, {"a", 5}});
  f.running(JobBuilder(2).gpus(2).elastic(1, 8), {{"a", 6}, {"a", 7}});
  for (std::int64_t job : {1, 2}) f.run_state(job, {.started_ms = 10 * kHour - held_ms});
  return f;
}

// Six idle GPUs, two jobs at 1 GPU that may grow to 8: job 1 scales linearly, job 2
// barely. The water-fill over the harmonic mean of speedups gives job 1 the steps that
// add the most (to 2, to 3), then job 2's first (1.1x), then job 1's to 5, and the last
// GPU to job 2 (1.15x at 3, worth more than job 1's sixth).
TEST(Elastic, IdleGpusGoWhereTheyAddTheMost) {
  FleetBuilder f;
  f.dgx("a");
  f.running(JobBuilder(1).gpus(1).elastic(1, 8), {{"a", 0}});
  f.running(JobBuilder(2).gpus(1).elastic(1, 8).scaling(kFlat), {{"a", 1}});
  const Decisions d = decide_checked(f.build(), {}, kNow);
  EXPECT_EQ(resized_to(d, 1), 5);
  EXPECT_EQ(resized_to(d, 2), 3);
}

// Nothing idle: job 1 holds 6 GPUs it barely uses, job 2 (linear) 2. Both ran for hours
// at their sizes, so the restart is cheap against the gain: GPUs move from job 1 to
// job 2, to the same split as from scratch (3 and 5), in one decision: the shrink frees
// the GPUs, the growth takes them.
TEST(Elastic, GpusMoveFromAJobThatScalesBadlyToOneThatScalesWell) {
  const Decisions d = decide_checked(flat_and_linear(10 * kHour).build(), {}, kNow);
  ASSERT_EQ(d.resizes.size(), 2u);
  EXPECT_EQ(d.resizes[0].job.value, 1);  // the shrink comes first, so its GPUs are free
  EXPECT_EQ(d.resizes[0].to_gpus, 3);
  EXPECT_EQ(d.resizes[0].gpus.size(), 3u);
  EXPECT_EQ(d.resizes[0].reason,
            "shrank from 6 to 3 GPUs for job 2, which gains more from them (elastic "
            "re-allocation)");
  EXPECT_EQ(d.resizes[1].job.value, 2);
  EXPECT_EQ(d.resizes[1].to_gpus, 5);
  EXPECT_NE(d.resizes[1].reason.find("2.5x its throughput"), std::string::npos)
      << d.resizes[1].reason;
}

// The same two jobs, started 2 minutes ago: a job that held its size for t is taken to
// run about t more, so each restart (30 s) costs a quarter of the horizon, and the move
// (harmonic mean of speedups from 1.34 to 1.26 once discounted) does not pay.
TEST(Elastic, AMoveMustPayForItsRestarts) {
  EXPECT_TRUE(decide_checked(flat_and_linear(120'000).build(), {}, kNow).resizes.empty());
}

// With restarts free, a job is still re-sized only once it held its size for the re-plan
// period (60 s): 30 s after its start nothing moves, 61 s after it the move is made.
TEST(Elastic, AJobIsReSizedOnlyAfterTheReplanPeriod) {
  SchedulerConfig free_restarts;
  free_restarts.elastic_resize_cost = core::Duration(0);
  free_restarts.preemption.min_runtime = core::Duration(0);
  EXPECT_TRUE(decide_checked(flat_and_linear(30'000).build(), free_restarts, kNow).resizes.empty());
  EXPECT_EQ(decide_checked(flat_and_linear(61'000).build(), free_restarts, kNow).resizes.size(),
            2u);
}

// A job's speedups come from its curve on the type it runs on: job 1 declared a linear
// curve but measured a flat one on H100, so it gives GPUs to job 2 as the flat job above
// does (3 and 5; by the linear curve the two would split the node 4 and 4).
TEST(Elastic, AJobIsSizedByItsCurveOnTheTypeItRunsOn) {
  const auto measured_on = [](const char* type) {
    FleetBuilder f;
    f.dgx("a");
    f.running(JobBuilder(1).gpus(6).elastic(1, 8).scaling_on(type, kFlat),
              {{"a", 0}, {"a", 1}, {"a", 2}, {"a", 3}, {"a", 4}, {"a", 5}});
    f.running(JobBuilder(2).gpus(2).elastic(1, 8), {{"a", 6}, {"a", 7}});
    return decide_checked(f.build(), {}, kNow);
  };
  const Decisions d = measured_on("H100");
  EXPECT_EQ(resized_to(d, 1), 3);
  EXPECT_EQ(resized_to(d, 2), 5);
  // Measured on another type only: the declared (linear) curve counts on H100.
  const Decisions linear = measured_on("A100-80GB");
  EXPECT_EQ(resized_to(linear, 1), 4);
  EXPECT_EQ(resized_to(linear, 2), 4);
}

// Two linear jobs at 4 and 1 GPUs, 4 idle: the harmonic mean favours the job behind, so
// job 2 grows to 5 and job 1 keeps its 4 (growing it to 5 instead would restart it for
// less than job 2 gains).
TEST(Elastic, TheJobBehindGetsTheIdleGpus) {
  FleetBuilder f;
  f.node("n", "H100", 9, 1);
  f.running(JobBuilder(1).gpus(4).elastic(1, 8), {{"n", 0}, {"n", 1}, {"n", 2}, {"n", 3}});
  f.running(JobBuilder(2).gpus(1).elastic(1, 8), {{"n", 4}});
  const Decisions d = decide_checked(f.build(), {}, kNow);
  EXPECT_EQ(resized_to(d, 1), 0);
  EXPECT_EQ(resized_to(d, 2), 5);
}

// A pending elastic job starts at the largest size that fits where each GPU is still
// worth half of what one is at its minimum: 6 of the 8 free.
TEST(Elastic, StartsAtTheLargestEfficientSize) {
  FleetBuilder f;
  f.dgx("a");
  f.pending(JobBuilder(1).gpus(1).elastic(1, 8).scaling({{1, 1.0}, {4, 3.0}, {8, 3.2}}));
  const Decisions d = decide_checked(f.build(), {}, kNow);
  ASSERT_NE(placement_of(d, 1), nullptr);
  // 5 GPUs: 3.05 / 5 = 0.61 >= 0.5; 6: 0.52; 7: 3.15 / 7 = 0.45 < 0.5.
  EXPECT_EQ(placement_of(d, 1)->gpus.size(), 6u);
}

// Job 2 was grown from 1 to 7 GPUs and job 1 shrunk from 7 to 1 by one decision; job 2's
// worker stopped first, and it is requeued while job 1 still holds its 7 GPUs. It waits
// for them rather than restart at the one GPU free and lose its growth. A job without a
// target, or whose target's GPUs went to a job that is not stopping or that a job ahead
// of it in the queue waits for, starts at what fits.
TEST(Elastic, AJobRequeuedToGrowWaitsForTheShrinkItGrowsInto) {
  const std::vector<std::pair<std::string, std::int32_t>> first7 = {
      {"a", 0}, {"a", 1}, {"a", 2}, {"a", 3}, {"a", 4}, {"a", 5}, {"a", 6}};
  const auto snapshot = [&](bool stopping, bool resized, bool ahead = false) {
    FleetBuilder f;
    f.dgx("a");
    f.running(JobBuilder(1).gpus(7).elastic(1, 7), first7);
    f.run_state(1, {.started_ms = 0, .stopping = stopping});
    JobBuilder grower = JobBuilder(2).gpus(1).elastic(1, 7).queued_at(10 * kHour - 1000);
    if (resized) grower.resize_target(7);
    f.pending(grower);
    if (ahead) f.pending(JobBuilder(3).gpus(7).queued_at(10 * kHour - 60'000));
    return f.build();
  };
  const Decisions waits = decide_checked(snapshot(true, true), {}, kNow);
  EXPECT_EQ(placement_of(waits, 2), nullptr);
  ASSERT_NE(pending_of(waits, 2), nullptr);
  EXPECT_EQ(pending_of(waits, 2)->kind, PendingKind::kWaiting);
  EXPECT_EQ(pending_of(waits, 2)->reason,
            "waiting for job 1, already stopping, to free the GPUs this job will use");
  for (const auto& [stopping, resized] : {std::pair{true, false}, std::pair{false, true}}) {
    const Decisions d = decide_checked(snapshot(stopping, resized), {}, kNow);
    ASSERT_NE(placement_of(d, 2), nullptr) << stopping << resized;
    EXPECT_EQ(placement_of(d, 2)->gpus.size(), 1u) << stopping << resized;
  }
  // Job 3, ahead in the queue, waits for job 1's GPUs (a victim of its own, say).
  const Decisions behind = decide_checked(snapshot(true, true, true), {}, kNow);
  ASSERT_NE(pending_of(behind, 3), nullptr);
  EXPECT_EQ(pending_of(behind, 3)->kind, PendingKind::kWaiting);
  ASSERT_NE(placement_of(behind, 2), nullptr);
  EXPECT_EQ(placement_of(behind, 2)->gpus.size(), 1u);
}

// A job about to finish is not restarted to grow: with 40 s left by its limit, the
// horizon over which 4 GPUs would pay is 40 s, shorter than its restart (60-s restore and
// the 30-s resize cost). With 2 hours left it grows.
TEST(Elastic, ResizesOnlyWhenTheGainBeatsTheRestart) {
  const auto with = [](std::int64_t max_runtime_ms) {
    FleetBuilder f;
    f.node("n", "H100", 4, 1);
    f.running(JobBuilder(1)
                  .gpus(2)
                  .elastic(2, 4, 2)
                  .checkpoint(core::seconds(600), core::seconds(60))
                  .max_runtime(core::Duration(max_runtime_ms)),
              {{"n", 0}, {"n", 1}});
    f.run_state(1, {.started_ms = 9 * kHour});
    return f.build();
  };
  EXPECT_TRUE(decide_checked(with(kHour + 40'000), {}, kNow).resizes.empty());
  EXPECT_EQ(resized_to(decide_checked(with(3 * kHour), {}, kNow), 1), 4);
}

// A job whose next steps do not pay for its restart takes no GPUs from one whose steps
// do. One 12-GPU node with 4 idle: job 1 (linear, 4 to 16 in fours, 150 s left, 60-s
// restore) would gain most per GPU, but its 90-s restart costs 60% of those 150 s, so 8
// GPUs are worth less to it than its 4 now; job 2 (4 -> 8 adds half its throughput,
// hours left) grows.
TEST(Elastic, AJobThatCannotPayForItsRestartLeavesTheGpusToOthers) {
  FleetBuilder f;
  f.node("n", "H100", 12, 1);
  f.running(JobBuilder(1)
                .gpus(4)
                .elastic(4, 16, 4)
                .checkpoint(core::seconds(600), core::seconds(60))
                .max_runtime(core::Duration(kHour + 150'000)),
            {{"n", 0}, {"n", 1}, {"n", 2}, {"n", 3}});
  f.run_state(1, {.started_ms = 9 * kHour});
  f.running(JobBuilder(2).gpus(4).elastic(4, 8, 4).scaling({{4, 10.0}, {8, 15.0}}),
            {{"n", 4}, {"n", 5}, {"n", 6}, {"n", 7}});
  const Decisions d = decide_checked(f.build(), {}, kNow);
  EXPECT_EQ(resized_to(d, 1), 0);
  EXPECT_EQ(resized_to(d, 2), 8);
}

}  // namespace
}  // namespace corral::sched
