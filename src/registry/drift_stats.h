// Drift statistics between a reference sample of one feature (or of a model's
// predictions) and a current one (docs/drift.md), as Evidently computes them by default:
// the two-sample Kolmogorov-Smirnov statistic with its asymptotic p-value, the
// population stability index and the Jensen-Shannon distance over shared bins, and the
// Wasserstein (earth mover's) distance, raw and divided by the reference's standard
// deviation.
//
// Thread safety: pure functions.
#pragma once

#include <vector>

namespace corral::registry {

struct DriftStats {
  double ks = 0;                  // max |F_ref - F_cur|
  double ks_p = 1;                // the asymptotic Kolmogorov p-value of ks
  double psi = 0;                 // sum (cur - ref) * ln(cur / ref) over the bins' shares
  double jensen_shannon = 0;      // sqrt of the JS divergence (natural log) of the bins' shares
  double wasserstein = 0;         // integral of |F_ref - F_cur|
  double wasserstein_normed = 0;  // wasserstein / the reference's standard deviation
};

// Both samples must be non-empty. `bins` equal-width bins span the two samples' range;
// an empty bin counts as a share of 0.0001, as Evidently's, so PSI stays finite.
DriftStats drift_stats(std::vector<double> reference, std::vector<double> current, int bins = 10);

// Counts of values in bins: bin b holds [edges[b], edges[b + 1]), the last one closed.
// Edges rise strictly; counts are one fewer, non-negative.
struct Histogram {
  std::vector<double> edges;
  std::vector<double> counts;
};

// `values` counted into the bins of `edges` (at least 2, rising); values outside them
// count in the first or last bin.
Histogram histogram_of(const std::vector<double>& values, std::vector<double> edges);

// The same statistics from two histograms over the same edges, for what is too large to
// send as samples: PSI and Jensen-Shannon over their bins' shares as above; KS (its
// p-value with the counts' totals as the sample sizes) and Wasserstein between the binned
// distributions, each bin's count at its centre, as SciPy computes them with weights.
// All zero when the edges differ or either histogram is empty.
DriftStats drift_stats(const Histogram& reference, const Histogram& current);

}  // namespace corral::registry
