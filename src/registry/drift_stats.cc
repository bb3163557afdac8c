#include "registry/drift_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

namespace corral::registry {
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

// A value and its weight: a sample's values weigh 1, a histogram's bin centres their
// counts.
struct Point {
  double x, w;
};

// KS with its p-value, and Wasserstein raw and normed, between the weighted empirical
// CDFs of two non-empty sets of points sorted by x.
void cdf_stats(const std::vector<Point>& ref, const std::vector<Point>& cur, DriftStats& out) {
  double n = 0, m = 0;
  for (const Point& p : ref) n += p.w;
  for (const Point& p : cur) m += p.w;
  // Both CDFs over the merged values: KS is their largest gap, Wasserstein the area
  // between them.
  std::size_t i = 0, j = 0;
  double fi = 0, fj = 0;
  double last = std::min(ref.front().x, cur.front().x);
  while (i < ref.size() || j < cur.size()) {
    const double x =
        j == cur.size() || (i < ref.size() && ref[i].x <= cur[j].x) ? ref[i].x : cur[j].x;
    out.wasserstein += std::abs(fi / n - fj / m) * (x - last);
    last = x;
    for (; i < ref.size() && ref[i].x == x; ++i) fi += ref[i].w;
    for (; j < cur.size() && cur[j].x == x; ++j) fj += cur[j].w;
    out.ks = std::max(out.ks, std::abs(fi / n - fj / m));
  }
  out.ks_p = kolmogorov_sf(std::sqrt(n * m / (n + m)) * out.ks);
  double mean = 0;
  for (const Point& p : ref) mean += p.w * p.x;
  mean /= n;
  double var = 0;
  for (const Point& p : ref) var += p.w * (p.x - mean) * (p.x - mean);
  const double sd = n > 1 ? std::sqrt(var / (n - 1)) : 0;
  out.wasserstein_normed = sd > 0 ? out.wasserstein / sd : 0;
}

// PSI and Jensen-Shannon over two sets of bin counts: each bin's share, floored at 0.0001
// as Evidently does so PSI stays finite.
void share_stats(std::vector<double> ref, std::vector<double> cur, DriftStats& out) {
  for (auto* counts : {&ref, &cur}) {
    const double total = std::accumulate(counts->begin(), counts->end(), 0.0);
    for (double& c : *counts) c = std::max(c / total, 0.0001);
  }
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
}

std::vector<Point> points_of(const std::vector<double>& sorted) {
  std::vector<Point> out;
  out.reserve(sorted.size());
  for (const double v : sorted) out.push_back({v, 1});
  return out;
}

std::vector<Point> centres_of(const Histogram& h) {
  std::vector<Point> out;
  for (std::size_t b = 0; b < h.counts.size(); ++b) {
    if (h.counts[b] > 0) out.push_back({(h.edges[b] + h.edges[b + 1]) / 2, h.counts[b]});
  }
  return out;
}

}  // namespace

Histogram histogram_of(const std::vector<double>& values, std::vector<double> edges) {
  Histogram h{.edges = std::move(edges)};
  h.counts.assign(h.edges.size() - 1, 0.0);
  for (const double v : values) {
    // The bin whose [lower, upper) holds v; the last bin is closed, and values outside
    // the edges count in the first or last bin.
    const auto upper = std::upper_bound(h.edges.begin() + 1, h.edges.end() - 1, v);
    h.counts[static_cast<std::size_t>(upper - (h.edges.begin() + 1))] += 1;
  }
  return h;
}

DriftStats drift_stats(std::vector<double> reference, std::vector<double> current, int bins) {
  DriftStats out;
  if (reference.empty() || current.empty()) return out;
  std::sort(reference.begin(), reference.end());
  std::sort(current.begin(), current.end());
  cdf_stats(points_of(reference), points_of(current), out);
  // `bins` equal-width bins over both samples' range, their edges as numpy.linspace
  // makes them; the highest value falls in the last bin, as numpy.histogram's.
  const double lo = std::min(reference.front(), current.front());
  const double hi = std::max(reference.back(), current.back());
  const double step = (hi - lo) / bins;
  std::vector<double> edges;
  for (int b = 0; b <= bins; ++b) edges.push_back(b == bins ? hi : b * step + lo);
  if (hi == lo) edges = {lo, lo + 1};  // one value in all: one bin holds both samples
  share_stats(histogram_of(reference, edges).counts, histogram_of(current, edges).counts, out);
  return out;
}

DriftStats drift_stats(const Histogram& reference, const Histogram& current) {
  DriftStats out;
  const auto ref = centres_of(reference), cur = centres_of(current);
  if (ref.empty() || cur.empty() || reference.edges != current.edges) return out;
  cdf_stats(ref, cur, out);
  share_stats(reference.counts, current.counts, out);
  return out;
}

}  // namespace corral::registry
