// Point-in-time lookups against a brute-force reference over thousands of generated
// events: values written out of event order (late arrivals), equal event times (the later
// write wins), lookups at exactly the TTL's edge, and no answer ever from after the
// instant (leakage).
#include "registry/feature_lookup.h"

#include <random>

#include <gtest/gtest.h>

#include "testing/point_in_time_reference.h"

namespace corral::registry {
namespace {

using core::FeatureValue;
using testing::point_in_time_reference;

TEST(PointInTime, MatchesTheBruteForceReferenceAndNeverLeaksTheFuture) {
  std::mt19937_64 rng(20261204);
  for (int round = 0; round < 50; ++round) {
    const int entities = 1 + static_cast<int>(rng() % 20);
    const std::int64_t ttl = static_cast<std::int64_t>(rng() % 50);
    std::vector<FeatureValue> values;
    const int n = 100 + static_cast<int>(rng() % 200);
    for (int i = 0; i < n; ++i) {
      // Event times on a coarse grid, so equal times are common; written in random order,
      // so late arrivals are the rule.
      values.push_back({.entity = "e" + std::to_string(rng() % entities),
                        .event_ms = static_cast<std::int64_t>(rng() % 200),
                        .seq = i,
                        .values = "{\"x\":" + std::to_string(i) + "}"});
    }
    std::shuffle(values.begin(), values.end(), rng);
    std::vector<LookupRow> rows;
    for (int i = 0; i < 200; ++i) {
      const auto& v = values[rng() % values.size()];
      // At a value's own time, just before it, and at the TTL's edge from it.
      const std::int64_t offsets[] = {0, -1, ttl, ttl + 1, static_cast<std::int64_t>(rng() % 60)};
      rows.push_back({.entity = rng() % 10 == 0 ? "nobody" : v.entity,
                      .at_ms = v.event_ms + offsets[rng() % 5]});
    }
    const auto got = point_in_time(values, rows, ttl);
    ASSERT_EQ(got.size(), rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      SCOPED_TRACE("round " + std::to_string(round) + " row " + std::to_string(i));
      EXPECT_EQ(got[i], point_in_time_reference(values, rows[i], ttl));
      if (got[i] >= 0) {
        const FeatureValue& v = values[static_cast<std::size_t>(got[i])];
        EXPECT_LE(v.event_ms, rows[i].at_ms) << "a value from after the instant";
        EXPECT_GE(v.event_ms, rows[i].at_ms - ttl);
        EXPECT_EQ(v.entity, rows[i].entity);
      }
    }
  }
}

TEST(PointInTime, TheEdgesAreInclusiveAndTiesGoToTheLaterWrite) {
  const std::vector<FeatureValue> values = {
      {.entity = "u1", .event_ms = 100, .seq = 1, .values = "a"},
      {.entity = "u1", .event_ms = 100, .seq = 2, .values = "b"},
      {.entity = "u1", .event_ms = 150, .seq = 3, .values = "c"}};
  const auto got = point_in_time(
      values, {{"u1", 99}, {"u1", 100}, {"u1", 149}, {"u1", 150}, {"u1", 160}, {"u1", 161}}, 10);
  EXPECT_EQ(got, (std::vector<std::int64_t>{-1, 1, -1, 2, 2, -1}));
}

}  // namespace
}  // namespace corral::registry
