// The one mapping from Status codes to HTTP statuses (STYLE.md section 6), and the
// JSON error body every failed call returns: {"error": {"code", "message", "field"}}.
//
// Thread safety: free functions, safe to call concurrently.
#pragma once

#include <string>

#include "core/status.h"

namespace corral::server {

// InvalidArgument 400, Unauthenticated 401, PermissionDenied 403, NotFound 404,
// AlreadyExists/Aborted/FailedPrecondition 409, ResourceExhausted 429, Unavailable 503,
// Internal/DataLoss 500.
int http_status(core::StatusCode code);

// {"error": {"code": "invalid_argument", "message": ..., "field": ...}}; the code is
// core::to_string(StatusCode), the field empty unless the input names one.
std::string error_json(const core::Status& status);

}  // namespace corral::server
