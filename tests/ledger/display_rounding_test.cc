// Display rounding: shown rows add up to the shown total, on the case that broke bills
// (three rows of $0.016667) and on seeded random columns of either sign, where each row
// stays within one unit of its exact value.
#include "ledger/display_rounding.h"

#include <cmath>
#include <numeric>

#include <gtest/gtest.h>

#include "testing/random_fleet.h"

namespace corral::ledger {
namespace {

constexpr std::int64_t kCent = 10'000;  // micro-units

TEST(DisplayRounding, RowsAddUpToTheTotalWhereRoundingEachRowDoesNot) {
  // A GPU-minute at $1 an hour, three times: $0.05 in all, not 3 x $0.02.
  const RoundedColumn c = round_to_total({16'667, 16'667, 16'667}, kCent);
  EXPECT_EQ(c.total, 5);
  EXPECT_EQ(c.rows, (std::vector<std::int64_t>{2, 2, 1}));
}

TEST(DisplayRounding, TheTotalIsRoundedOnceHalfAwayFromZero) {
  EXPECT_EQ(round_to_total({5'000}, kCent).total, 1);
  EXPECT_EQ(round_to_total({-5'000}, kCent).total, -1);
  EXPECT_EQ(round_to_total({4'999}, kCent).total, 0);
  EXPECT_EQ(round_to_total({}, kCent).total, 0);
  // A row taken back (an adjustment) and one given: the rows still add up.
  const RoundedColumn c = round_to_total({-16'667, 33'334}, kCent);
  EXPECT_EQ(c.total, 2);
  EXPECT_EQ(c.rows[0] + c.rows[1], 2);
}

TEST(DisplayRounding, RandomColumnsAddUpAndStayWithinAUnit) {
  for (std::uint64_t seed = 1; seed <= 2000; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    testing::Rng rng(seed);
    const std::int64_t unit = rng.chance(0.5) ? kCent : 36'000;
    std::vector<std::int64_t> values(static_cast<std::size_t>(rng.uniform(0, 12)));
    const bool negatives = rng.chance(0.3);
    for (auto& v : values) v = rng.uniform(negatives ? -5'000'000 : 0, 5'000'000);
    const RoundedColumn c = round_to_total(values, unit);
    ASSERT_EQ(c.rows.size(), values.size());
    EXPECT_EQ(std::accumulate(c.rows.begin(), c.rows.end(), std::int64_t{0}), c.total);
    const double exact =
        static_cast<double>(std::accumulate(values.begin(), values.end(), std::int64_t{0})) /
        static_cast<double>(unit);
    EXPECT_LE(std::abs(static_cast<double>(c.total) - exact), 0.5);
    for (std::size_t i = 0; i < values.size(); ++i) {
      const double v = static_cast<double>(values[i]) / static_cast<double>(unit);
      EXPECT_TRUE(c.rows[i] == std::floor(v) || c.rows[i] == std::ceil(v))
          << values[i] << " shown as " << c.rows[i];
    }
  }
}

}  // namespace
}  // namespace corral::ledger
