#include "core/job_spec.h"

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

}  // namespace corral::core
