#include "sched/estimate.h"

#include <gtest/gtest.h>

namespace corral::sched {
namespace {

using core::seconds;

TEST(Estimate, TheSpecWinsOverHistory) {
  const RuntimeEstimate e = estimate_runtime(seconds(7200), {seconds(60), seconds(120)});
  EXPECT_EQ(e.basis, EstimateBasis::kSpec);
  EXPECT_EQ(e.runtime, seconds(7200));
  EXPECT_EQ(e.runs, 0);
}

TEST(Estimate, HistoryIsTheMedianSoOneOutlierDoesNotMoveIt) {
  const RuntimeEstimate e =
      estimate_runtime(core::Duration(0), {seconds(3000), seconds(90'000), seconds(3600)});
  EXPECT_EQ(e.basis, EstimateBasis::kHistory);
  EXPECT_EQ(e.runtime, seconds(3600));
  EXPECT_EQ(e.runs, 3);
  // With an even count the upper median: a forecast that errs late, not early.
  EXPECT_EQ(estimate_runtime(core::Duration(0), {seconds(10), seconds(20)}).runtime, seconds(20));
}

TEST(Estimate, OnlyTheLatestRunsCountAndEmptyOnesAreIgnored) {
  // 20 recent runs of 100 s, then 30 old ones of 10,000 s: the old ones are past the
  // window, so the estimate is 100 s from 20 runs. Zero-length runs are not runs.
  std::vector<core::Duration> runs(kEstimateRuns, seconds(100));
  runs.insert(runs.begin(), core::Duration(0));
  runs.insert(runs.end(), 30, seconds(10'000));
  const RuntimeEstimate e = estimate_runtime(core::Duration(0), runs);
  EXPECT_EQ(e.runtime, seconds(100));
  EXPECT_EQ(e.runs, static_cast<std::int32_t>(kEstimateRuns));
}

TEST(Estimate, NothingKnownLeavesTheMaxRuntime) {
  const RuntimeEstimate e = estimate_runtime(core::Duration(0), {});
  EXPECT_EQ(e.basis, EstimateBasis::kMaxRuntime);
  EXPECT_EQ(e.runtime, core::Duration(0));
  JobRequest r{.max_runtime = seconds(3600)};
  EXPECT_EQ(r.expected_runtime(), seconds(3600));
  r.estimate = {.runtime = seconds(90'000), .basis = EstimateBasis::kHistory, .runs = 2};
  EXPECT_EQ(r.expected_runtime(), seconds(3600)) << "never past the limit";
}

TEST(RunHistory, EstimatesFromTheLatestRunsOfTheTenantsJobName) {
  RunHistory h;
  for (int i = 0; i < 30; ++i) h.add_latest(core::TenantId("a"), "train", seconds(1000));
  for (int i = 0; i < 5; ++i) h.add_latest(core::TenantId("a"), "train", seconds(10));
  h.add_older(core::TenantId("a"), "train", seconds(99'999));  // beyond the window: dropped
  JobRequest r{.tenant = core::TenantId("a"), .max_runtime = seconds(86'400)};
  const JobRequest got = h.with_estimate(r, "train");
  EXPECT_EQ(got.estimate.basis, EstimateBasis::kHistory);
  EXPECT_EQ(got.estimate.runs, static_cast<std::int32_t>(kEstimateRuns));
  EXPECT_EQ(got.estimate.runtime, seconds(1000));  // 5 short of the latest 20: the median holds
  // Another tenant's runs, or another name, say nothing; the job's own estimate wins.
  EXPECT_EQ(h.with_estimate(JobRequest{.tenant = core::TenantId("b")}, "train").estimate.basis,
            EstimateBasis::kMaxRuntime);
  EXPECT_EQ(h.with_estimate(r, "eval").estimate.basis, EstimateBasis::kMaxRuntime);
  r.estimate = {.runtime = seconds(60), .basis = EstimateBasis::kSpec};
  EXPECT_EQ(h.with_estimate(r, "train").estimate.runtime, seconds(60));
}

}  // namespace
}  // namespace corral::sched
