#include "registry/drift.h"

#include <cmath>

namespace corral::registry {
namespace {

// Two samples compared as they are; where either is a histogram, the other is counted
// into its bins.
core::Result<DriftStats> compare(const Sample& ref, const Sample& cur, const std::string& path) {
  const auto* ref_values = std::get_if<std::vector<double>>(&ref);
  const auto* cur_values = std::get_if<std::vector<double>>(&cur);
  if (ref_values && cur_values) return drift_stats(*ref_values, *cur_values);
  const auto* ref_h = std::get_if<Histogram>(&ref);
  const auto* cur_h = std::get_if<Histogram>(&cur);
  if (ref_h && cur_h && ref_h->edges != cur_h->edges) {
    return core::invalid_argument(path + ".edges", "must be the reference's edges");
  }
  const std::vector<double>& edges = (ref_h ? ref_h : cur_h)->edges;
  const auto binned = [&](const Sample& s) {
    const auto* h = std::get_if<Histogram>(&s);
    return h ? *h : histogram_of(std::get<std::vector<double>>(s), edges);
  };
  return drift_stats(binned(ref), binned(cur));
}

}  // namespace

double size_of(const Sample& sample) {
  if (const auto* values = std::get_if<std::vector<double>>(&sample)) {
    return static_cast<double>(values->size());
  }
  double total = 0;
  for (const double c : std::get<Histogram>(sample).counts) total += c;
  return total;
}

core::Result<DriftJudgement> judge(const DriftReference& reference, const Samples& current,
                                   bool required) {
  DriftJudgement out;
  for (const auto& [name, sample] : current) {
    const std::string path = "features." + name;
    const auto ref = reference.features.find(name);
    if (ref == reference.features.end()) {
      if (!required) continue;
      return core::invalid_argument(path, "has no reference sample");
    }
    CORRAL_ASSIGN_OR_RETURN(const DriftStats s, compare(ref->second, sample, path));
    FeatureDrift f{
        .stats = s, .reference_values = size_of(ref->second), .current_values = size_of(sample)};
    f.by_ks = f.reference_values <= kSmallReference;
    f.threshold = f.by_ks ? reference.thresholds.ks_p : reference.thresholds.wasserstein_normed;
    f.drifted = f.by_ks ? s.ks_p < f.threshold : s.wasserstein_normed >= f.threshold;
    if (f.drifted) out.drifted.push_back(name);
    out.features.emplace(name, f);
  }
  return out;
}

Performance performance(const std::vector<double>& predictions, const std::vector<double>& labels) {
  double abs_sum = 0, sq_sum = 0;
  std::size_t right = 0;
  bool binary = true;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const double e = predictions[i] - labels[i];
    abs_sum += std::abs(e);
    sq_sum += e * e;
    binary = binary && (labels[i] == 0 || labels[i] == 1);
    right += (predictions[i] >= 0.5 ? 1.0 : 0.0) == labels[i] ? 1 : 0;
  }
  const double n = static_cast<double>(labels.size());
  Performance p{.labeled = labels.size(), .mae = abs_sum / n, .rmse = std::sqrt(sq_sum / n)};
  if (binary) p.accuracy = static_cast<double>(right) / n;
  return p;
}

std::vector<std::string> performance_drift(const Performance& p,
                                           const DriftThresholds& thresholds) {
  std::vector<std::string> out;
  if (thresholds.mae && p.mae > *thresholds.mae) out.push_back("mae");
  if (thresholds.accuracy && p.accuracy && *p.accuracy < *thresholds.accuracy) {
    out.push_back("accuracy");
  }
  return out;
}

}  // namespace corral::registry
