#include "cycle/internal/json_codec.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace corral::cycle::detail {
namespace {

// JSON integers, signed or unsigned, that fit int64; nullopt for anything else.
std::optional<std::int64_t> as_int64(const Json& j) {
  if (j.is_number_unsigned()) {
    const auto u = j.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return std::nullopt;
    }
    return static_cast<std::int64_t>(u);
  }
  if (j.is_number_integer()) return j.get<std::int64_t>();
  return std::nullopt;
}

void read_int64(const Json& j, const std::string& path, std::int64_t& out, ReadErrors& errors,
                std::string_view what) {
  const auto v = as_int64(j);
  if (!v) return errors.fail(path, fmt::format("must be {}, got {}", what, describe(j)));
  out = *v;
}

void append_integer(std::string& out, std::int64_t v) {
  char buf[24];
  const auto result = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, result.ptr);
}

// The length of the UTF-8 sequence at the start of `s`, or 0 when it is not one
// (overlong forms, surrogates and code points past U+10FFFF included).
std::size_t utf8_length(std::string_view s) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char b0 = byte(0);
  std::size_t n = 0;
  std::uint32_t cp = 0;
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    n = 2;
    cp = b0 & 0x1fu;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    n = 3;
    cp = b0 & 0x0fu;
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    n = 4;
    cp = b0 & 0x07u;
  } else {
    return 0;
  }
  if (s.size() < n) return 0;
  for (std::size_t i = 1; i < n; ++i) {
    if ((byte(i) & 0xc0u) != 0x80u) return 0;
    cp = (cp << 6) | (byte(i) & 0x3fu);
  }
  const bool overlong = (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
  if (overlong || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) return 0;
  return n;
}

}  // namespace

void append_string(std::string& out, std::string_view s) {
  out += '"';
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (const std::size_t n = utf8_length(s.substr(i)); n > 0) {
      out.append(s.substr(i, n));
      i += n;
      continue;
    } else {
      out += "\\ufffd";
    }
    ++i;
  }
  out += '"';
}

std::string describe(const Json& j) {
  if (j.is_object()) return "an object";
  if (j.is_array()) return "an array";
  constexpr std::size_t kMaxString = 60;
  if (j.is_string() && j.get_ref<const std::string&>().size() > kMaxString) {
    std::string head = j.get_ref<const std::string&>().substr(0, kMaxString);
    while (!head.empty() && (static_cast<unsigned char>(head.back()) & 0xc0u) == 0x80u) {
      head.pop_back();  // no half a UTF-8 sequence
    }
    if (!head.empty() && static_cast<unsigned char>(head.back()) >= 0xc0u) head.pop_back();
    return Json(head).dump() + "...";
  }
  return j.dump();
}

void ReadErrors::fail(const std::string& path, std::string message) {
  if (!first_) first_ = core::invalid_argument(path, std::move(message));
}

std::string child_path(std::string_view parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  return fmt::format("{}.{}", parent, key);
}

std::string index_path(std::string_view parent, std::size_t i) {
  return fmt::format("{}[{}]", parent, i);
}

std::optional<std::int32_t> parse_small_int(std::string_view text) {
  if (text.empty() || text.size() > 4) return std::nullopt;
  std::int32_t v = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v > 1000 || (text.size() > 1 && text[0] == '0')) return std::nullopt;
  return v;
}

std::string one_of(std::span<const std::string_view> names) {
  std::string out = names.size() > 1 ? "one of " : "";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

std::int64_t range_value(std::int32_t v) { return v; }
std::int64_t range_value(std::int64_t v) { return v; }
std::int64_t range_value(core::Duration v) { return v.count(); }

void ObjectReader::check_range(const std::string& path, std::int64_t v, Range range) {
  if (v < range.lo || v > range.hi) {
    errors_.fail(path, fmt::format("must be between {} and {}, got {}", range.lo, range.hi, v));
  }
}

void ObjectReader::finish() {
  for (auto it = object_.begin(); it != object_.end(); ++it) {
    if (std::find(seen_.begin(), seen_.end(), it.key()) == seen_.end()) {
      return errors_.fail(child_path(path_, it.key()), "unknown field");
    }
  }
}

void Codec<bool>::write(const bool& value, std::string& out) { out += value ? "true" : "false"; }
void Codec<bool>::read(const Json& j, const std::string& path, bool& out, ReadErrors& errors) {
  if (!j.is_boolean()) return errors.fail(path, "must be true or false, got " + describe(j));
  out = j.get<bool>();
}

void Codec<std::int32_t>::write(const std::int32_t& value, std::string& out) {
  append_integer(out, value);
}
void Codec<std::int32_t>::read(const Json& j, const std::string& path, std::int32_t& out,
                               ReadErrors& errors) {
  std::int64_t v = 0;
  read_int64(j, path, v, errors, "an integer");
  if (!errors.ok()) return;
  constexpr auto kLo = std::numeric_limits<std::int32_t>::min();
  constexpr auto kHi = std::numeric_limits<std::int32_t>::max();
  if (v < kLo || v > kHi) {
    return errors.fail(path, fmt::format("must be between {} and {}, got {}", kLo, kHi, v));
  }
  out = static_cast<std::int32_t>(v);
}

void Codec<std::int64_t>::write(const std::int64_t& value, std::string& out) {
  append_integer(out, value);
}
void Codec<std::int64_t>::read(const Json& j, const std::string& path, std::int64_t& out,
                               ReadErrors& errors) {
  read_int64(j, path, out, errors, "an integer");
}

// Finite doubles are JSON numbers: std::to_chars gives the shortest text that reads back
// to the same bits, and a '.0' is added where it gave an integer's text, since a reader
// would take "-0" for the integer 0. JSON has no NaN or infinity, and a replay must see
// what the capturing process saw, so those are written as strings.
void Codec<double>::write(const double& value, std::string& out) {
  if (std::isnan(value)) {
    out += "\"NaN\"";
  } else if (std::isinf(value)) {
    out += value > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  } else {
    char buf[32];
    const auto result = std::to_chars(buf, buf + sizeof buf, value);
    CORRAL_CHECK(result.ec == std::errc());
    const std::string_view text(buf, static_cast<std::size_t>(result.ptr - buf));
    out += text;
    if (text.find_first_of(".e") == std::string_view::npos) out += ".0";
  }
}
void Codec<double>::read(const Json& j, const std::string& path, double& out, ReadErrors& errors) {
  if (j.is_number()) {
    out = j.get<double>();
    return;
  }
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    if (s == "NaN") {
      out = std::numeric_limits<double>::quiet_NaN();
      return;
    }
    if (s == "Infinity" || s == "-Infinity") {
      out = s[0] == '-' ? -std::numeric_limits<double>::infinity()
                        : std::numeric_limits<double>::infinity();
      return;
    }
  }
  errors.fail(path, "must be a number, got " + describe(j));
}

void Codec<std::string>::write(const std::string& value, std::string& out) {
  append_string(out, value);
}
void Codec<std::string>::read(const Json& j, const std::string& path, std::string& out,
                              ReadErrors& errors) {
  if (!j.is_string()) return errors.fail(path, "must be a string, got " + describe(j));
  out = j.get<std::string>();
}

void Codec<core::Duration>::write(const core::Duration& value, std::string& out) {
  append_integer(out, value.count());
}
void Codec<core::Duration>::read(const Json& j, const std::string& path, core::Duration& out,
                                 ReadErrors& errors) {
  std::int64_t ms = 0;
  read_int64(j, path, ms, errors, "an integer (milliseconds)");
  if (errors.ok()) out = core::Duration(ms);
}

void Codec<core::Time>::write(const core::Time& value, std::string& out) {
  append_integer(out, core::to_ms(value));
}
void Codec<core::Time>::read(const Json& j, const std::string& path, core::Time& out,
                             ReadErrors& errors) {
  std::int64_t ms = 0;
  read_int64(j, path, ms, errors, "an integer (milliseconds since the epoch)");
  if (errors.ok()) out = core::time_from_ms(ms);
}

}  // namespace corral::cycle::detail
