// The retraining budget on hand-built use: periods from the epoch, GPU-hours counted
// inside the period only, and pending jobs held in order once a limit is reached.
#include "registry/retraining.h"

#include <gtest/gtest.h>

namespace corral::registry {
namespace {

constexpr std::int64_t kHour = 3600 * 1000;

core::Time at_hour(double h) { return core::time_from_ms(static_cast<std::int64_t>(h * kHour)); }

TEST(RetrainingBudget, PeriodsStartAtTheEpoch) {
  const RetrainingBudget day{.period = core::Duration(24 * kHour)};
  EXPECT_EQ(period_start(day, at_hour(24 * 3 + 5)), at_hour(24 * 3));
  EXPECT_EQ(period_start(day, at_hour(24 * 3)), at_hour(24 * 3));
  const RetrainingBudget week{.period = core::Duration(7 * 24 * kHour)};
  EXPECT_EQ(period_start(week, at_hour(24 * 10)), at_hour(24 * 7));
}

TEST(RetrainingBudget, UseCountsHeldGpusAndHoursInsideThePeriod) {
  const RetrainingBudget day{.gpu_hours = 10, .period = core::Duration(24 * kHour)};
  const core::Time now = at_hour(24 + 6);  // 06:00 on day 2
  const RetrainingUse use = retraining_use(day,
                                           {{at_hour(20), at_hour(24 + 2)},   // 2 h in the period
                                            {at_hour(24 + 4), std::nullopt},  // 2 h, still held
                                            {at_hour(10), at_hour(12)}},      // before it
                                           now);
  EXPECT_EQ(use.gpus, 1);
  EXPECT_DOUBLE_EQ(use.gpu_hours, 4.0);
  EXPECT_EQ(use.period_start, at_hour(24));
  EXPECT_EQ(use.period_end, at_hour(48));
}

TEST(RetrainingBudget, PendingJobsAreHeldInOrderOnceALimitIsReached) {
  const core::TenantId t("vision");
  const RetrainingBudget budget{.max_gpus = 8};
  const RetrainingUse use{.gpus = 4};
  const auto held = retraining_holds(
      t, budget, use,
      {{core::JobId(1), 2}, {core::JobId(2), 4}, {core::JobId(3), 2}, {core::JobId(4), 16}});
  // Job 1 fits (6 of 8), job 2 would take 10, job 3 fits beside job 1 (8), job 4 never can.
  ASSERT_EQ(held.size(), 2u);
  EXPECT_EQ(held.at(2),
            "held: retraining budget: tenant vision's retraining jobs running or ahead in the "
            "queue take 6 of the 8 GPUs its retraining budget allows at once "
            "(retraining.maxGpus); this one needs 4");
  EXPECT_EQ(held.at(4), "held: retraining budget: " + exceeds_budget(t, budget, 16));
  EXPECT_EQ(exceeds_budget(t, budget, 8), "");
  EXPECT_EQ(exceeds_budget(t, {}, 1000), "");
}

TEST(RetrainingBudget, UsedUpHoursHoldEveryPendingJobUntilTheNextPeriod) {
  const RetrainingBudget budget{.gpu_hours = 10};
  const RetrainingUse use{.gpu_hours = 10.5, .period_end = at_hour(48)};
  const auto held = retraining_holds(core::TenantId("nlp"), budget, use,
                                     {{core::JobId(5), 1}, {core::JobId(6), 1}});
  ASSERT_EQ(held.size(), 2u);
  EXPECT_NE(held.at(5).find("used 10.5 of its 10 GPU-hours"), std::string::npos) << held.at(5);
  EXPECT_NE(held.at(5).find("1970-01-03"), std::string::npos) << held.at(5);
  EXPECT_TRUE(
      retraining_holds(core::TenantId("nlp"), budget, {.gpu_hours = 9}, {{core::JobId(5), 1}})
          .empty());
}

}  // namespace
}  // namespace corral::registry
