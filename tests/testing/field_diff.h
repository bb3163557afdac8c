// field_diff(a, b): the first difference between two values of plain data, field by
// field, or nullopt when they are equal. For tests that hold two producers of one struct
// to each other: a codec's round trip (tests/cycle), the two snapshot adapters.
//
// Aggregates are taken apart by structured binding, with the count from
// cycle::field_count, so a field added to a struct is compared without anyone listing it
// here. Doubles compare by their bits (0.1 + 0.2 is not 0.3, NaN equals the same NaN),
// vectors, optionals and maps element by element, everything else with ==. The path
// names fields by position: `running[3].#7` is the eighth field of running[3].
#pragma once

#include <bit>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/ids.h"
#include "core/time.h"
#include "cycle/field_count.h"

namespace corral::testing {
namespace field_diff_detail {

template <typename T>
struct IsVector : std::false_type {};
template <typename T>
struct IsVector<std::vector<T>> : std::true_type {};
template <typename T>
struct IsOptional : std::false_type {};
template <typename T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <typename T>
struct IsMap : std::false_type {};
template <typename K, typename V>
struct IsMap<std::map<K, V>> : std::true_type {};
template <typename T>
struct IsId : std::false_type {};
template <typename Tag, typename Rep>
struct IsId<core::Id<Tag, Rep>> : std::true_type {};

// The fields of aggregate `t`, as a tuple of references.
template <typename T>
auto fields_of(const T& t) {
  constexpr std::size_t n = cycle::field_count<T>();
  static_assert(n >= 1 && n <= 23, "field_diff takes structs of 1 to 23 fields: add a case");
  if constexpr (n == 1) {
    const auto& [f0] = t;
    return std::tie(f0);
  } else if constexpr (n == 2) {
    const auto& [f0, f1] = t;
    return std::tie(f0, f1);
  } else if constexpr (n == 3) {
    const auto& [f0, f1, f2] = t;
    return std::tie(f0, f1, f2);
  } else if constexpr (n == 4) {
    const auto& [f0, f1, f2, f3] = t;
    return std::tie(f0, f1, f2, f3);
  } else if constexpr (n == 5) {
    const auto& [f0, f1, f2, f3, f4] = t;
    return std::tie(f0, f1, f2, f3, f4);
  } else if constexpr (n == 6) {
    const auto& [f0, f1, f2, f3, f4, f5] = t;
    return std::tie(f0, f1, f2, f3, f4, f5);
  } else if constexpr (n == 7) {
    const auto& [f0, f1, f2, f3, f4, f5, f6] = t;
    return std::tie(f0, f1, f2, f3, f4, f5, f6);
  } else if constexpr (n == 8) {
    const auto& [f0, f1, f2, f3, f4, f5, f6, f7] = t;
    return std::tie(f0, f1, f2, f3, f4, f5, f6, f7);
  } else if constexpr (n == 9) {
    const auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8] = t;
    return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8);
  } else if constexpr (n == 10) {
    const auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9] = t;
    return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9);
  } else if constexpr (n == 11) {
    const auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10] = t;
    return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10);
  } else if constexpr (n == 12) {
    const auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11] = t;
    return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11);
  } else if constexpr (n == 13) {
    const auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12] = t;
    return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12);
  } else if constexpr (n == 14) {
    const auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13] = t;
    return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13);
  } else if constexpr (n == 15) {
    const auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14] = t;
    return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14);
  } else if constexpr (n == 16) {
    const auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15] = t;
    return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15);
  } else if constexpr (n == 17) {
    const auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16] = t;
    return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16);
  } else if constexpr (n == 18) {
    const auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17] =
        t;
    return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17);
  } else if constexpr (n == 19) {
    const auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17,
                 f18] = t;
    return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17,
                    f18);
  } else if constexpr (n == 20) {
    const auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17,
                 f18, f19] = t;
    return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17,
                    f18, f19);
  } else if constexpr (n == 21) {
    const auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17,
                 f18, f19, f20] = t;
    return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17,
                    f18, f19, f20);
  } else if constexpr (n == 22) {
    const auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17,
                 f18, f19, f20, f21] = t;
    return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17,
                    f18, f19, f20, f21);
  } else if constexpr (n == 23) {
    const auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17,
                 f18, f19, f20, f21, f22] = t;
    return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17,
                    f18, f19, f20, f21, f22);
  }
}

template <typename T>
std::string describe(const T& v) {
  if constexpr (std::is_same_v<T, std::string>) {
    return '"' + v + '"';
  } else if constexpr (std::is_same_v<T, bool>) {
    return v ? "true" : "false";
  } else if constexpr (std::is_same_v<T, double>) {
    return std::to_string(v) + " (bits " + std::to_string(std::bit_cast<std::uint64_t>(v)) + ")";
  } else if constexpr (std::is_arithmetic_v<T>) {
    return std::to_string(v);
  } else if constexpr (std::is_enum_v<T>) {
    return "enumerator " + std::to_string(static_cast<long long>(v));
  } else if constexpr (IsId<T>::value) {
    return describe(v.value);
  } else if constexpr (std::is_same_v<T, core::Duration>) {
    return std::to_string(v.count()) + " ms";
  } else if constexpr (std::is_same_v<T, core::Time>) {
    return std::to_string(core::to_ms(v)) + " ms since the epoch";
  } else {
    return "(a value)";
  }
}

template <typename T>
void diff(const T& a, const T& b, const std::string& path, std::optional<std::string>& out) {
  if (out) return;
  const auto differ = [&](const std::string& what) {
    out = (path.empty() ? "(top)" : path) + ": " + what;
  };
  if constexpr (std::is_same_v<T, double>) {
    if (std::bit_cast<std::uint64_t>(a) != std::bit_cast<std::uint64_t>(b)) {
      differ(describe(a) + " vs " + describe(b));
    }
  } else if constexpr (IsVector<T>::value) {
    if (a.size() != b.size()) {
      return differ(std::to_string(a.size()) + " items vs " + std::to_string(b.size()));
    }
    for (std::size_t i = 0; i < a.size() && !out; ++i) {
      diff(a[i], b[i], path + "[" + std::to_string(i) + "]", out);
    }
  } else if constexpr (IsOptional<T>::value) {
    if (a.has_value() != b.has_value()) {
      return differ(a ? "a value vs none" : "none vs a value");
    }
    if (a) diff(*a, *b, path, out);
  } else if constexpr (IsMap<T>::value) {
    if (a.size() != b.size()) {
      return differ(std::to_string(a.size()) + " entries vs " + std::to_string(b.size()));
    }
    for (auto ia = a.begin(), ib = b.begin(); ia != a.end() && !out; ++ia, ++ib) {
      if (!(ia->first == ib->first)) {
        return differ("key " + describe(ia->first) + " vs " + describe(ib->first));
      }
      diff(ia->second, ib->second, path + "[" + describe(ia->first) + "]", out);
    }
  } else if constexpr (std::is_class_v<T> && std::is_aggregate_v<T>) {
    const auto fa = fields_of(a);
    const auto fb = fields_of(b);
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (diff(std::get<I>(fa), std::get<I>(fb), path + ".#" + std::to_string(I), out), ...);
    }
    (std::make_index_sequence<std::tuple_size_v<decltype(fa)>>{});
  } else {
    if (!(a == b)) differ(describe(a) + " vs " + describe(b));
  }
}

}  // namespace field_diff_detail

template <typename T>
std::optional<std::string> field_diff(const T& a, const T& b) {
  std::optional<std::string> out;
  field_diff_detail::diff(a, b, "", out);
  return out;
}

}  // namespace corral::testing
