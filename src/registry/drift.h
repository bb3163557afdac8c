// Judging drift (docs/drift.md): each current sample of a model version against the
// reference sample of the same name, as Evidently does by default (up to 1,000 reference
// values: the KS p-value under 0.05; more: the normed Wasserstein distance at 0.1 or
// above) unless the reference sets its own thresholds; and labelled predictions by their
// error, where the reference sets an error threshold.
//
// Thread safety: plain values and pure functions.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/result.h"
#include "registry/drift_stats.h"

namespace corral::registry {

// Up to here the reference is "small": judged by KS; above, by Wasserstein (Evidently).
inline constexpr double kSmallReference = 1000;

// One feature's sample: its values, or a histogram of them (for what is too large to
// send whole).
using Sample = std::variant<std::vector<double>, Histogram>;
using Samples = std::map<std::string, Sample>;

// How many values a sample holds: a histogram's counts, added up.
double size_of(const Sample& sample);

struct DriftThresholds {
  double ks_p = 0.05;               // a small reference: drifted below this p-value
  double wasserstein_normed = 0.1;  // a larger one: drifted at or above this distance
  std::optional<double> mae;        // labelled predictions: drifted above this error
  std::optional<double> accuracy;   // ... or below this accuracy
  friend bool operator==(const DriftThresholds&, const DriftThresholds&) = default;
};

struct DriftReference {
  Samples features;
  DriftThresholds thresholds;
};

// One feature's verdict.
struct FeatureDrift {
  bool by_ks = true;  // the method: KS for a small reference, else Wasserstein
  double threshold = 0;
  bool drifted = false;
  DriftStats stats;
  double reference_values = 0;
  double current_values = 0;
};

struct DriftJudgement {
  std::map<std::string, FeatureDrift> features;
  std::vector<std::string> drifted;  // the names that drifted, in name order (the labels
                                     // path adds "mae" and "accuracy" after them)
};

// Each of `current`'s samples against the reference's of the same name. A sample with no
// reference is refused (InvalidArgument on features.<name>) when `required`, else left
// out; two histograms must share their edges.
core::Result<DriftJudgement> judge(const DriftReference& reference, const Samples& current,
                                   bool required);

// The labelled predictions' error: mean absolute and root mean square, and accuracy (a
// prediction of 0.5 or more read as 1) when every label is 0 or 1.
struct Performance {
  std::size_t labeled = 0;
  double mae = 0;
  double rmse = 0;
  std::optional<double> accuracy;
};

// `predictions` and `labels` pair up by index; both non-empty, of one length.
Performance performance(const std::vector<double>& predictions, const std::vector<double>& labels);

// Which of the thresholds `p` breaks: "mae", "accuracy", in that order.
std::vector<std::string> performance_drift(const Performance& p, const DriftThresholds& thresholds);

}  // namespace corral::registry
