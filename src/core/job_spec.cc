#include "core/job_spec.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

namespace corral::core {

std::string_view to_string(PackLevel level) {
  switch (level) {
    case PackLevel::kNvlink:
      return "nvlink";
    case PackLevel::kNode:
      return "node";
    case PackLevel::kLeaf:
      return "leaf";
    case PackLevel::kSpine:
      return "spine";
    case PackLevel::kNone:
      return "none";
  }
  return "unknown";
}

std::string_view to_string(TopologyMode mode) {
  return mode == TopologyMode::kRequired ? "required" : "preferred";
}

std::string_view to_string(ProcessMode mode) {
  return mode == ProcessMode::kPerNode ? "perNode" : "perGpu";
}

std::string_view to_string(DependencyCondition on) {
  switch (on) {
    case DependencyCondition::kSuccess:
      return "success";
    case DependencyCondition::kFailure:
      return "failure";
    case DependencyCondition::kFinish:
      return "finish";
    case DependencyCondition::kStart:
      return "start";
  }
  return "success";
}

double throughput_at(const std::vector<ScalingPoint>& curve, std::int32_t gpus) {
  if (curve.empty()) return static_cast<double>(gpus);
  double x0 = 0, y0 = 0;
  for (const ScalingPoint& p : curve) {
    if (gpus <= p.gpus) {
      const double t = (static_cast<double>(gpus) - x0) / (static_cast<double>(p.gpus) - x0);
      return y0 + t * (p.throughput - y0);
    }
    x0 = static_cast<double>(p.gpus);
    y0 = p.throughput;
  }
  return y0;
}

std::vector<ScalingPoint> merge_scaling(const ElasticRange& range,
                                        const std::vector<ScalingPoint>& observed) {
  if (observed.empty()) return range.scaling;
  double log_ratio = 0;
  for (const ScalingPoint& p : observed) {
    log_ratio += std::log(p.throughput / throughput_at(range.scaling, p.gpus));
  }
  const double scale = std::exp(log_ratio / static_cast<double>(observed.size()));
  std::vector<ScalingPoint> prior = range.scaling;
  if (prior.empty()) {
    for (const std::int32_t n : {range.min_gpus, range.max_gpus}) {
      prior.push_back({.gpus = n, .throughput = static_cast<double>(n)});
    }
  }
  // Past the largest measured size the prior may promise no more than the last two
  // measurements' slope goes on giving: a job seen flat from 4 to 8 GPUs is not taken to
  // double at 16 because a linear prior says so.
  const ScalingPoint& top = observed.back();
  std::optional<double> slope;
  if (observed.size() >= 2) {
    const ScalingPoint& prev = observed[observed.size() - 2];
    slope = std::max(
        0.0, (top.throughput - prev.throughput) / static_cast<double>(top.gpus - prev.gpus));
  }
  std::map<std::int32_t, double> merged;
  for (const ScalingPoint& p : prior) {
    if (p.gpus < 1) continue;
    double v = p.throughput * scale;
    if (slope && p.gpus > top.gpus) {
      v = std::min(v, top.throughput + *slope * static_cast<double>(p.gpus - top.gpus));
    }
    merged[p.gpus] = v;
  }
  for (const ScalingPoint& p : observed) merged[p.gpus] = p.throughput;  // measured wins
  std::vector<ScalingPoint> out;
  for (const auto& [gpus, throughput] : merged) {
    out.push_back({.gpus = gpus, .throughput = std::clamp(throughput, 1e-9, 1e15)});
  }
  return out;
}

}  // namespace corral::core
