// Status: the outcome of an operation that can fail for a reason the caller may handle.
//
// Shaped like absl::Status. A small set of canonical codes; `field` carries the path of
// the offending input ("resources.gpus") for InvalidArgument. Messages are lowercase
// without a trailing period and name the rule and the value.
//
// Beyond the code, a Status may carry:
//   - an ErrorReason, for the few failures a caller acts on (a stale scheduler epoch, a
//     fenced agent, a lost compare-and-set). Callers test `s.is(ErrorReason::k...)`,
//     never the message, so messages are free to change (RocksDB's subcodes).
//   - every field error of a bad input (invalid_fields()), not only the first: a job spec
//     with three mistakes answers all three.
//   - how long to wait before asking again (ResourceExhausted), which the HTTP layer
//     sends as Retry-After.
//
// Note for posterity: these used to be recognised by substring (a message containing
// "epoch", starting with "fenced: " or "stale: "), and Retry-After travelled beside
// the Status in a thread_local. The store then retried every Aborted whose message
// lacked "epoch" (five runs of a refused stale report, or of "node n1 has not joined"),
// and rewording a message silently changed what the agent or the store did.
//
// Expected outcomes (a job that does not fit) are data, not a Status; bugs are
// CORRAL_CHECK failures, not a Status. See STYLE.md section 6.
//
// Thread safety: a value type; distinct objects may be used from different threads.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/time.h"

namespace corral::core {

enum class StatusCode {
  kOk,
  kInvalidArgument,     // bad input; `field` names where (HTTP 400)
  kUnauthenticated,     // 401
  kPermissionDenied,    // 403
  kNotFound,            // 404
  kAlreadyExists,       // 409
  kAborted,             // 409: a conflict; the reason says whether to retry (kRaced) or not
  kFailedPrecondition,  // 409: illegal state transition, retry only once state changes
  kResourceExhausted,   // 429, with retry_after()
  kUnavailable,         // 503: retry the call
  kInternal,            // 500
  kDataLoss,            // 500
};

std::string_view to_string(StatusCode code);

// Why an operation failed, where a caller acts on more than the code. Each reason goes
// with one code (the factories below pair them); most failures have kNone.
enum class ErrorReason {
  kNone,
  // Aborted: the scheduler's shard epoch moved on (store::Tx::check_epoch); another
  // corrald holds the lease. Final: this scheduler stops scheduling, nothing retries.
  kStaleEpoch,
  // Aborted: an agent's session epoch is not current (its node was lost or it never
  // joined). Final; on the wire error code `fenced`: the agent stops every worker and
  // joins again.
  kFenced,
  // Aborted: a report for a job attempt that is not the job's current one. Final; on
  // the wire error code `stale`: the agent drops the report.
  kStaleAttempt,
  // Aborted: a compare-and-set lost, or the database saw a serialization conflict or a
  // busy lock. store::Store::transact runs the call again from the start; only this
  // reason is retried.
  kRaced,
};

std::string_view to_string(ErrorReason reason);

// One mistake in an input: where ("resources.gpus", empty for the whole input) and why.
struct FieldError {
  std::string path;
  std::string reason;  // lowercase; names the rule and the value

  friend bool operator==(const FieldError&, const FieldError&) = default;
};

// "path: reason", or just the reason when the path is empty.
std::string to_string(const FieldError& error);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message, std::string field = {})
      : code_(code), message_(std::move(message)), field_(std::move(field)) {}
  Status(StatusCode code, ErrorReason reason, std::string message)
      : code_(code), reason_(reason), message_(std::move(message)) {}

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  ErrorReason reason() const { return reason_; }
  // True when this failure has `reason` (never for OK).
  bool is(ErrorReason reason) const { return reason_ == reason && !ok(); }
  const std::string& message() const { return message_; }
  const std::string& field() const { return field_; }

  // Every error this Status reports, first to last: the list given to invalid_fields(),
  // else this one ({field(), message()}); empty for OK.
  std::vector<FieldError> errors() const;

  // How long the caller should wait before asking again (ResourceExhausted); zero when
  // nothing was said.
  Duration retry_after() const { return retry_after_; }

  // "field: message" when a field is set, else the message (which for invalid_fields()
  // names every field already); "ok" for OK.
  std::string to_string() const;

  friend bool operator==(const Status&, const Status&) = default;

 private:
  friend Status invalid_fields(std::vector<FieldError> errors);
  friend Status resource_exhausted(std::string message, Duration retry_after);

  StatusCode code_ = StatusCode::kOk;
  ErrorReason reason_ = ErrorReason::kNone;
  std::string message_;
  std::string field_;
  std::vector<FieldError> details_;  // set by invalid_fields() only
  Duration retry_after_{0};
};

inline Status ok_status() { return Status(); }
inline Status invalid_argument(std::string field, std::string message) {
  return Status(StatusCode::kInvalidArgument, std::move(message), std::move(field));
}
// InvalidArgument naming every error: field() is the first one's path, message() all of
// them joined by "; " (as to_string(FieldError)), errors() the list itself.
// REQUIRES: !errors.empty().
Status invalid_fields(std::vector<FieldError> errors);
inline Status not_found(std::string message) {
  return Status(StatusCode::kNotFound, std::move(message));
}
inline Status failed_precondition(std::string message) {
  return Status(StatusCode::kFailedPrecondition, std::move(message));
}
inline Status internal_error(std::string message) {
  return Status(StatusCode::kInternal, std::move(message));
}
// ResourceExhausted asking the caller to wait `retry_after` before trying again.
Status resource_exhausted(std::string message, Duration retry_after);

// The Aborted failures, one per reason (see ErrorReason).
inline Status stale_epoch(std::string message) {
  return Status(StatusCode::kAborted, ErrorReason::kStaleEpoch, std::move(message));
}
inline Status fenced(std::string message) {
  return Status(StatusCode::kAborted, ErrorReason::kFenced, std::move(message));
}
inline Status stale_attempt(std::string message) {
  return Status(StatusCode::kAborted, ErrorReason::kStaleAttempt, std::move(message));
}
inline Status raced(std::string message) {
  return Status(StatusCode::kAborted, ErrorReason::kRaced, std::move(message));
}

}  // namespace corral::core

// Returns from the enclosing function when `expr` (a Status) is not OK.
#define CORRAL_RETURN_IF_ERROR(expr)                 \
  do {                                               \
    ::corral::core::Status corral_status_ = (expr);  \
    if (!corral_status_.ok()) return corral_status_; \
  } while (false)
