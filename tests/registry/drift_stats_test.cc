// Drift statistics against figures computed independently with SciPy 1.10 and NumPy
// (Debian 12's python3-scipy) on the same inputs by tests/registry/drift_reference.py, kept here:
//   ks      scipy.stats.ks_2samp(ref, cur).statistic
//   ks_p    scipy.stats.kstwobign.sf(sqrt(n*m/(n+m)) * ks)
//   psi     numpy: 10 equal-width bins over both samples' range (numpy.histogram), shares
//           floored at 0.0001, sum((cur - ref) * ln(cur / ref))
//   js      scipy.spatial.distance.jensenshannon(ref shares, cur shares)
//   w       scipy.stats.wasserstein_distance(ref, cur)
//   w_normed  w / numpy.std(ref, ddof=1)
// and for two histograms (counts from numpy.histogram, each bin's count at its centre):
//   ks      numpy: max |cumsum(ref)/n - cumsum(cur)/m|
//   w       scipy.stats.wasserstein_distance(centres, centres, ref, cur)
//   w_normed  w / the counts-weighted standard deviation of the centres (ddof=1)
#include "registry/drift_stats.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace corral::registry {
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

TEST(DriftStats, HistogramsMatchWhatScipyComputesWithWeights) {
  // "shifted"'s samples counted by numpy.histogram in the bins of edges 0, 1, ..., 12.
  std::vector<double> edges;
  for (int e = 0; e <= 12; ++e) edges.push_back(e);
  const Histogram ref{.edges = edges, .counts = {22, 20, 19, 20, 20, 19, 20, 21, 19, 20, 0, 0}};
  const Histogram cur{.edges = edges, .counts = {0, 8, 16, 14, 14, 14, 14, 14, 12, 14, 12, 12}};
  const DriftStats s = drift_stats(ref, cur);
  EXPECT_NEAR(s.ks, 0.16666666666666663, 1e-12);
  EXPECT_NEAR(s.ks_p, 0.019100963861381794, 1e-9);
  EXPECT_NEAR(s.psi, 1.9203367880847484, 1e-9);
  EXPECT_NEAR(s.jensen_shannon, 0.31408132688316887, 1e-9);
  EXPECT_NEAR(s.wasserstein, 1.54, 1e-9);
  EXPECT_NEAR(s.wasserstein_normed, 0.5303867858250672, 1e-9);

  const DriftStats same = drift_stats(ref, ref);
  EXPECT_EQ(same.ks, 0);
  EXPECT_EQ(same.wasserstein, 0);
  EXPECT_NEAR(same.psi, 0, 1e-15);
  // Different edges, or an empty histogram, compare as nothing rather than as garbage.
  const Histogram other{.edges = {0, 2, 12}, .counts = {1, 1}};
  EXPECT_EQ(drift_stats(ref, other).ks, 0);
  EXPECT_EQ(drift_stats(ref, Histogram{.edges = edges, .counts = std::vector<double>(12, 0)}).ks,
            0);
}

TEST(DriftStats, ValuesCountIntoTheBinThatHoldsThem) {
  const Histogram h = histogram_of({-5, 0, 0.5, 1, 1.999, 2, 3, 3.5, 99}, {0, 1, 2, 3});
  // [0, 1): -5 (below: the first bin), 0, 0.5; [1, 2): 1, 1.999; [2, 3]: 2, 3 (the last
  // bin is closed), 3.5 and 99 (above: the last bin).
  EXPECT_EQ(h.counts, (std::vector<double>{3, 2, 4}));
  // Counted samples and their histograms give the same KS and PSI as the samples binned
  // alike would.
  const auto a = gen(400, 7919, 1000, 100.0, 0.0), b = gen(300, 104729, 997, 90.0, 0.5);
  std::vector<double> edges;
  for (int e = 0; e <= 12; ++e) edges.push_back(e);
  const DriftStats binned = drift_stats(histogram_of(a, edges), histogram_of(b, edges));
  const DriftStats raw = drift_stats(a, b);
  EXPECT_GT(binned.ks, 0.5 * raw.ks);
  EXPECT_LE(binned.ks, raw.ks + 1e-12) << "binning can only hide gaps between the CDFs";
}

}  // namespace
}  // namespace corral::registry
