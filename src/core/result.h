// Result<T>: a T or the Status that explains why there is none (like absl::StatusOr).
//
// Thread safety: a value type.
#pragma once

#include <utility>
#include <variant>

#include "core/check.h"
#include "core/status.h"

namespace corral::core {

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT(google-explicit-constructor): return a T
  Result(Status status) : value_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    CORRAL_CHECK(!std::get<Status>(value_).ok());
  }

  bool ok() const { return std::holds_alternative<T>(value_); }
  // OK when a value is held.
  Status status() const { return ok() ? Status() : std::get<Status>(value_); }

  // REQUIRES: ok().
  const T& value() const& { return checked(); }
  T& value() & { return checked(); }
  T&& value() && { return std::move(checked()); }
  const T& operator*() const& { return checked(); }
  T& operator*() & { return checked(); }
  const T* operator->() const { return &checked(); }
  T* operator->() { return &checked(); }

 private:
  T& checked() {
    CORRAL_CHECK(ok());
    return std::get<T>(value_);
  }
  const T& checked() const {
    CORRAL_CHECK(ok());
    return std::get<T>(value_);
  }

  std::variant<T, Status> value_;
};

}  // namespace corral::core

#define CORRAL_CONCAT_INNER_(a, b) a##b
#define CORRAL_CONCAT_(a, b) CORRAL_CONCAT_INNER_(a, b)

// Declares `lhs` from a Result<T> expression, or returns its Status from the enclosing
// function. Usage: CORRAL_ASSIGN_OR_RETURN(auto spec, parse_job_spec(text));
#define CORRAL_ASSIGN_OR_RETURN(lhs, expr)                    \
  auto CORRAL_CONCAT_(corral_result_, __LINE__) = (expr);     \
  if (!CORRAL_CONCAT_(corral_result_, __LINE__).ok())         \
    return CORRAL_CONCAT_(corral_result_, __LINE__).status(); \
  lhs = std::move(CORRAL_CONCAT_(corral_result_, __LINE__)).value()
