// Time in Corral: int64 milliseconds, since the Unix epoch for instants.
//
// `Time` and `Duration` are std::chrono types over int64 milliseconds, so arithmetic
// keeps its units. Code that needs "now" takes a Clock (clock.h) or, in sched, the
// `now` argument; only a main() constructs a SystemClock.
#pragma once

#include <chrono>
#include <cstdint>

namespace corral::core {

using Duration = std::chrono::duration<std::int64_t, std::milli>;
using Time = std::chrono::time_point<std::chrono::system_clock, Duration>;

constexpr Time time_from_ms(std::int64_t ms) { return Time(Duration(ms)); }
constexpr std::int64_t to_ms(Time t) { return t.time_since_epoch().count(); }
constexpr std::int64_t to_ms(Duration d) { return d.count(); }
constexpr Duration seconds(std::int64_t s) { return Duration(s * 1000); }

}  // namespace corral::core
