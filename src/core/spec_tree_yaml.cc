// Reads a YAML document into a SpecTree. yaml-cpp exceptions stop here (STYLE.md 6.4).
#include <charconv>
#include <exception>
#include <string>

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include "core/internal/spec_tree.h"

namespace corral::core::internal {
namespace {

// Thrown only inside this file, to unwind the recursive conversion; never escapes it.
struct ConvertError {
  std::string reason;
};

std::string at(const YAML::Mark& mark) {
  if (mark.is_null()) {
    return "";
  }
  return fmt::format(" at line {}, column {}", mark.line + 1, mark.column + 1);
}

bool is_decimal_integer(std::string_view s) {
  std::size_t pos = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  if (pos == s.size()) {
    return false;
  }
  for (; pos < s.size(); ++pos) {
    if (s[pos] < '0' || s[pos] > '9') {
      return false;
    }
  }
  return true;
}

// A plain scalar is a float when it reads as one entirely and starts like a number, so
// words such as "inf" or "nan" stay strings.
bool parse_float(std::string_view s, double& out) {
  if (s.empty()) {
    return false;
  }
  const char first = s[0];
  if (!(first == '-' || first == '+' || first == '.' || (first >= '0' && first <= '9'))) {
    return false;
  }
  const char* begin = s.data() + (first == '+' ? 1 : 0);
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(begin, end, out);
  return ec == std::errc() && ptr == end;
}

// Resolves an untagged plain scalar as YAML 1.2's core schema does (decimal integers
// only; yes/no/on/off stay strings, unlike YAML 1.1).
TreeNode resolve_plain(const std::string& s) {
  TreeNode node;
  node.text = s;
  if (s == "true" || s == "True" || s == "TRUE" || s == "false" || s == "False" || s == "FALSE") {
    node.kind = TreeKind::kBool;
    node.bool_value = s[0] == 't' || s[0] == 'T';
    return node;
  }
  if (is_decimal_integer(s)) {
    node.kind = TreeKind::kInt;
    const char* begin = s.data() + (s[0] == '+' ? 1 : 0);
    const auto [ptr, ec] = std::from_chars(begin, s.data() + s.size(), node.int_value);
    node.int_overflow = ec != std::errc();
    return node;
  }
  double value = 0;
  if (parse_float(s, value)) {
    node.kind = TreeKind::kFloat;
    node.float_value = value;
    return node;
  }
  node.kind = TreeKind::kString;
  return node;
}

class Converter {
 public:
  TreeNode convert(const YAML::Node& node, int depth) {
    if (depth > kMaxTreeDepth) {
      throw ConvertError{
          fmt::format("nesting is deeper than {} levels{}", kMaxTreeDepth, at(node.Mark()))};
    }
    if (++count_ > kMaxTreeNodes) {
      // Aliases can repeat one subtree many times over ("billion laughs").
      throw ConvertError{fmt::format("document has more than {} values (check for aliases){}",
                                     kMaxTreeNodes, at(node.Mark()))};
    }
    TreeNode out;
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        out.kind = TreeKind::kNull;
        out.text = "null";
        return out;
      case YAML::NodeType::Scalar: {
        const std::string& s = node.Scalar();
        check_utf8(s, node.Mark());
        const std::string& tag = node.Tag();
        // "!" marks a quoted or block scalar; an explicit !!str also means a string.
        if (tag == "!" || tag == "tag:yaml.org,2002:str") {
          out.kind = TreeKind::kString;
          out.text = s;
          return out;
        }
        return resolve_plain(s);
      }
      case YAML::NodeType::Sequence:
        out.kind = TreeKind::kList;
        for (const auto& item : node) {
          out.items.push_back(convert(item, depth + 1));
        }
        return out;
      case YAML::NodeType::Map:
        out.kind = TreeKind::kMap;
        for (const auto& entry : node) {
          std::string key;
          if (entry.first.IsScalar()) {
            key = entry.first.Scalar();
            check_utf8(key, entry.first.Mark());
          } else if (!entry.first.IsNull()) {
            throw ConvertError{
                fmt::format("mapping keys must be plain strings{}", at(entry.first.Mark()))};
          }
          out.entries.push_back(TreeEntry{std::move(key), convert(entry.second, depth + 1)});
        }
        return out;
    }
    return out;
  }

 private:
  // Escapes such as "\uD800" can yield bytes that are not UTF-8 from valid input.
  static void check_utf8(const std::string& s, const YAML::Mark& mark) {
    if (!is_valid_utf8(s)) {
      throw ConvertError{fmt::format("string is not valid UTF-8{}", at(mark))};
    }
  }

  std::size_t count_ = 0;
};

}  // namespace

TreeReadResult read_yaml_tree(std::string_view text) {
  try {
    const YAML::Node doc = YAML::Load(std::string(text));
    Converter converter;
    return {.root = converter.convert(doc, 0)};
  } catch (const ConvertError& e) {
    return {.error = TreeError{e.reason}};
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp stops at its own depth limit before ours sees the tree.
    return {.error = TreeError{
                fmt::format("nesting is deeper than {} levels{}", kMaxTreeDepth, at(e.mark))}};
  } catch (const YAML::Exception& e) {
    return {.error = TreeError{fmt::format("invalid yaml{}: {}", at(e.mark), e.msg)}};
  } catch (const std::exception& e) {
    return {.error = TreeError{fmt::format("invalid yaml: {}", e.what())}};
  }
}

}  // namespace corral::core::internal
