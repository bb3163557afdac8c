#include "core/json_object.h"

#include <string>

#include <nlohmann/json.hpp>

#include "core/utf8.h"

namespace corral::core {

using nlohmann::json;

namespace {

// A number the parser cannot hold (1e400, past a double) is an error to it that says only
// the number; the field holding it is named here, as for any other out-of-range number:
// the first place `number` stands as a value. "" when it is found nowhere.
std::string field_of_number(std::string_view text, std::string_view number) {
  const auto is_number_char = [](char c) {
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
  };
  for (auto at = text.find(number); !number.empty() && at != std::string_view::npos;
       at = text.find(number, at + 1)) {
    std::size_t before = at;
    while (before > 0 && (text[before - 1] == ' ' || text[before - 1] == '\n' ||
                          text[before - 1] == '\t' || text[before - 1] == '\r')) {
      --before;
    }
    const bool starts = before > 0 && (text[before - 1] == ':' || text[before - 1] == ',' ||
                                       text[before - 1] == '[');
    const std::size_t after = at + number.size();
    if (starts && (after == text.size() || !is_number_char(text[after]))) {
      return json_path_at(text, at);
    }
  }
  return "";
}

}  // namespace

std::string json_excerpt(const json& v) {
  std::string text = v.dump(-1, ' ', false, json::error_handler_t::replace);
  return text.size() > 60 ? text.substr(0, 60) + "..." : text;
}

Result<std::int64_t> integer_in(const json& v, std::string_view field, std::int64_t lo,
                                std::int64_t hi) {
  if (!v.is_number_integer()) {
    return invalid_argument(std::string(field), "must be an integer, got " + json_excerpt(v));
  }
  const bool huge = v.is_number_unsigned() && v.get<std::uint64_t>() > INT64_MAX;
  const std::int64_t n = huge ? 0 : v.get<std::int64_t>();
  if (huge || n < lo || n > hi) {
    return invalid_argument(std::string(field), "must be between " + std::to_string(lo) + " and " +
                                                    std::to_string(hi) + ", got " +
                                                    json_excerpt(v));
  }
  return n;
}

Result<json> parse_json_object(std::string_view text) {
  // Bytes that are not UTF-8 are named by field here; nlohmann would only say "invalid".
  CORRAL_RETURN_IF_ERROR(check_json_utf8(text));
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::out_of_range& e) {
    // "... number overflow parsing '1e400'": the only out_of_range a parse throws.
    const std::string_view what = e.what();
    const auto open = what.find('\'');
    const auto close = what.rfind('\'');
    const std::string_view number =
        open < close ? what.substr(open + 1, close - open - 1) : std::string_view();
    return invalid_argument(
        field_of_number(text, number),
        "must be a number a double can hold, got " + std::string(number.substr(0, 60)));
  } catch (const json::exception&) {
    return invalid_argument("", "body is not valid JSON");
  }
  if (!doc.is_object()) return invalid_argument("", "body must be a JSON object");
  return doc;
}

std::string child_path(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string element_path(const std::string& path, std::size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

Status only_fields(const nlohmann::json& obj, const std::string& path,
                   std::initializer_list<std::string_view> keys) {
  for (const auto& [key, value] : obj.items()) {
    bool known = false;
    for (const std::string_view k : keys) known = known || k == key;
    if (!known) return invalid_argument(child_path(path, key), "unknown field");
  }
  return Status();
}

}  // namespace corral::core
