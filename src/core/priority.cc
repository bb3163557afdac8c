#include "core/priority.h"

#include <utility>

namespace corral::core {

std::vector<PriorityClass> default_priority_classes() {
  return {
      {.name = std::string(kInteractiveClass), .tier = kInteractiveTier, .preemptible = false},
      {.name = "production", .tier = 2, .preemptible = false},
      {.name = "standard", .tier = 1, .preemptible = false},
      {.name = "preemptible", .tier = 0, .preemptible = true},
  };
}

std::int32_t tier_of(std::string_view priority_class) {
  const auto pc = find_priority_class(priority_class);
  return pc ? pc->tier : 1;
}

std::optional<PriorityClass> find_priority_class(std::string_view name) {
  for (PriorityClass& pc : default_priority_classes()) {
    if (pc.name == name) return std::move(pc);
  }
  return std::nullopt;
}

std::string priority_class_name(std::int32_t tier) {
  for (const PriorityClass& pc : default_priority_classes()) {
    if (pc.tier == tier) return pc.name;
  }
  return "tier " + std::to_string(tier);
}

}  // namespace corral::core
