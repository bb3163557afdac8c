// field_count<T>(): the number of fields of an aggregate, at compile time, so a test can
// static_assert that a struct did not gain a field its code does not handle yet.
//
// It probes aggregate initialization with one more "any field" initializer at a time:
// T{f, f, ...} compiles with at most as many initializers as T has fields.
#pragma once

#include <cstddef>
#include <utility>

namespace corral::testing {
namespace detail {

// Converts to any field type (by reference, so no constructor of the field competes).
struct AnyField {
  template <typename T>
  operator T&() const;  // NOLINT(google-explicit-constructor): the point
};

}  // namespace detail

template <typename T, typename... Fields>
constexpr std::size_t field_count() {
  if constexpr (requires { T{std::declval<Fields>()..., detail::AnyField{}}; }) {
    return field_count<T, Fields..., detail::AnyField>();
  } else {
    return sizeof...(Fields);
  }
}

}  // namespace corral::testing
