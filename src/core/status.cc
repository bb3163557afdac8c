#include "core/status.h"

#include "core/check.h"

namespace corral::core {

std::string_view to_string(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kInvalidArgument:
      return "invalid_argument";
    case StatusCode::kUnauthenticated:
      return "unauthenticated";
    case StatusCode::kPermissionDenied:
      return "permission_denied";
    case StatusCode::kNotFound:
      return "not_found";
    case StatusCode::kAlreadyExists:
      return "already_exists";
    case StatusCode::kAborted:
      return "aborted";
    case StatusCode::kFailedPrecondition:
      return "failed_precondition";
    case StatusCode::kResourceExhausted:
      return "resource_exhausted";
    case StatusCode::kUnavailable:
      return "unavailable";
    case StatusCode::kInternal:
      return "internal";
    case StatusCode::kDataLoss:
      return "data_loss";
  }
  return "unknown";
}

std::string_view to_string(ErrorReason reason) {
  switch (reason) {
    case ErrorReason::kNone:
      return "none";
    case ErrorReason::kStaleEpoch:
      return "stale_epoch";
    case ErrorReason::kFenced:
      return "fenced";
    case ErrorReason::kStaleAttempt:
      return "stale_attempt";
    case ErrorReason::kRaced:
      return "raced";
  }
  return "unknown";
}

std::string to_string(const FieldError& error) {
  if (error.path.empty()) return error.reason;
  return error.path + ": " + error.reason;
}

Status invalid_fields(std::vector<FieldError> errors) {
  CORRAL_CHECK(!errors.empty());
  std::string message;
  for (const FieldError& e : errors) {
    if (!message.empty()) message += "; ";
    message += to_string(e);
  }
  Status s(StatusCode::kInvalidArgument, std::move(message), errors.front().path);
  s.details_ = std::move(errors);
  return s;
}

Status resource_exhausted(std::string message, Duration retry_after) {
  Status s(StatusCode::kResourceExhausted, std::move(message));
  s.retry_after_ = retry_after;
  return s;
}

std::vector<FieldError> Status::errors() const {
  if (ok()) return {};
  if (!details_.empty()) return details_;
  return {FieldError{.path = field_, .reason = message_}};
}

std::string Status::to_string() const {
  if (ok()) return "ok";
  // invalid_fields() already names every field in its message.
  if (field_.empty() || !details_.empty()) return message_;
  return field_ + ": " + message_;
}

}  // namespace corral::core
