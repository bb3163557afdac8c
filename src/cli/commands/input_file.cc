#include "cli/commands/input_file.h"

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string_view>

#include <yaml-cpp/yaml.h>

namespace corral::cli {
namespace {

using nlohmann::json;

json scalar_json(const YAML::Node& node) {
  const std::string& s = node.Scalar();
  if (node.Tag() == "!") return s;  // quoted: a string whatever it reads as
  if (s == "null" || s == "~" || s.empty()) return nullptr;
  if (s == "true" || s == "True") return true;
  if (s == "false" || s == "False") return false;
  // Numbers start as numbers do: "inf" or "nan" stay names (strtod would take them).
  if (std::string_view("0123456789+-.").find(s[0]) == std::string_view::npos) return s;
  char* end = nullptr;
  errno = 0;
  const long long i = std::strtoll(s.c_str(), &end, 10);
  if (errno == 0 && end != nullptr && *end == '\0') return static_cast<std::int64_t>(i);
  const double d = std::strtod(s.c_str(), &end);
  if (end != nullptr && *end == '\0') return d;
  return s;
}

json to_json(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      json out = json::object();
      for (const auto& kv : node) out[kv.first.as<std::string>()] = to_json(kv.second);
      return out;
    }
    case YAML::NodeType::Sequence: {
      json out = json::array();
      for (const auto& item : node) out.push_back(to_json(item));
      return out;
    }
    case YAML::NodeType::Scalar:
      return scalar_json(node);
    default:
      return nullptr;
  }
}

}  // namespace

core::Result<json> parse_document(const std::string& text, const std::string& name) {
  try {
    const json doc = to_json(YAML::Load(text));
    if (!doc.is_object()) return core::invalid_argument(name, "must hold a mapping of fields");
    return doc;
  } catch (const YAML::Exception& e) {
    return core::invalid_argument(name, "line " + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
}

core::Result<json> read_document(const std::string& path) {
  std::stringstream input;
  if (path == "-") {
    input << std::cin.rdbuf();
  } else {
    std::ifstream in(path);
    if (!in) return core::invalid_argument(path, "cannot be read");
    input << in.rdbuf();
  }
  return parse_document(input.str(), path);
}

}  // namespace corral::cli
