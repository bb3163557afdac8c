// ASHA's stopping rule (sched/asha.h): a small case checked by hand, and the rule against
// a brute-force reading of its definition on many random arrivals.
#include "sched/asha.h"

#include <algorithm>
#include <random>

#include <gtest/gtest.h>

namespace corral::sched {
namespace {

using core::MetricGoal;

TEST(Asha, HandCheckedArrivalsAtOneRung) {
  // Reduction factor 3: the first trial goes on; then each goes on while it is within the
  // best ceil(n / 3) of the n that reached the rung so far.
  std::vector<double> at;
  const auto arrive = [&](double v) {
    const RungVerdict r = judge_rung(at, v, MetricGoal::kMinimize, 3);
    at.push_back(v);
    return r;
  };
  RungVerdict r = arrive(0.50);
  EXPECT_TRUE(r.continues);
  EXPECT_EQ(r.kept, 1);
  r = arrive(0.60);  // second of 2, 1 kept
  EXPECT_FALSE(r.continues);
  EXPECT_EQ(r.rank, 2);
  EXPECT_EQ(r.cut, 0.50);
  r = arrive(0.40);  // best of 3
  EXPECT_TRUE(r.continues);
  r = arrive(0.45);  // second of 4, 2 kept
  EXPECT_TRUE(r.continues);
  EXPECT_EQ(r.kept, 2);
  EXPECT_EQ(r.cut, 0.45);
  r = arrive(0.50);  // ties 0.50 and ranks behind it: fourth of 5, 2 kept
  EXPECT_FALSE(r.continues);
  EXPECT_EQ(r.rank, 4);
  r = arrive(0.30);
  EXPECT_TRUE(r.continues);
  // Maximizing turns it around: 0.9 is best of 2.
  EXPECT_TRUE(judge_rung({0.5}, 0.9, MetricGoal::kMaximize, 2).continues);
  EXPECT_FALSE(judge_rung({0.5, 0.9}, 0.1, MetricGoal::kMaximize, 2).continues);
}

// The definition, read literally: sort everyone at the rung best first (earlier trials
// ahead of this one on a tie); this one goes on iff it is among the first ceil(n / eta).
bool asha_by_definition(const std::vector<double>& earlier, double value, MetricGoal goal,
                        int eta) {
  std::vector<std::pair<double, int>> all;  // (value, arrival), this one last
  for (std::size_t i = 0; i < earlier.size(); ++i) all.push_back({earlier[i], static_cast<int>(i)});
  all.push_back({value, static_cast<int>(earlier.size())});
  std::stable_sort(all.begin(), all.end(), [&](const auto& a, const auto& b) {
    return core::better(goal, a.first, b.first);
  });
  const auto kept =
      (all.size() + static_cast<std::size_t>(eta) - 1) / static_cast<std::size_t>(eta);
  for (std::size_t i = 0; i < kept; ++i) {
    if (all[i].second == static_cast<int>(earlier.size())) return true;
  }
  return false;
}

TEST(Asha, MatchesItsDefinitionOnRandomArrivals) {
  std::mt19937_64 rng(43);
  for (int round = 0; round < 2000; ++round) {
    const int eta = 2 + static_cast<int>(rng() % 4);
    const MetricGoal goal = rng() % 2 ? MetricGoal::kMinimize : MetricGoal::kMaximize;
    std::vector<double> at;
    const int n = 1 + static_cast<int>(rng() % 40);
    int continued = 0;
    for (int i = 0; i < n; ++i) {
      const double v = static_cast<double>(rng() % 20) / 10.0;  // ties are common
      const RungVerdict r = judge_rung(at, v, goal, eta);
      ASSERT_EQ(r.continues, asha_by_definition(at, v, goal, eta))
          << "round " << round << " arrival " << i << " value " << v;
      ASSERT_EQ(r.reached, i + 1);
      // The cut is a value some trial at the rung has, and one that goes on is no worse.
      ASSERT_TRUE(std::find(at.begin(), at.end(), r.cut) != at.end() || r.cut == v);
      if (r.continues) {
        ASSERT_FALSE(core::better(goal, r.cut, v));
      }
      continued += r.continues;
      at.push_back(v);
    }
    // The first always goes on.
    ASSERT_GE(continued, 1);
  }
}

}  // namespace
}  // namespace corral::sched
