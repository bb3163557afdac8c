#include "cli/format/yaml_text.h"

#include <algorithm>
#include <cctype>
#include <string_view>

#include <nlohmann/json.hpp>

namespace corral::cli {
namespace {

using nlohmann::json;

// A plain (unquoted) scalar reads back as this same string: letters, digits and a few
// marks, starting with a letter or '/', and not a word YAML 1.1 readers take for a
// boolean or null.
bool plain_ok(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '/')) return false;
  if (s.back() == ' ') return false;
  for (const char c : s) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ||
                    c == '/' || c == '@' || c == '+' || c == '-' || c == '=' || c == '(' ||
                    c == ')' || c == ' ' || c == ',';
    if (!ok) return false;
  }
  std::string lower(s);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const std::string_view word :
       {"true", "false", "yes", "no", "on", "off", "y", "n", "null"}) {
    if (lower == word) return false;
  }
  return true;
}

std::string scalar(const json& v) {
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    return plain_ok(s) ? s : v.dump();
  }
  return v.dump();  // null, true, 12, 0.5
}

bool is_block(const json& v) { return (v.is_object() || v.is_array()) && !v.empty(); }

void emit(const json& v, int indent, std::string& out);

// One entry of a mapping at `indent`: "key: scalar", or "key:" and the block below it
// (a list's dashes at the key's own indent, as kubectl writes them).
void emit_entry(const std::string& key, const json& v, int indent, std::string& out) {
  out += std::string(indent, ' ') + scalar(json(key)) + ":";
  if (!is_block(v)) {
    out += " " + (v.is_object() ? std::string("{}") : v.is_array() ? "[]" : scalar(v)) + "\n";
    return;
  }
  out += "\n";
  emit(v, v.is_array() ? indent : indent + 2, out);
}

void emit(const json& v, int indent, std::string& out) {
  if (v.is_object()) {
    for (const auto& [k, item] : v.items()) emit_entry(k, item, indent, out);
    return;
  }
  for (const json& item : v) {
    if (!is_block(item)) {
      const std::string text = item.is_object() ? "{}" : item.is_array() ? "[]" : scalar(item);
      out += std::string(indent, ' ') + "- " + text + "\n";
      continue;
    }
    // The item's block at indent + 2, its first line's indent replaced by the dash.
    std::string block;
    emit(item, indent + 2, block);
    block.replace(static_cast<std::size_t>(indent), 2, "- ");
    out += block;
  }
}

}  // namespace

std::string yaml_text(const json& doc) {
  if (!is_block(doc)) {
    return (doc.is_object() ? std::string("{}") : doc.is_array() ? "[]" : scalar(doc)) + "\n";
  }
  std::string out;
  emit(doc, 0, out);
  return out;
}

}  // namespace corral::cli
