// What `corral tokens` and `corral token create|revoke` print.
//
//   tokens  NAME OWNER ROLE TENANT NODE STATUS CREATED EXPIRES LAST USED (wide adds ID)
//
// STATUS is revoked, expired or active, from revokedAtMs and expiresAtMs against now.
//
// Thread safety: safe for concurrent use (pure functions).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "cli/format/table.h"
#include "cli/format/time_text.h"

namespace corral::cli {

std::string token_status(const nlohmann::json& token, core::Time now);

Table tokens_table(const nlohmann::json& tokens, const TimeStyle& style, bool wide);

// One token's view; the secret too when the answer carries it (a new token).
std::string token_text(const nlohmann::json& token, const TimeStyle& style);

}  // namespace corral::cli
