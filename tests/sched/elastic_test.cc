// Elastic allocation on hand-drawn clusters: the scaling curve decides where idle GPUs
// go (water-filling over log throughput), how large a job starts (the efficiency floor)
// and whether a resize is worth its restart (hysteresis).
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

// Twelve idle GPUs, two jobs at 2 GPUs that may grow to 8. Job 1 scales linearly, job 2
// barely (2 GPUs: 10, 4: 11, 8: 12): job 1's steps add the most log-throughput per GPU
// and come first, to 8; job 2 then grows to 4, where a GPU is still worth 0.55 of one of
// its first two, and no further (at 6, 0.38: under the 0.5 floor).
TEST(Elastic, IdleGpusGoWhereTheyAddTheMostThroughput) {
  FleetBuilder f;
  f.dgx("a").dgx("b");
  f.running(JobBuilder(1).gpus(2).elastic(2, 8, 2), {{"a", 0}, {"a", 1}});
  f.running(JobBuilder(2).gpus(2).elastic(2, 8, 2).scaling({{2, 10.0}, {4, 11.0}, {8, 12.0}}),
            {{"a", 2}, {"a", 3}});
  const Decisions d = decide_checked(f.build(), {}, kNow);
  EXPECT_EQ(resized_to(d, 1), 8);
  EXPECT_EQ(resized_to(d, 2), 4);

  // With no floor job 2 takes the rest: each of its steps still adds some throughput.
  SchedulerConfig any_size;
  any_size.elastic_min_efficiency = 0;
  const Decisions all = decide_checked(f.build(), any_size, kNow);
  EXPECT_EQ(resized_to(all, 1), 8);
  EXPECT_EQ(resized_to(all, 2), 8);
}

// Two linear jobs at 1 and 4 GPUs, 4 idle GPUs: water-filling doubles the small one
// first (log 2 per GPU) and gives the rest to whichever gains more per GPU, instead of
// handing everything to the lower job id.
TEST(Elastic, GrowthIsProportionallyFair) {
  FleetBuilder f;
  f.node("n", "H100", 9, 1);
  f.running(JobBuilder(1).gpus(4).elastic(1, 8), {{"n", 0}, {"n", 1}, {"n", 2}, {"n", 3}});
  f.running(JobBuilder(2).gpus(1).elastic(1, 8), {{"n", 4}});
  const Decisions d = decide_checked(f.build(), {}, kNow);
  // Steps of one GPU, by log gain per GPU: job 2 1->2 (0.69), 2->3 (0.41), 3->4 (0.29),
  // then job 1 4->5 and job 2 4->5 tie (0.22) and the earlier job wins: 5 and 4, where
  // the sum of log throughputs (log 20) is the largest any split of the 9 GPUs reaches.
  EXPECT_EQ(resized_to(d, 1), 5);
  EXPECT_EQ(resized_to(d, 2), 4);
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

// A job about to finish is not restarted to grow: 2 -> 4 GPUs halves its remaining 40 s,
// saving 20 s, less than its 60-s restore plus the 30-s resize cost. With 2 hours left it
// grows.
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
// restore) would gain most per GPU, but 4 -> 8 saves only 75 s of its 90-s restart and
// 4 -> 12 does not fit; job 2 (4 -> 8 adds half its throughput, hours left) grows.
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
