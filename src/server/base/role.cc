#include "server/base/role.h"

#include <string>

namespace corral::server {

std::string_view to_string(Role role) {
  switch (role) {
    case Role::kAdmin:
      return "admin";
    case Role::kMember:
      return "member";
    case Role::kAgent:
      return "agent";
    case Role::kJoin:
      return "join";
    case Role::kMetrics:
      return "metrics";
  }
  return "unknown";
}

core::Result<Role> parse_role(std::string_view text) {
  for (const Role r : {Role::kAdmin, Role::kMember, Role::kAgent, Role::kJoin, Role::kMetrics}) {
    if (to_string(r) == text) return r;
  }
  return core::invalid_argument("role", "must be admin, member, agent, join or metrics, got '" +
                                            std::string(text.substr(0, 32)) + "'");
}

}  // namespace corral::server
