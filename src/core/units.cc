#include "core/units.h"

#include <cctype>
#include <chrono>
#include <limits>

#include <fmt/format.h>

namespace corral::core {
namespace {

// Reads a run of decimal digits at text[pos], advancing pos. Fails on overflow or on no digits.
bool read_integer(std::string_view text, std::size_t& pos, std::int64_t& out) {
  const std::size_t start = pos;
  std::int64_t value = 0;
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
    const int digit = text[pos] - '0';
    if (value > (std::numeric_limits<std::int64_t>::max() - digit) / 10) return false;
    value = value * 10 + digit;
    ++pos;
  }
  out = value;
  return pos > start;
}

// Multiplies without overflow; false when the product does not fit.
bool checked_mul(std::int64_t a, std::int64_t b, std::int64_t& out) {
  return !__builtin_mul_overflow(a, b, &out);
}

}  // namespace

Result<Duration> parse_duration(std::string_view text) {
  const auto bad = [&](std::string_view why) {
    return invalid_argument("", fmt::format("{}, got \"{}\"", why, text));
  };
  if (text.empty()) return bad("must be a duration like 90s, 30m, 24h or 1h30m");
  std::size_t pos = 0;
  std::int64_t total_ms = 0;
  while (pos < text.size()) {
    std::int64_t n = 0;
    if (!read_integer(text, pos, n)) return bad("must be a duration like 90s, 30m, 24h or 1h30m");
    std::int64_t unit_ms = 0;
    if (text.substr(pos, 2) == "ms") {
      unit_ms = 1;
      pos += 2;
    } else if (pos < text.size()) {
      switch (text[pos]) {
        case 's':
          unit_ms = 1000;
          break;
        case 'm':
          unit_ms = 60'000;
          break;
        case 'h':
          unit_ms = 3'600'000;
          break;
        case 'd':
          unit_ms = 86'400'000;
          break;
        default:
          break;
      }
      if (unit_ms != 0) ++pos;
    }
    if (unit_ms == 0) return bad("each number needs a unit (ms, s, m, h or d)");
    std::int64_t part = 0;
    if (!checked_mul(n, unit_ms, part) || __builtin_add_overflow(total_ms, part, &total_ms)) {
      return bad("is too long");
    }
  }
  return Duration(total_ms);
}

std::string format_duration(Duration d) {
  std::int64_t ms = d.count();
  if (ms == 0) return "0s";
  std::string out;
  if (ms < 0) {
    out = "-";
    ms = -ms;
  }
  static constexpr struct {
    std::int64_t ms;
    const char* unit;
  } kUnits[] = {{86'400'000, "d"}, {3'600'000, "h"}, {60'000, "m"}, {1000, "s"}, {1, "ms"}};
  for (const auto& u : kUnits) {
    if (ms >= u.ms) {
      out += fmt::format("{}{}", ms / u.ms, u.unit);
      ms %= u.ms;
    }
  }
  return out;
}

std::string instant_text(Time t) { return std::to_string(to_ms(t)) + std::string(kInstantTag); }

std::string format_utc(Time t) {
  const auto minute = std::chrono::floor<std::chrono::minutes>(t);
  const auto day = std::chrono::floor<std::chrono::days>(minute);
  const std::chrono::year_month_day date{day};
  const auto in_day = std::chrono::duration_cast<std::chrono::minutes>(minute - day).count();
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02} UTC", static_cast<int>(date.year()),
                     static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                     in_day / 60, in_day % 60);
}

Result<Time> parse_utc(std::string_view text) {
  const auto bad = [&] {
    return invalid_argument(
        "", fmt::format("must be a UTC date like 2026-12-01 or 2026-12-01T06:30:00Z, got \"{}\"",
                        text));
  };
  if (!text.empty() && text.back() == 'Z') text.remove_suffix(1);
  // Fixed-width fields: YYYY-MM-DD, then optionally Thh:mm and :ss.
  const auto field = [&](std::size_t at, std::size_t width, int& out) {
    if (at + width > text.size()) return false;
    out = 0;
    for (std::size_t i = at; i < at + width; ++i) {
      if (text[i] < '0' || text[i] > '9') return false;
      out = out * 10 + (text[i] - '0');
    }
    return true;
  };
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  if (!field(0, 4, y) || text.size() < 10 || text[4] != '-' || !field(5, 2, mo) || text[7] != '-' ||
      !field(8, 2, d)) {
    return bad();
  }
  if (text.size() > 10) {
    if (text.size() < 16 || (text[10] != 'T' && text[10] != ' ') || !field(11, 2, h) ||
        text[13] != ':' || !field(14, 2, mi)) {
      return bad();
    }
    if (text.size() > 16 && (text.size() != 19 || text[16] != ':' || !field(17, 2, s))) {
      return bad();
    }
  }
  const std::chrono::year_month_day date{std::chrono::year(y), std::chrono::month(mo),
                                         std::chrono::day(d)};
  if (!date.ok() || h > 23 || mi > 59 || s > 59) return bad();
  const auto days = std::chrono::sys_days(date);
  return std::chrono::time_point_cast<Duration>(days) + std::chrono::hours(h) +
         std::chrono::minutes(mi) + std::chrono::seconds(s);
}

Result<std::int64_t> parse_memory_mib(std::string_view text) {
  const auto bad = [&](std::string_view why) {
    return invalid_argument("", fmt::format("{}, got \"{}\"", why, text));
  };
  std::size_t pos = 0;
  std::int64_t n = 0;
  if (!read_integer(text, pos, n)) return bad("must be a size like 512Mi, 120Gi or 80G");
  const std::string_view unit = text.substr(pos);
  // Bytes per unit; decimal units (K, M, G, T) are powers of 1000 as in Kubernetes.
  std::int64_t bytes_per_unit = 0;
  if (unit.empty())
    bytes_per_unit = 1;
  else if (unit == "Ki")
    bytes_per_unit = 1LL << 10;
  else if (unit == "Mi")
    bytes_per_unit = 1LL << 20;
  else if (unit == "Gi")
    bytes_per_unit = 1LL << 30;
  else if (unit == "Ti")
    bytes_per_unit = 1LL << 40;
  else if (unit == "K")
    bytes_per_unit = 1'000;
  else if (unit == "M")
    bytes_per_unit = 1'000'000;
  else if (unit == "G")
    bytes_per_unit = 1'000'000'000;
  else if (unit == "T")
    bytes_per_unit = 1'000'000'000'000;
  else
    return bad("unit must be one of Ki, Mi, Gi, Ti, K, M, G, T or none (bytes)");
  std::int64_t bytes = 0;
  if (!checked_mul(n, bytes_per_unit, bytes)) return bad("is too large");
  constexpr std::int64_t kMib = 1LL << 20;
  return (bytes + kMib - 1) / kMib;
}

std::string format_memory_mib(std::int64_t mib) {
  if (mib != 0 && mib % 1024 == 0) return fmt::format("{}Gi", mib / 1024);
  return fmt::format("{}Mi", mib);
}

std::string format_gpu_milli(std::int64_t milli) {
  std::string out = std::to_string(milli / 1000);
  if (const std::int64_t rest = milli % 1000; rest != 0) {
    std::string digits = std::to_string(1000 + rest).substr(1);
    while (digits.back() == '0') digits.pop_back();
    out += "." + digits;
  }
  return out;
}

std::string format_bytes(std::int64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes) / 1024.0;
  std::size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(kUnits)) {
    value /= 1024.0;
    ++unit;
  }
  return fmt::format("{:.1f} {}", value, kUnits[unit]);
}

}  // namespace corral::core
