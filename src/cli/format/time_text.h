// Times as a person reads them: durations ("4m 12s", "3h 05m"), instants relative to now
// ("3m ago", "in 2h") and absolute ("2026-12-03 14:05:09", local time, or UTC with
// --utc), and the instants a person writes ("now", "+2h", "2026-12-03T14:00").
// Raw milliseconds stay in -o json and -o yaml only.
//
// Every function here is pure: "now" and the zone arrive in a TimeStyle, so tests freeze
// both (tests/cli/format_test.cc). Only Zone::local() reads the process's TZ.
//
// Thread safety: safe for concurrent use.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "core/result.h"
#include "core/time.h"

namespace corral::cli {

// A time zone: UTC, the process's local zone (TZ, through localtime_r), or a fixed
// offset (for tests).
class Zone {
 public:
  static Zone utc() { return Zone(Kind::kUtc, 0); }
  static Zone local() { return Zone(Kind::kLocal, 0); }
  static Zone fixed(int offset_minutes) { return Zone(Kind::kFixed, offset_minutes); }

  // Minutes east of UTC at instant `t` (daylight saving included for local).
  int offset_minutes(core::Time t) const;
  bool is_utc() const { return kind_ == Kind::kUtc; }

 private:
  enum class Kind { kUtc, kLocal, kFixed };
  Zone(Kind kind, int offset) : kind_(kind), offset_(offset) {}
  Kind kind_;
  int offset_;
};

// What every rendering of a time needs: the moment it is rendered, and the zone.
struct TimeStyle {
  core::Time now;
  Zone zone = Zone::local();
};

// Two units, the second zero-padded: "0s", "45s", "4m 12s", "3h 05m", "2d 04h".
// A negative duration is shown as zero (clocks of two machines disagree a little).
std::string duration_text(core::Duration d);
// One unit, rounded down: "45s", "4m", "3h", "2d" (kubectl's AGE).
std::string short_duration_text(core::Duration d);
// `t` against `now`: "3m ago", "in 2h", or "now" within a second.
std::string relative_text(core::Time t, core::Time now);
// "2026-12-03 14:05:09" in the zone; with " UTC" after it for the UTC zone.
std::string date_text(core::Time t, const Zone& zone);
// Both: "2026-12-03 14:05:09 (3m ago)".
std::string when_text(core::Time t, const TimeStyle& style);

// An instant the API sent as milliseconds since the epoch; none for null, 0 or a
// non-number (the API writes 0 for "never").
std::optional<core::Time> ms_time(const nlohmann::json& ms);
// The texts above for such a field, "-" when it has none.
std::string when_text(const nlohmann::json& ms, const TimeStyle& style);
std::string date_text(const nlohmann::json& ms, const Zone& zone);
std::string age_text(const nlohmann::json& ms, const TimeStyle& style);  // short, since then

// A reason the server wrote with "<ms> (ms since epoch)" in it, with each such
// instant as when_text; other text unchanged.
std::string reason_text(std::string_view reason, const TimeStyle& style);

// An instant as a person writes it: "now"; "+2h", "-30m", "+1d12h" (core::parse_duration,
// from now); "2026-12-03", "2026-12-03T14:00", "2026-12-03 14:00:30" in the style's zone,
// or in UTC with a trailing Z. InvalidArgument says which forms are accepted.
core::Result<core::Time> parse_when(std::string_view text, const TimeStyle& style);

}  // namespace corral::cli
