#include "core/yaml_fields.h"

#include <cmath>

#include <fmt/format.h>

#include "core/json_object.h"

namespace corral::core {

std::string YamlFields::at(std::string_view key) const { return child_path(path_, key); }

bool YamlFields::has(std::string_view key) {
  const YAML::Node n = get(key);
  return n.IsDefined() && !n.IsNull();
}

YAML::Node YamlFields::get(std::string_view key) {
  seen_.emplace(key);
  return map_[std::string(key)];
}

Result<std::string> YamlFields::str(std::string_view key, std::optional<std::string> fallback) {
  if (!has(key)) {
    if (fallback) return *fallback;
    return invalid_argument(at(key), "is required");
  }
  const YAML::Node n = get(key);
  if (!n.IsScalar()) return invalid_argument(at(key), "must be a string");
  return n.Scalar();
}

Result<std::int64_t> YamlFields::integer(std::string_view key, std::optional<std::int64_t> fallback,
                                         std::int64_t lo, std::int64_t hi) {
  if (!has(key)) {
    if (fallback) return *fallback;
    return invalid_argument(at(key), "is required");
  }
  std::int64_t v = 0;
  const YAML::Node n = get(key);
  if (!n.IsScalar() || !YAML::convert<std::int64_t>::decode(n, v)) {
    return invalid_argument(at(key), fmt::format("must be an integer, got '{}'", scalar_text(n)));
  }
  if (v < lo || v > hi) {
    return invalid_argument(at(key), fmt::format("must be between {} and {}, got {}", lo, hi, v));
  }
  return v;
}

Result<double> YamlFields::number(std::string_view key, std::optional<double> fallback, double lo,
                                  double hi) {
  if (!has(key)) {
    if (fallback) return *fallback;
    return invalid_argument(at(key), "is required");
  }
  double v = 0;
  const YAML::Node n = get(key);
  if (!n.IsScalar() || !YAML::convert<double>::decode(n, v) || !std::isfinite(v)) {
    return invalid_argument(at(key), fmt::format("must be a number, got '{}'", scalar_text(n)));
  }
  if (v < lo || v > hi) {
    return invalid_argument(at(key), fmt::format("must be between {} and {}, got {}", lo, hi, v));
  }
  return v;
}

Status YamlFields::read_number(std::string_view key, double lo, double hi, double& out) {
  if (!has(key)) return Status();
  CORRAL_ASSIGN_OR_RETURN(out, number(key, std::nullopt, lo, hi));
  return Status();
}

Status YamlFields::read_string(std::string_view key, std::string& out) {
  if (!has(key)) return Status();
  CORRAL_ASSIGN_OR_RETURN(out, str(key, std::nullopt));
  return Status();
}

Status YamlFields::read_bool(std::string_view key, bool& out) {
  if (!has(key)) return Status();
  const YAML::Node n = get(key);
  bool v = false;
  if (!n.IsScalar() || !YAML::convert<bool>::decode(n, v)) {
    return invalid_argument(at(key), "must be true or false");
  }
  out = v;
  return Status();
}

Status YamlFields::only(std::initializer_list<std::string_view> allowed) const {
  for (const auto& kv : map_) {
    const std::string key = kv.first.Scalar();
    bool known = false;
    for (const std::string_view a : allowed) known = known || a == key;
    if (!known) return invalid_argument(at(key), "unknown field");
  }
  return Status();
}

Status YamlFields::no_unknown() const {
  for (const auto& kv : map_) {
    const std::string key = kv.first.Scalar();
    if (!seen_.count(key)) return invalid_argument(at(key), "unknown field");
  }
  return Status();
}

}  // namespace corral::core
