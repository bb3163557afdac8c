// Status: the outcome of an operation that can fail for a reason the caller may handle.
//
// Shaped like absl::Status. A small set of canonical codes; `field` carries the path of
// the offending input ("resources.gpus") for InvalidArgument. Messages are lowercase
// without a trailing period and name the rule and the value.
//
// Expected outcomes (a job that does not fit) are data, not a Status; bugs are
// CORRAL_CHECK failures, not a Status. See STYLE.md section 6.
//
// Thread safety: a value type; distinct objects may be used from different threads.
#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace corral::core {

enum class StatusCode {
  kOk,
  kInvalidArgument,     // bad input; `field` names where (HTTP 400)
  kUnauthenticated,     // 401
  kPermissionDenied,    // 403
  kNotFound,            // 404
  kAlreadyExists,       // 409
  kAborted,             // 409: conflict or stale epoch, retry the transaction
  kFailedPrecondition,  // 409: illegal state transition, retry only once state changes
  kResourceExhausted,   // 429
  kUnavailable,         // 503: retry the call
  kInternal,            // 500
  kDataLoss,            // 500
};

std::string_view to_string(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message, std::string field = {})
      : code_(code), message_(std::move(message)), field_(std::move(field)) {}

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  const std::string& field() const { return field_; }

  // "field: message" when a field is set, else the message; "ok" for OK.
  std::string to_string() const;

  friend bool operator==(const Status&, const Status&) = default;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  std::string field_;
};

inline Status ok_status() { return Status(); }
inline Status invalid_argument(std::string field, std::string message) {
  return Status(StatusCode::kInvalidArgument, std::move(message), std::move(field));
}
inline Status not_found(std::string message) {
  return Status(StatusCode::kNotFound, std::move(message));
}
inline Status failed_precondition(std::string message) {
  return Status(StatusCode::kFailedPrecondition, std::move(message));
}
inline Status internal_error(std::string message) {
  return Status(StatusCode::kInternal, std::move(message));
}

}  // namespace corral::core

// Returns from the enclosing function when `expr` (a Status) is not OK.
#define CORRAL_RETURN_IF_ERROR(expr)                 \
  do {                                               \
    ::corral::core::Status corral_status_ = (expr);  \
    if (!corral_status_.ok()) return corral_status_; \
  } while (false)
