// Who a caller is to corrald, parsed once from the token's stored role: everything past
// authentication compares these, never strings.
//
//   admin   everything
//   member  its own tenant's jobs (other tenants' job ids answer 404)
//   agent   the agent protocol for its own node only
//   join    POST /v1/agents/join and nothing else
//   metrics GET /metrics and nothing else (a scraper's token: the series name tenants,
//           jobs and nodes, so /metrics is not public)
//
// Thread safety: free functions without state.
#pragma once

#include <string_view>

#include "core/result.h"

namespace corral::server {

enum class Role { kAdmin, kMember, kAgent, kJoin, kMetrics };

std::string_view to_string(Role role);

// The role `text` names; InvalidArgument naming `role` otherwise.
core::Result<Role> parse_role(std::string_view text);

}  // namespace corral::server
