// Text helpers shared by the spec readers: UTF-8 validation and byte-offset positions.
#include <string>

#include <fmt/format.h>

#include "core/internal/spec_tree.h"
#include "core/utf8.h"

namespace corral::core::internal {

bool is_valid_utf8(std::string_view text) { return !invalid_utf8_offset(text).has_value(); }

std::string describe_position(std::string_view text, std::size_t offset) {
  std::size_t line = 1;
  std::size_t column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return fmt::format("line {}, column {}", line, column);
}

}  // namespace corral::core::internal
