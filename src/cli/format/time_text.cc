#include "cli/format/time_text.h"

#include <chrono>
#include <ctime>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/units.h"

namespace corral::cli {
namespace {

constexpr std::int64_t kSecondMs = 1000;
constexpr std::int64_t kMinuteMs = 60 * kSecondMs;
constexpr std::int64_t kHourMs = 60 * kMinuteMs;
constexpr std::int64_t kDayMs = 24 * kHourMs;

}  // namespace

int Zone::offset_minutes(core::Time t) const {
  switch (kind_) {
    case Kind::kUtc:
      return 0;
    case Kind::kFixed:
      return offset_;
    case Kind::kLocal: {
      const std::time_t secs = static_cast<std::time_t>(core::to_ms(t) / kSecondMs);
      std::tm tm{};
      if (localtime_r(&secs, &tm) == nullptr) return 0;
      return static_cast<int>(tm.tm_gmtoff / 60);
    }
  }
  return 0;
}

std::string duration_text(core::Duration d) {
  const std::int64_t ms = std::max<std::int64_t>(0, core::to_ms(d));
  if (ms < kMinuteMs) return fmt::format("{}s", ms / kSecondMs);
  if (ms < kHourMs) return fmt::format("{}m {:02}s", ms / kMinuteMs, ms % kMinuteMs / kSecondMs);
  if (ms < kDayMs) return fmt::format("{}h {:02}m", ms / kHourMs, ms % kHourMs / kMinuteMs);
  return fmt::format("{}d {:02}h", ms / kDayMs, ms % kDayMs / kHourMs);
}

std::string short_duration_text(core::Duration d) {
  const std::int64_t ms = std::max<std::int64_t>(0, core::to_ms(d));
  if (ms < kMinuteMs) return fmt::format("{}s", ms / kSecondMs);
  if (ms < kHourMs) return fmt::format("{}m", ms / kMinuteMs);
  if (ms < kDayMs) return fmt::format("{}h", ms / kHourMs);
  return fmt::format("{}d", ms / kDayMs);
}

std::string relative_text(core::Time t, core::Time now) {
  const core::Duration d = t - now;
  if (d.count() > -kSecondMs && d.count() < kSecondMs) return "now";
  return d.count() < 0 ? short_duration_text(-d) + " ago" : "in " + short_duration_text(d);
}

std::string date_text(core::Time t, const Zone& zone) {
  const core::Time shifted = t + core::Duration(zone.offset_minutes(t) * kMinuteMs);
  const auto second = std::chrono::floor<std::chrono::seconds>(shifted);
  const auto day = std::chrono::floor<std::chrono::days>(second);
  const std::chrono::year_month_day date{day};
  const std::int64_t in_day = (second - day).count();
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}{}", static_cast<int>(date.year()),
                     static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                     in_day / 3600, in_day / 60 % 60, in_day % 60, zone.is_utc() ? " UTC" : "");
}

std::string when_text(core::Time t, const TimeStyle& style) {
  return date_text(t, style.zone) + " (" + relative_text(t, style.now) + ")";
}

std::optional<core::Time> ms_time(const nlohmann::json& ms) {
  if (!ms.is_number_integer() || ms.get<std::int64_t>() == 0) return std::nullopt;
  return core::time_from_ms(ms.get<std::int64_t>());
}

std::string when_text(const nlohmann::json& ms, const TimeStyle& style) {
  const auto t = ms_time(ms);
  return t ? when_text(*t, style) : "-";
}

std::string date_text(const nlohmann::json& ms, const Zone& zone) {
  const auto t = ms_time(ms);
  return t ? date_text(*t, zone) : "-";
}

std::string age_text(const nlohmann::json& ms, const TimeStyle& style) {
  const auto t = ms_time(ms);
  return t ? short_duration_text(style.now - *t) : "-";
}

std::string reason_text(std::string_view reason, const TimeStyle& style) {
  static constexpr std::string_view kTag = core::kInstantTag;
  std::string out;
  std::size_t from = 0;
  for (std::size_t at = reason.find(kTag); at != std::string_view::npos;
       at = reason.find(kTag, from)) {
    std::size_t digits = at;
    while (digits > from && reason[digits - 1] >= '0' && reason[digits - 1] <= '9') --digits;
    out.append(reason.substr(from, digits - from));
    if (digits == at || at - digits > 15) {  // no number before the tag: leave it be
      out.append(reason.substr(digits, at - digits + kTag.size()));
    } else {
      const std::int64_t ms = std::stoll(std::string(reason.substr(digits, at - digits)));
      out += when_text(core::time_from_ms(ms), style);
    }
    from = at + kTag.size();
  }
  out.append(reason.substr(from));
  return out;
}

core::Result<core::Time> parse_when(std::string_view text, const TimeStyle& style) {
  const auto bad = [&] {
    return core::invalid_argument(
        "", fmt::format("must be now, +DURATION (+2h, +1d12h), -DURATION, or a date like "
                        "2026-12-03, 2026-12-03T14:00 or 2026-12-03T14:00:00Z; got \"{}\"",
                        text));
  };
  if (text == "now") return style.now;
  if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
    const auto d = core::parse_duration(text.substr(1));
    if (!d.ok()) return bad();
    return text.front() == '+' ? style.now + *d : style.now - *d;
  }
  const bool utc = !text.empty() && text.back() == 'Z';
  const auto naive = core::parse_utc(text);  // a wall-clock reading, as if in UTC
  if (!naive.ok()) return bad();
  if (utc) return *naive;
  // The instant whose wall-clock reading in the zone is `naive`: the offset at the
  // answer, found from the offset at a first guess (exact but in a DST gap or overlap).
  const auto offset = [&](core::Time t) {
    return core::Duration(style.zone.offset_minutes(t) * kMinuteMs);
  };
  const core::Time guess = *naive - offset(*naive);
  return *naive - offset(guess);
}

}  // namespace corral::cli
