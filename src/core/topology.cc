#include "core/topology.h"

#include <algorithm>

namespace corral::core {

std::string_view to_string(NodeAdminState state) {
  switch (state) {
    case NodeAdminState::kActive:
      return "active";
    case NodeAdminState::kCordoned:
      return "cordoned";
    case NodeAdminState::kDraining:
      return "draining";
  }
  return "unknown";
}

std::string_view to_string(GpuCondition condition) {
  switch (condition) {
    case GpuCondition::kOk:
      return "ok";
    case GpuCondition::kHot:
      return "hot";
    case GpuCondition::kUnhealthy:
      return "unhealthy";
  }
  return "unknown";
}

std::int64_t node_gpu_watts(const Node& node, const GpuType& type) {
  std::int64_t watts = 0;
  for (const Gpu& g : node.gpus) {
    watts = std::max<std::int64_t>(watts,
                                   g.power_limit_watts > 0 ? g.power_limit_watts : type.tdp_watts);
  }
  return watts;
}

}  // namespace corral::core
