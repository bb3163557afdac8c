#include "core/job_spec_parse.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "core/dataset.h"
#include "core/gpu_type.h"
#include "core/internal/spec_tree.h"
#include "core/internal/spec_validator.h"
#include "core/json_object.h"
#include "core/priority.h"
#include "core/units.h"
#include "core/utf8.h"
#include "core/worker_env.h"

namespace corral::core {
namespace internal {

// A quoted, escaped and (past 60 bytes) shortened copy of `s` for messages.
std::string quote(std::string_view s) {
  constexpr std::size_t kShown = 60;
  // Cut on a character boundary, so a shortened copy of UTF-8 text stays UTF-8.
  std::size_t shown = std::min(s.size(), kShown);
  while (shown > 0 && shown < s.size() && (static_cast<unsigned char>(s[shown]) & 0xC0) == 0x80) {
    --shown;
  }
  std::string out = "\"";
  for (std::size_t i = 0; i < shown; ++i) {
    const char c = s[i];
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  if (s.size() > shown) {
    out += "...";
  }
  return out + "\"";
}

// How a value appears in "got ..." clauses.
std::string describe(const TreeNode& node) {
  switch (node.kind) {
    case TreeKind::kString:
      return quote(node.text);
    case TreeKind::kList:
      return "a list";
    case TreeKind::kMap:
      return "a mapping";
    case TreeKind::kNull:
      return "null";
    case TreeKind::kBool:
    case TreeKind::kInt:
    case TreeKind::kFloat:
      return node.text.size() > 60 ? node.text.substr(0, 60) + "..." : node.text;
  }
  return "a value";
}

bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// Kubernetes' label name/value syntax: ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool is_label_text(std::string_view s) {
  if (s.empty() || !is_alnum(s.front()) || !is_alnum(s.back())) {
    return false;
  }
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return is_alnum(c) || c == '-' || c == '_' || c == '.'; });
}

// [A-Za-z_][A-Za-z0-9_]*, what a POSIX shell accepts as a variable name.
bool is_env_name(std::string_view s) {
  if (s.empty() || (s.front() >= '0' && s.front() <= '9')) {
    return false;
  }
  return std::all_of(s.begin(), s.end(), [](char c) { return is_alnum(c) || c == '_'; });
}

bool is_power_of_two(std::int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

std::optional<double> number_value(const TreeNode& node) {
  if (node.kind == TreeKind::kInt && !node.int_overflow) return static_cast<double>(node.int_value);
  if (node.kind == TreeKind::kFloat && std::isfinite(node.float_value)) return node.float_value;
  return std::nullopt;
}

std::string join(std::initializer_list<std::string_view> words) {
  std::string out;
  for (const auto word : words) {
    out += out.empty() ? std::string(word) : fmt::format(", {}", word);
  }
  return out;
}

std::vector<FieldError> Validator::run(const TreeNode& root) {
  const FieldMap top = fields(
      root, "",
      {"name",        "tenant",     "priorityClass", "resources",       "topology",    "elastic",
       "preemptible", "checkpoint", "maxRuntime",    "expectedRuntime", "reservation", "processes",
       "maxRestarts", "command",    "env",           "secretEnv",       "lineage",     "labels",
       "array",       "dependsOn",  "retry",         "sweep",           "session"});
  read_identity(top);
  read_resources(top.get("resources"));
  read_topology(top.get("topology"));
  read_elastic(top.get("elastic"));
  preemptible_ = read_bool(top.get("preemptible"), "preemptible");
  read_checkpoint(top.get("checkpoint"));
  if (auto d = read_runtime(top.get("maxRuntime"), "maxRuntime")) spec_.max_runtime = *d;
  if (auto d = read_runtime(top.get("expectedRuntime"), "expectedRuntime")) {
    spec_.expected_runtime = *d;
  }
  read_processes(top.get("processes"));
  if (auto n = read_int(top.get("maxRestarts"), "maxRestarts", 0, kMaxRestarts)) {
    spec_.max_restarts = static_cast<std::int32_t>(*n);
  }
  read_command(top.get("command"));
  spec_.env = read_env(top.get("env"), "env");
  spec_.secret_env = read_env(top.get("secretEnv"), "secretEnv");
  read_lineage(top.get("lineage"));
  read_labels(top.get("labels"));
  read_array(top.get("array"));
  read_depends_on(top.get("dependsOn"));
  read_retry(top.get("retry"));
  read_sweep(top.get("sweep"));
  read_session(top.get("session"));
  check_cross_field();
  return std::move(errors_);
}

void Validator::fail(std::string path, std::string reason) {
  errors_.push_back(FieldError{.path = std::move(path), .reason = std::move(reason)});
}

// Reports unknown and duplicate keys; `map` must be a mapping.
FieldMap Validator::fields(const TreeNode& map, const std::string& path,
                           std::initializer_list<std::string_view> known) {
  FieldMap out;
  std::map<std::string_view, bool> seen;
  for (const auto& [key, value] : map.entries) {
    const std::string key_path = child_path(path, key);
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      fail(key_path, fmt::format("unknown field, expected one of {}", join(known)));
    } else if (seen[key]) {
      fail(key_path, "duplicate key");
    } else {
      seen[key] = true;
      out.put(key, &value);
    }
  }
  return out;
}

// A present mapping, or nullptr (with an error when the value is something else).
const TreeNode* Validator::as_map(const TreeNode* node, const std::string& path) {
  if (node == nullptr) {
    return nullptr;
  }
  if (node->kind != TreeKind::kMap) {
    fail(path, fmt::format("must be a mapping, got {}", describe(*node)));
    return nullptr;
  }
  return node;
}

std::optional<std::int64_t> Validator::read_int(const TreeNode* node, const std::string& path,
                                                std::int64_t min, std::int64_t max) {
  if (node == nullptr) {
    return std::nullopt;
  }
  if (node->kind != TreeKind::kInt) {
    fail(path, fmt::format("must be an integer, got {}", describe(*node)));
    return std::nullopt;
  }
  if (node->int_overflow || node->int_value < min || node->int_value > max) {
    fail(path, fmt::format("must be between {} and {}, got {}", min, max, describe(*node)));
    return std::nullopt;
  }
  return node->int_value;
}

std::optional<std::string> Validator::read_string(const TreeNode* node, const std::string& path) {
  if (node == nullptr) {
    return std::nullopt;
  }
  if (node->kind != TreeKind::kString) {
    // A YAML author who wrote `VALUE: 4` meant a string; say how to write one.
    const bool scalar = node->kind == TreeKind::kInt || node->kind == TreeKind::kFloat ||
                        node->kind == TreeKind::kBool;
    fail(path, fmt::format("must be a string{}, got {}",
                           scalar ? fmt::format(" (quote it: \"{}\")", node->text) : "",
                           describe(*node)));
    return std::nullopt;
  }
  if (node->text.find('\0') != std::string::npos) {
    fail(path, fmt::format("must not contain NUL characters, got {}", quote(node->text)));
    return std::nullopt;
  }
  return node->text;
}

std::optional<bool> Validator::read_bool(const TreeNode* node, const std::string& path) {
  if (node == nullptr) {
    return std::nullopt;
  }
  if (node->kind != TreeKind::kBool) {
    fail(path, fmt::format("must be true or false, got {}", describe(*node)));
    return std::nullopt;
  }
  return node->bool_value;
}

std::optional<std::string> Validator::read_dns_label(const TreeNode* node,
                                                     const std::string& path) {
  auto s = read_string(node, path);
  if (!s) {
    return std::nullopt;
  }
  if (s->size() > kMaxNameLength) {
    fail(path, fmt::format("must be at most {} characters, got {} ({})", kMaxNameLength, s->size(),
                           quote(*s)));
    return std::nullopt;
  }
  if (!is_dns_label(*s)) {
    fail(path, fmt::format("must be a DNS label (lowercase letters, digits and '-', starting "
                           "and ending with a letter or digit), got {}",
                           quote(*s)));
    return std::nullopt;
  }
  return s;
}

// One of `choices`, returned as its index.
std::optional<std::size_t> Validator::read_choice(const TreeNode* node, const std::string& path,
                                                  std::initializer_list<std::string_view> choices) {
  auto s = read_string(node, path);
  if (!s) {
    return std::nullopt;
  }
  const auto it = std::find(choices.begin(), choices.end(), *s);
  if (it == choices.end()) {
    fail(path, fmt::format("must be one of {}, got {}", join(choices), quote(*s)));
    return std::nullopt;
  }
  return static_cast<std::size_t>(it - choices.begin());
}

void Validator::read_identity(const FieldMap& top) {
  if (top.get("name") == nullptr) {
    fail("name", "is required");
  }
  if (auto name = read_dns_label(top.get("name"), "name")) {
    spec_.name = std::move(*name);
  }
  if (auto tenant = read_dns_label(top.get("tenant"), "tenant")) {
    spec_.tenant = TenantId(std::move(*tenant));
  }
  if (auto s = read_string(top.get("priorityClass"), "priorityClass")) {
    const auto classes = default_priority_classes();
    const auto it = std::find_if(classes.begin(), classes.end(),
                                 [&](const PriorityClass& c) { return c.name == *s; });
    if (it == classes.end()) {
      std::string names;
      for (const auto& c : classes) {
        names += names.empty() ? c.name : ", " + c.name;
      }
      fail("priorityClass", fmt::format("must be one of {}, got {}", names, quote(*s)));
    } else {
      spec_.priority_class = *s;
      class_preemptible_ = it->preemptible;
    }
  }
  if (auto reservation = read_dns_label(top.get("reservation"), "reservation")) {
    spec_.reservation = ReservationId(std::move(*reservation));
  }
}

}  // namespace internal

ParseOutcome parse_job_spec(std::string_view text, SpecFormat format) {
  ParseOutcome out;
  const auto fail = [&](std::string reason) {
    out.errors.push_back(FieldError{.path = "", .reason = std::move(reason)});
    return out;
  };
  if (text.size() > kMaxSpecBytes) {
    return fail(fmt::format("document must be at most {} bytes (1 MiB), got {} bytes",
                            kMaxSpecBytes, text.size()));
  }
  // JSON names the field that holds the bad byte; YAML gets its line and column.
  if (const Status utf8 = check_json_utf8(text); !utf8.ok()) {
    out.errors.push_back(FieldError{.path = utf8.field(), .reason = utf8.message()});
    return out;
  }
  internal::TreeReadResult tree =
      format == SpecFormat::kJson ? internal::read_json_tree(text) : internal::read_yaml_tree(text);
  if (!tree.root) {
    return fail(tree.error ? tree.error->reason : "unreadable document");
  }
  if (tree.root->kind != internal::TreeKind::kMap) {
    return fail(fmt::format("document must be a mapping of fields, got {}",
                            internal::describe(*tree.root)));
  }
  internal::Validator validator;
  out.errors = validator.run(*tree.root);
  if (out.errors.empty()) {
    out.spec = validator.take_spec();
  }
  return out;
}

// [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool is_dns_label(std::string_view s) {
  const auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (s.empty() || !alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return alnum(c) || c == '-'; });
}

}  // namespace corral::core
