// Priority classes: named tiers. A higher tier is scheduled first and may preempt
// preemptible work of lower tiers. Fair share orders jobs within one tier.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace corral::core {

struct PriorityClass {
  std::string name;
  std::int32_t tier = 0;     // higher runs first
  bool preemptible = false;  // the default for jobs of this class
};

// Interactive sessions (`corral session`; docs/sessions.md): the tier above production, so
// a person waiting at a terminal goes first in the queue. A session is never preemptible
// and never borrows: it starts only inside its tenant's guarantee, within a per-user GPU
// limit (sched/internal/session_limits.h), and is ended when its GPUs sit idle
// (server/controllers/idle_sessions.h).
inline constexpr std::int32_t kInteractiveTier = 3;
inline constexpr std::string_view kInteractiveClass = "interactive";

// interactive (tier 3), production (tier 2), standard (tier 1), preemptible (tier 0,
// preemptible by default).
std::vector<PriorityClass> default_priority_classes();

// The tier of a built-in class by name; 1 (standard) for a name it does not know.
std::int32_t tier_of(std::string_view priority_class);

// The built-in class named `name`, if there is one.
std::optional<PriorityClass> find_priority_class(std::string_view name);

// The name of the built-in class of `tier` ("tier N" for a tier no class has).
std::string priority_class_name(std::int32_t tier);

}  // namespace corral::core
