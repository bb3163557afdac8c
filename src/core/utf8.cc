#include "core/utf8.h"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/internal/spec_tree.h"

namespace corral::core {
namespace {

using Json = nlohmann::json;

// Follows a SAX parse to know, at every moment, the path of the value being read. The
// parse of a prefix of the document stops inside the string that holds the bad byte;
// the path at that moment names its field.
class PathTracker {
 public:
  using number_integer_t = Json::number_integer_t;
  using number_unsigned_t = Json::number_unsigned_t;
  using number_float_t = Json::number_float_t;
  using string_t = Json::string_t;
  using binary_t = Json::binary_t;

  bool null() { return value(); }
  bool boolean(bool) { return value(); }
  bool number_integer(number_integer_t) { return value(); }
  bool number_unsigned(number_unsigned_t) { return value(); }
  bool number_float(number_float_t, const string_t&) { return value(); }
  bool string(string_t&) { return value(); }
  bool binary(binary_t&) { return value(); }
  bool start_object(std::size_t) { return open(true); }
  bool start_array(std::size_t) { return open(false); }
  bool key(string_t& k) {
    frames_.back().key = k;
    frames_.back().expect_key = false;
    return true;
  }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception&) {
    error_at_ = position;
    return false;
  }
  std::size_t error_at() const { return error_at_; }
  // True while the innermost mapping is between values, i.e. reading a key.
  bool in_key() const {
    return !frames_.empty() && frames_.back().object && frames_.back().expect_key;
  }

  // The path of the value (or, between a mapping's values, the key) being read now.
  std::string path() const {
    std::string out;
    for (std::size_t i = 0; i < frames_.size(); ++i) {
      const Frame& f = frames_[i];
      // The innermost mapping between values is reading a key: the mapping is the field.
      if (f.object && f.expect_key && i + 1 == frames_.size()) break;
      if (f.object) {
        out += out.empty() ? f.key : "." + f.key;
      } else {
        out += fmt::format("[{}]", f.index);
      }
    }
    return out;
  }

 private:
  struct Frame {
    bool object = false;
    bool expect_key = true;
    std::string key;
    std::size_t index = 0;
  };
  bool value() {
    if (!frames_.empty()) {
      Frame& f = frames_.back();
      if (f.object) {
        f.expect_key = true;
      } else {
        ++f.index;
      }
    }
    return true;
  }
  bool open(bool object) {
    // Depth is bounded by the document size (1 MiB at most), so no limit of our own.
    frames_.push_back(Frame{.object = object});
    return true;
  }
  bool close() {
    frames_.pop_back();
    return value();
  }

  std::vector<Frame> frames_;
  std::size_t error_at_ = 0;
};

struct Where {
  std::string path;
  bool key = false;
};

Where locate(std::string_view text, std::size_t offset) {
  PathTracker tracker;
  try {
    // The prefix always ends in the middle of something, so the parse always fails; what
    // matters is where the tracker stood when it did.
    (void)Json::sax_parse(text.substr(0, offset), &tracker, Json::input_format_t::json, true);
  } catch (const std::exception&) {
    return {};
  }
  // A syntax error before the byte says nothing about where the byte is.
  if (tracker.error_at() < offset) return {};
  return {.path = tracker.path(), .key = tracker.in_key()};
}

}  // namespace

std::optional<std::size_t> invalid_utf8_offset(std::string_view text) {
  std::size_t i = 0;
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  while (i < text.size()) {
    const unsigned char c = byte(i);
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return i;
    }
    if (i + len > text.size()) {
      return i;
    }
    for (std::size_t k = 1; k < len; ++k) {
      if ((byte(i + k) & 0xC0) != 0x80) {
        return i;
      }
      cp = (cp << 6) | (byte(i + k) & 0x3F);
    }
    static constexpr std::uint32_t kMinForLength[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMinForLength[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return i;
    }
    i += len;
  }
  return std::nullopt;
}

std::string json_path_at(std::string_view text, std::size_t offset) {
  return locate(text, offset).path;
}

Status check_json_utf8(std::string_view text) {
  const auto offset = invalid_utf8_offset(text);
  if (!offset) return Status();
  const Where where = locate(text, *offset);
  const char* what = where.path.empty() ? (where.key ? "document has a key that is not valid UTF-8"
                                                     : "document must be valid UTF-8")
                     : where.key        ? "has a key that is not valid UTF-8"
                                        : "must be valid UTF-8";
  return invalid_argument(where.path, fmt::format("{}, got byte 0x{:02x} at {}", what,
                                                  static_cast<unsigned char>(text[*offset]),
                                                  internal::describe_position(text, *offset)));
}

bool has_control_chars(std::string_view text) {
  return std::any_of(text.begin(), text.end(), [](char c) {
    const auto b = static_cast<unsigned char>(c);
    return b < 0x20 || b == 0x7f;
  });
}

}  // namespace corral::core
