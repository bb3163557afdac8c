// Small string helpers for sched's messages. sched links no formatting library, and
// GCC 12 has no std::format, so messages are concatenated from pieces.
#pragma once

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/ids.h"

namespace corral::sched::detail {

inline void append(std::string& out, std::string_view s) { out += s; }
inline void append(std::string& out, const char* s) { out += s; }
inline void append(std::string& out, const std::string& s) { out += s; }
inline void append(std::string& out, char c) { out += c; }
template <std::integral T>
void append(std::string& out, T v) {
  out += std::to_string(v);
}

// cat("a", 1, "b") == "a1b"
template <typename... Parts>
std::string cat(const Parts&... parts) {
  std::string out;
  (append(out, parts), ...);
  return out;
}

template <typename Tag, typename Rep>
std::string id_text(const core::Id<Tag, Rep>& id) {
  if constexpr (std::is_same_v<Rep, std::string>) {
    return id.value;
  } else {
    return std::to_string(id.value);
  }
}

// A wait for people: "45m", "2h", "2h10m" (rounded up to the minute).
inline std::string format_wait(std::int64_t ms) {
  const std::int64_t minutes = (ms + 59'999) / 60'000;
  if (minutes < 60) return cat(minutes, "m");
  return cat(minutes / 60, "h", minutes % 60 == 0 ? std::string() : cat(minutes % 60, "m"));
}

// GPU-seconds for people, to a tenth of a GPU-hour: "0.4 GPU-h", "12.0 GPU-h".
inline std::string gpu_hours(double gpu_seconds) {
  const auto tenths = static_cast<std::int64_t>(gpu_seconds / 360.0 + 0.5);
  return cat(tenths / 10, ".", tenths % 10, " GPU-h");
}

// A ratio for people, to a tenth: "1.9x".
inline std::string times(double ratio) {
  const auto tenths = static_cast<std::int64_t>(ratio * 10.0 + 0.5);
  return cat(tenths / 10, ".", tenths % 10, "x");
}

}  // namespace corral::sched::detail
