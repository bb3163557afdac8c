#include "core/drift.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace corral::core {
namespace {

// The Kolmogorov distribution's survival function, P(K > x): 2 sum (-1)^(k-1) e^(-2k^2x^2).
double kolmogorov_sf(double x) {
  if (x <= 0) return 1;
  if (x < 0.2) return 1;  // the series converges slowly here; the value is 1 to 1e-12
  double sum = 0;
  for (int k = 1; k <= 100; ++k) {
    const double term = std::exp(-2.0 * k * k * x * x);
    sum += (k % 2 == 1 ? 1 : -1) * term;
    if (term < 1e-16) break;
  }
  return std::clamp(2 * sum, 0.0, 1.0);
}

// Each bin's share of `values`, bins of equal width over [lo, hi].
std::vector<double> shares(const std::vector<double>& values, double lo, double hi, int bins) {
  std::vector<double> out(static_cast<std::size_t>(bins), 0.0);
  const double width = (hi - lo) / bins;
  for (const double v : values) {
    int b = width > 0 ? static_cast<int>((v - lo) / width) : 0;
    b = std::clamp(b, 0, bins - 1);  // hi itself falls in the last bin, as numpy's
    out[static_cast<std::size_t>(b)] += 1;
  }
  for (double& s : out) s = std::max(s / static_cast<double>(values.size()), 0.0001);
  return out;
}

}  // namespace

DriftStats drift_stats(std::vector<double> reference, std::vector<double> current, int bins) {
  DriftStats out;
  if (reference.empty() || current.empty()) return out;
  std::sort(reference.begin(), reference.end());
  std::sort(current.begin(), current.end());
  const double n = static_cast<double>(reference.size()), m = static_cast<double>(current.size());
  // Both empirical CDFs over the merged values: KS is their largest gap, Wasserstein the
  // area between them.
  std::size_t i = 0, j = 0;
  double last = std::min(reference.front(), current.front());
  while (i < reference.size() || j < current.size()) {
    const double x = j == current.size() || (i < reference.size() && reference[i] <= current[j])
                         ? reference[i]
                         : current[j];
    const double gap = std::abs(static_cast<double>(i) / n - static_cast<double>(j) / m);
    out.wasserstein += gap * (x - last);
    last = x;
    while (i < reference.size() && reference[i] == x) ++i;
    while (j < current.size() && current[j] == x) ++j;
    out.ks = std::max(out.ks, std::abs(static_cast<double>(i) / n - static_cast<double>(j) / m));
  }
  out.ks_p = kolmogorov_sf(std::sqrt(n * m / (n + m)) * out.ks);
  const double mean = std::accumulate(reference.begin(), reference.end(), 0.0) / n;
  double var = 0;
  for (const double v : reference) var += (v - mean) * (v - mean);
  const double sd = reference.size() > 1 ? std::sqrt(var / (n - 1)) : 0;
  out.wasserstein_normed = sd > 0 ? out.wasserstein / sd : 0;
  const double lo = std::min(reference.front(), current.front());
  const double hi = std::max(reference.back(), current.back());
  const auto ref = shares(reference, lo, hi, bins), cur = shares(current, lo, hi, bins);
  // PSI on the shares as floored; JS on them scaled back to distributions (the floor
  // makes them sum a little over 1), as scipy's jensenshannon does.
  const double ref_sum = std::accumulate(ref.begin(), ref.end(), 0.0);
  const double cur_sum = std::accumulate(cur.begin(), cur.end(), 0.0);
  double js = 0;
  for (std::size_t b = 0; b < ref.size(); ++b) {
    out.psi += (cur[b] - ref[b]) * std::log(cur[b] / ref[b]);
    const double p = ref[b] / ref_sum, q = cur[b] / cur_sum, mid = (p + q) / 2;
    js += 0.5 * p * std::log(p / mid) + 0.5 * q * std::log(q / mid);
  }
  out.jensen_shannon = std::sqrt(std::max(js, 0.0));
  return out;
}

}  // namespace corral::core
