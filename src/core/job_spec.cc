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

}  // namespace corral::core
