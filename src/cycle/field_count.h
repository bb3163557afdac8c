// field_count<T>(): the number of fields of an aggregate, known at compile time.
//
// A codec that writes a struct field by field (cycle/capture.cc) states how many fields
// it covers with static_assert(field_count<T>() == N, ...); a field added to T later
// breaks the build there until the codec writes and reads it too, instead of being
// dropped from every captured file without a word.
//
// How: T{x1, ..., xk} is well-formed exactly while k <= the number of fields when each
// xi converts to anything (AnyField). A field that is itself an aggregate takes one xi
// whole (an initializer that converts to the field's type is never split by brace
// elision), so the count is of T's own fields, not of its fields' fields.
//
// REQUIRES: T is an aggregate without base classes, C arrays or reference fields.
#pragma once

#include <cstddef>
#include <type_traits>

namespace corral::cycle {
namespace detail {

// Converts to any type; declared only, as it is only ever used unevaluated.
struct AnyField {
  template <typename T>
  operator T() const;
};

template <typename T, typename... Fields>
constexpr std::size_t count_fields() {
  if constexpr (requires { T{Fields{}..., AnyField{}}; }) {
    return count_fields<T, Fields..., AnyField>();
  } else {
    return sizeof...(Fields);
  }
}

}  // namespace detail

template <typename T>
constexpr std::size_t field_count() {
  static_assert(std::is_aggregate_v<T>, "field_count needs an aggregate");
  return detail::count_fields<T>();
}

}  // namespace corral::cycle
