// Reads a JSON document into a SpecTree through nlohmann-json's SAX interface, which
// keeps exact number types, sees duplicate keys and lets us bound the nesting depth
// before any deep structure is built. Exceptions stop here (STYLE.md 6.4).
#include <exception>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/internal/spec_tree.h"

namespace corral::core::internal {
namespace {

using Json = nlohmann::json;

class TreeBuilder {
 public:
  using number_integer_t = Json::number_integer_t;
  using number_unsigned_t = Json::number_unsigned_t;
  using number_float_t = Json::number_float_t;
  using string_t = Json::string_t;
  using binary_t = Json::binary_t;

  explicit TreeBuilder(std::string_view text) : text_(text) {}

  bool null() { return add(TreeNode{.kind = TreeKind::kNull, .text = "null"}); }
  bool boolean(bool value) {
    return add(
        TreeNode{.kind = TreeKind::kBool, .bool_value = value, .text = value ? "true" : "false"});
  }
  bool number_integer(number_integer_t value) {
    return add(TreeNode{.kind = TreeKind::kInt, .int_value = value, .text = std::to_string(value)});
  }
  bool number_unsigned(number_unsigned_t value) {
    TreeNode node{.kind = TreeKind::kInt, .text = std::to_string(value)};
    if (value > static_cast<number_unsigned_t>(std::numeric_limits<std::int64_t>::max())) {
      node.int_overflow = true;
    } else {
      node.int_value = static_cast<std::int64_t>(value);
    }
    return add(std::move(node));
  }
  bool number_float(number_float_t value, const string_t& written) {
    return add(TreeNode{.kind = TreeKind::kFloat, .float_value = value, .text = written});
  }
  bool string(string_t& value) {
    return add(TreeNode{.kind = TreeKind::kString, .text = std::move(value)});
  }
  bool binary(binary_t& /*value*/) { return fail("binary values are not supported"); }
  bool start_object(std::size_t /*size*/) { return open(TreeKind::kMap); }
  bool key(string_t& value) {
    keys_.back() = std::move(value);
    return true;
  }
  bool end_object() { return close(); }
  bool start_array(std::size_t /*size*/) { return open(TreeKind::kList); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& e) {
    // nlohmann's message reads "[json.exception.parse_error.101] parse error at line 1,
    // column 5: syntax error ..."; keep what follows the position, and say it our way.
    std::string detail = e.what();
    const auto column = detail.find("column ");
    const auto colon = column == std::string::npos ? column : detail.find(": ", column);
    if (colon != std::string::npos) {
      detail = detail.substr(colon + 2);
    }
    error_ = fmt::format("invalid json at {}: {}", describe_position(text_, position), detail);
    return false;
  }

  std::optional<TreeNode>& root() { return root_; }
  const std::string& error() const { return error_; }

 private:
  bool fail(std::string reason) {
    error_ = std::move(reason);
    return false;
  }
  bool open(TreeKind kind) {
    if (stack_.size() >= static_cast<std::size_t>(kMaxTreeDepth)) {
      return fail(fmt::format("nesting is deeper than {} levels", kMaxTreeDepth));
    }
    stack_.push_back(TreeNode{.kind = kind});
    keys_.emplace_back();
    return count();
  }
  bool close() {
    TreeNode done = std::move(stack_.back());
    stack_.pop_back();
    keys_.pop_back();
    return attach(std::move(done));
  }
  bool add(TreeNode node) { return count() && attach(std::move(node)); }
  bool count() {
    if (++count_ > kMaxTreeNodes) {
      return fail(fmt::format("document has more than {} values", kMaxTreeNodes));
    }
    return true;
  }
  bool attach(TreeNode node) {
    if (stack_.empty()) {
      root_ = std::move(node);
    } else if (stack_.back().kind == TreeKind::kList) {
      stack_.back().items.push_back(std::move(node));
    } else {
      stack_.back().entries.push_back(TreeEntry{std::move(keys_.back()), std::move(node)});
    }
    return true;
  }

  std::string_view text_;
  std::vector<TreeNode> stack_;
  std::vector<std::string> keys_;  // the pending key of each open mapping
  std::optional<TreeNode> root_;
  std::string error_;
  std::size_t count_ = 0;
};

}  // namespace

TreeReadResult read_json_tree(std::string_view text) {
  try {
    TreeBuilder builder(text);
    const bool parsed = Json::sax_parse(text, &builder, Json::input_format_t::json, true);
    if (!parsed || !builder.root()) {
      return {.error = TreeError{builder.error().empty() ? "invalid json" : builder.error()}};
    }
    return {.root = std::move(*builder.root())};
  } catch (const std::exception& e) {
    return {.error = TreeError{fmt::format("invalid json: {}", e.what())}};
  }
}

}  // namespace corral::core::internal
