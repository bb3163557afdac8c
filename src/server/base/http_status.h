// The one mapping from Status codes to HTTP statuses (STYLE.md section 6), the JSON
// error body every failed call returns:
//   {"error": {"code", "message", "field", "details": [{"field", "reason"}, ...]}},
// and the one writer of every JSON answer and of the text user bytes take in log lines.
//
// Thread safety: free functions, safe to call concurrently.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "core/status.h"

namespace corral::server {

// InvalidArgument 400, Unauthenticated 401, PermissionDenied 403, NotFound 404,
// AlreadyExists/Aborted/FailedPrecondition 409, ResourceExhausted 429, Unavailable 503,
// Internal/DataLoss 500.
int http_status(core::StatusCode code);

// The body's error code: the agent protocol's own codes for the reasons an agent acts
// on (kFenced "fenced", kStaleAttempt "stale"; docs/agent-protocol.md), else
// core::to_string(status.code()).
std::string_view error_code(const core::Status& status);

// {"error": {"code": error_code(status), "message": ..., "field": ..., "details": [...]}}.
// `message` is the whole failure as one line that names its fields (Status::to_string():
// "gpuz: unknown field"; for several field errors all of them, joined by "; "), so that a
// reader never prefixes it with `field`; `field` is the (first) offending input's path,
// empty unless the input names one, for programs; `details` lists every error on its own
// ({"field", "reason"} per status.errors(), the reason without its path).
// Note for posterity: `message` used to be the bare reason for one field error but the
// joined "path: reason" text for a job spec's, so a client that wrote "field: message"
// printed a spec's field twice ("gpuz: gpuz: unknown field").
std::string error_json(const core::Status& status);

// The Retry-After seconds a ResourceExhausted answer carries: status.retry_after()
// rounded up to whole seconds, at least 1.
std::int64_t retry_after_s(const core::Status& status);

// The text of a JSON answer. Messages quote what the caller sent (a path parameter, a
// header), and those bytes need not be UTF-8: each ill-formed byte is written as U+FFFD
// rather than thrown on, so no answer is ever lost to the bytes it quotes.
std::string json_text(const nlohmann::json& body);

// `text` as a quoted, escaped, ASCII-only JSON string, for log lines: a message that
// quotes a caller can then neither break a line nor smuggle control bytes into a log.
std::string log_text(std::string_view text);

}  // namespace corral::server
