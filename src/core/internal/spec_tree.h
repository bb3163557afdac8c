// SpecTree: a small, library-neutral document tree that both spec readers (YAML through
// yaml-cpp, JSON through nlohmann-json) produce, so that one validator serves both
// formats and neither library appears outside core's .cc files.
//
// Scalars keep their type as the document wrote it: a quoted YAML scalar or a JSON
// string is a string even when it looks like a number, so `gpus: "16"` is a type error
// in both formats. Mappings keep document order and duplicate keys, so the validator
// can report duplicates (both libraries would silently keep one).
//
// Internal to core. Thread safety: a value type.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace corral::core::internal {

enum class TreeKind { kNull, kBool, kInt, kFloat, kString, kList, kMap };

struct TreeEntry;

struct TreeNode {
  TreeKind kind = TreeKind::kNull;
  bool bool_value = false;
  std::int64_t int_value = 0;
  bool int_overflow = false;  // an integer too large for int64; `text` holds its digits
  double float_value = 0.0;
  std::string text;  // the string value, or the scalar as written (for messages)
  std::vector<TreeNode> items;
  std::vector<TreeEntry> entries;  // a mapping's keys and values, in document order
};

// std::vector allows an element type completed later; std::pair would not.
struct TreeEntry {
  std::string key;
  TreeNode value;
};

// Limits that keep a hostile document from costing more than a small, valid one would.
inline constexpr int kMaxTreeDepth = 32;
inline constexpr std::size_t kMaxTreeNodes = 100'000;

// A document that could not be read: the reason names the line and column when known.
struct TreeError {
  std::string reason;
};

struct TreeReadResult {
  std::optional<TreeNode> root;
  std::optional<TreeError> error;  // set iff !root
};

// Both return a tree or one error; neither throws.
TreeReadResult read_yaml_tree(std::string_view text);
TreeReadResult read_json_tree(std::string_view text);

// True when `text` is well-formed UTF-8 (no overlongs, surrogates or values past U+10FFFF).
bool is_valid_utf8(std::string_view text);

// "line L, column C" (1-based) of byte `offset` in `text`.
std::string describe_position(std::string_view text, std::size_t offset);

}  // namespace corral::core::internal
