#include "core/priority.h"

namespace corral::core {

std::vector<PriorityClass> default_priority_classes() {
  return {
      {.name = "production", .tier = 2, .preemptible = false},
      {.name = "standard", .tier = 1, .preemptible = false},
      {.name = "preemptible", .tier = 0, .preemptible = true},
  };
}

std::int32_t tier_of(std::string_view priority_class) {
  for (const PriorityClass& pc : default_priority_classes()) {
    if (pc.name == priority_class) return pc.tier;
  }
  return 1;
}

}  // namespace corral::core
