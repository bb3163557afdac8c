#include "server/cycle/reason_change.h"

#include <string>

namespace corral::server {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// `text` with each figure replaced by '#': a number (with the '.', ':' and ',' inside it),
// its unit written against it ("30s", "100GB") and the parts of a duration ("1h 05m").
std::string words_of(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    if (!is_digit(text[i])) {
      out += text[i++];
      continue;
    }
    out += '#';
    for (;;) {
      while (i < text.size() &&
             (is_digit(text[i]) || ((text[i] == '.' || text[i] == ':' || text[i] == ',') &&
                                    i + 1 < text.size() && is_digit(text[i + 1])))) {
        ++i;
      }
      const std::size_t unit = i;
      while (i < text.size() && is_letter(text[i])) ++i;
      // "1m 30s": the next part of the same duration.
      if (i > unit && i + 1 < text.size() && text[i] == ' ' && is_digit(text[i + 1])) {
        ++i;
        continue;
      }
      break;
    }
  }
  return out;
}

}  // namespace

bool reason_changed_in_substance(std::string_view was, std::string_view now) {
  return was != now && words_of(was) != words_of(now);
}

}  // namespace corral::server
