#include "core/priority.h"

namespace corral::core {

std::vector<PriorityClass> default_priority_classes() {
  return {
      {.name = "production", .tier = 2, .preemptible = false},
      {.name = "standard", .tier = 1, .preemptible = false},
      {.name = "preemptible", .tier = 0, .preemptible = true},
  };
}

}  // namespace corral::core
