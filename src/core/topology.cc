#include "core/topology.h"

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

}  // namespace corral::core
