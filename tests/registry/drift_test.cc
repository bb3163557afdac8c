// Judging drift on hand-built samples: the method follows the reference's size, the
// thresholds are the reference's, histograms and raw values meet in the histogram's bins,
// and labelled predictions drift by their error.
#include "registry/drift.h"

#include <cmath>

#include <gtest/gtest.h>

namespace corral::registry {
namespace {

std::vector<double> ramp(int n, double shift = 0) {
  std::vector<double> out;
  for (int i = 0; i < n; ++i) out.push_back(i % 100 + shift);
  return out;
}

TEST(DriftJudge, ASmallReferenceIsJudgedByKsAndALargeOneByWasserstein) {
  const DriftReference reference{.features = {{"small", ramp(500)}, {"large", ramp(5000)}}};
  const auto judged = judge(reference, {{"small", ramp(500, 30)}, {"large", ramp(5000, 30)}}, true);
  ASSERT_TRUE(judged.ok()) << judged.status().to_string();
  const FeatureDrift& small = judged->features.at("small");
  EXPECT_TRUE(small.by_ks);
  EXPECT_EQ(small.threshold, 0.05);
  EXPECT_TRUE(small.drifted);
  EXPECT_EQ(small.reference_values, 500);
  const FeatureDrift& large = judged->features.at("large");
  EXPECT_FALSE(large.by_ks);
  EXPECT_EQ(large.threshold, 0.1);
  EXPECT_TRUE(large.drifted);
  EXPECT_EQ(judged->drifted, (std::vector<std::string>{"large", "small"}));
  // The same sample again has not drifted.
  const auto same = judge(reference, {{"small", ramp(500)}}, true);
  EXPECT_FALSE(same->features.at("small").drifted);
  EXPECT_TRUE(same->drifted.empty());
}

TEST(DriftJudge, TheReferencesOwnThresholdsDecide) {
  DriftReference reference{.features = {{"x", ramp(5000)}}};
  const Samples shifted = {{"x", ramp(5000, 5)}};  // a shift of 5 on a spread of 29: 0.17
  EXPECT_TRUE(judge(reference, shifted, true)->drifted.size() == 1);
  reference.thresholds.wasserstein_normed = 0.5;
  EXPECT_TRUE(judge(reference, shifted, true)->drifted.empty());
}

TEST(DriftJudge, AHistogramAndRawValuesMeetInTheHistogramsBins) {
  const Histogram h = histogram_of(ramp(2000), {0, 25, 50, 75, 100});
  const DriftReference reference{.features = {{"x", h}}};
  EXPECT_EQ(size_of(Sample(h)), 2000);
  const auto judged = judge(reference, {{"x", ramp(400)}}, true);
  ASSERT_TRUE(judged.ok()) << judged.status().to_string();
  EXPECT_FALSE(judged->features.at("x").drifted);
  EXPECT_EQ(judged->features.at("x").current_values, 400);
  // Two histograms must share their edges.
  const Histogram other = histogram_of(ramp(400), {0, 50, 100});
  const auto refused = judge(reference, {{"x", other}}, true);
  EXPECT_EQ(refused.status().field(), "features.x.edges");
}

TEST(DriftJudge, ASampleWithoutReferenceIsRefusedOnlyWhereRequired) {
  const DriftReference reference{.features = {{"x", ramp(100)}}};
  const auto refused = judge(reference, {{"y", ramp(100)}}, true);
  EXPECT_EQ(refused.status().code(), core::StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.status().field(), "features.y");
  const auto skipped = judge(reference, {{"y", ramp(100)}}, false);
  ASSERT_TRUE(skipped.ok());
  EXPECT_TRUE(skipped->features.empty());
}

TEST(DriftPerformance, ErrorAndAccuracyOfLabelledPredictions) {
  const Performance p = performance({0.9, 0.2, 0.6, 0.4}, {1, 0, 0, 0});
  EXPECT_EQ(p.labeled, 4u);
  EXPECT_NEAR(p.mae, (0.1 + 0.2 + 0.6 + 0.4) / 4, 1e-12);
  EXPECT_NEAR(p.rmse, std::sqrt((0.01 + 0.04 + 0.36 + 0.16) / 4), 1e-12);
  ASSERT_TRUE(p.accuracy.has_value());
  EXPECT_EQ(*p.accuracy, 0.75);  // 0.6 read as 1 against a 0
  // Labels that are not all 0 or 1 have no accuracy.
  EXPECT_FALSE(performance({1.5, 2.0}, {2.0, 2.0}).accuracy.has_value());
}

TEST(DriftPerformance, DriftsOnlyPastTheThresholdsTheReferenceSets) {
  const Performance p = performance({0.9, 0.2, 0.6, 0.4}, {1, 0, 0, 0});
  EXPECT_TRUE(performance_drift(p, {}).empty());
  EXPECT_EQ(performance_drift(p, {.mae = 0.2, .accuracy = 0.8}),
            (std::vector<std::string>{"mae", "accuracy"}));
  EXPECT_TRUE(performance_drift(p, {.mae = 0.5, .accuracy = 0.75}).empty());
}

}  // namespace
}  // namespace corral::registry
