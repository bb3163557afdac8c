// A request body that must be one JSON object, parsed one way for every surface (the
// user API, the agent protocol): bytes that are not UTF-8 and numbers no double holds
// are refused naming the field that holds them, where nlohmann would only say "invalid".
//
// Thread safety: a free function, safe to call concurrently.
#pragma once

#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "core/result.h"

namespace corral::core {

// The object `text` holds; InvalidArgument otherwise, naming the field when one is to
// blame (not UTF-8, a number past a double) and "" when the whole body is.
Result<nlohmann::json> parse_json_object(std::string_view text);

}  // namespace corral::core
