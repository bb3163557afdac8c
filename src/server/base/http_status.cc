#include "server/base/http_status.h"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace corral::server {

int http_status(core::StatusCode code) {
  using core::StatusCode;
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kUnauthenticated:
      return 401;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kAlreadyExists:
    case StatusCode::kAborted:
    case StatusCode::kFailedPrecondition:
      return 409;
    case StatusCode::kResourceExhausted:
      return 429;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kInternal:
    case StatusCode::kDataLoss:
      return 500;
  }
  return 500;
}

std::string_view error_code(const core::Status& status) {
  switch (status.reason()) {
    case core::ErrorReason::kFenced:
      return "fenced";
    case core::ErrorReason::kStaleAttempt:
      return "stale";
    case core::ErrorReason::kNone:
    case core::ErrorReason::kStaleEpoch:
    case core::ErrorReason::kRaced:
      break;
  }
  return core::to_string(status.code());
}

std::string error_json(const core::Status& status) {
  nlohmann::json details = nlohmann::json::array();
  for (const core::FieldError& e : status.errors()) {
    details.push_back({{"field", e.path}, {"reason", e.reason}});
  }
  const nlohmann::json body = {{"error",
                                {{"code", std::string(error_code(status))},
                                 {"message", status.to_string()},
                                 {"field", status.field()},
                                 {"details", std::move(details)}}}};
  return json_text(body);
}

std::string json_text(const nlohmann::json& body) {
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string log_text(std::string_view text) {
  return nlohmann::json(text).dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
}

std::int64_t retry_after_s(const core::Status& status) {
  const std::int64_t ms = core::to_ms(status.retry_after());
  return std::max<std::int64_t>(1, (ms + 999) / 1000);
}

}  // namespace corral::server
