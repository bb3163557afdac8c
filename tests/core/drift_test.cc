// Drift statistics against figures computed independently with SciPy 1.10 and NumPy
// (Debian 12's python3-scipy) on the same inputs by tests/core/drift_reference.py, kept here:
//   ks      scipy.stats.ks_2samp(ref, cur).statistic
//   ks_p    scipy.stats.kstwobign.sf(sqrt(n*m/(n+m)) * ks)
//   psi     numpy: 10 equal-width bins over both samples' range (numpy.histogram), shares
//           floored at 0.0001, sum((cur - ref) * ln(cur / ref))
//   js      scipy.spatial.distance.jensenshannon(ref shares, cur shares)
//   w       scipy.stats.wasserstein_distance(ref, cur)
//   w_normed  w / numpy.std(ref, ddof=1)
#include "core/drift.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace corral::core {
namespace {

// ((i * mul) % mod) / div + shift for i in [0, n): exact in every language.
std::vector<double> gen(int n, long mul, long mod, double div, double shift) {
  std::vector<double> out;
  for (long i = 0; i < n; ++i) out.push_back(static_cast<double>((i * mul) % mod) / div + shift);
  return out;
}

struct Case {
  const char* name;
  std::vector<double> reference, current;
  double ks, ks_p, psi, js, w, w_normed;
};

TEST(DriftStats, MatchTheFiguresScipyComputes) {
  const std::vector<Case> cases = {
      {"shifted", gen(200, 7919, 1000, 100.0, 0.0), gen(150, 104729, 997, 90.0, 1.5),
       0.21666666666666667, 0.000639725188310025, 2.515797468222362, 0.3512293269334836,
       1.8017407407407409, 0.6177062863801922},
      {"same", gen(300, 7919, 1000, 100.0, 0.0), gen(300, 6841, 1000, 100.0, 0.0), 0.01, 1.0,
       0.0017937799665531204, 0.014972906337336963, 0.02346666666666669, 0.008071584816417295},
      {"small",
       {1, 2, 2, 3, 4, 5, 5, 5, 9},
       {2, 3, 3, 4, 7, 8, 8},
       0.31746031746031744,
       0.822335333649151,
       7.777963153406257,
       0.6034776514205832,
       1.253968253968254,
       0.5229409114447272},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const DriftStats s = drift_stats(c.reference, c.current);
    EXPECT_NEAR(s.ks, c.ks, 1e-12);
    EXPECT_NEAR(s.ks_p, c.ks_p, 1e-9);
    EXPECT_NEAR(s.psi, c.psi, 1e-9);
    EXPECT_NEAR(s.jensen_shannon, c.js, 1e-9);
    EXPECT_NEAR(s.wasserstein, c.w, 1e-9);
    EXPECT_NEAR(s.wasserstein_normed, c.w_normed, 1e-9);
  }
}

TEST(DriftStats, IdenticalSamplesShowNoDrift) {
  const auto x = gen(500, 7919, 1000, 100.0, 0.0);
  const DriftStats s = drift_stats(x, x);
  EXPECT_EQ(s.ks, 0);
  EXPECT_EQ(s.ks_p, 1);
  EXPECT_NEAR(s.psi, 0, 1e-15);
  EXPECT_NEAR(s.jensen_shannon, 0, 1e-7);
  EXPECT_EQ(s.wasserstein, 0);
}

}  // namespace
}  // namespace corral::core
