#include "core/json_fields.h"

#include <fmt/format.h>

#include "core/utf8.h"

namespace corral::core::json_fields {

using nlohmann::json;

const json* find(const json& obj, std::string_view key) {
  const auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

Status read_double(const Field& f, double lo, double hi, double& out) {
  const json* v = find(f.obj, f.key);
  if (v == nullptr) return f.required ? f.missing() : Status();
  if (!v->is_number()) return invalid_argument(f.name(), "must be a number");
  const double d = v->get<double>();
  if (!(d >= lo && d <= hi)) {
    return invalid_argument(f.name(), fmt::format("must be between {} and {}, got {}", lo, hi, d));
  }
  out = d;
  return Status();
}

Status read_bool(const Field& f, bool& out) {
  const json* v = find(f.obj, f.key);
  if (v == nullptr) return f.required ? f.missing() : Status();
  if (!v->is_boolean()) return invalid_argument(f.name(), "must be true or false");
  out = v->get<bool>();
  return Status();
}

Status string_value(const json& v, const std::string& name, std::size_t max, std::string& out,
                    bool plain) {
  if (!v.is_string()) return invalid_argument(name, "must be a string");
  const auto& s = v.get_ref<const std::string&>();
  if (s.size() > max) {
    return invalid_argument(name, "must be at most " + std::to_string(max) + " bytes");
  }
  if (plain && has_control_chars(s)) {
    return invalid_argument(name, "must not contain control characters");
  }
  out = s;
  return Status();
}

Status read_string(const Field& f, std::size_t max, std::string& out) {
  const json* v = find(f.obj, f.key);
  if (v == nullptr) return f.required ? f.missing() : Status();
  return string_value(*v, f.name(), max, out);
}

const json* array_at(const Field& f, Status& error) {
  const json* v = find(f.obj, f.key);
  if (v == nullptr) {
    if (f.required) error = f.missing();
    return nullptr;
  }
  if (!v->is_array()) {
    error = invalid_argument(f.name(), "must be an array");
    return nullptr;
  }
  return v;
}

Status read_string_array(const Field& f, std::size_t max, std::vector<std::string>& out) {
  Status error;
  const json* a = array_at(f, error);
  if (a == nullptr) return error;
  std::vector<std::string> values(a->size());
  for (std::size_t i = 0; i < a->size(); ++i) {
    CORRAL_RETURN_IF_ERROR(string_value((*a)[i], element_path(f.name(), i), max, values[i]));
  }
  out = std::move(values);
  return Status();
}

Status read_string_map(const Field& f, std::size_t max_value,
                       std::map<std::string, std::string>& out) {
  const json* v = find(f.obj, f.key);
  if (v == nullptr) return f.required ? f.missing() : Status();
  if (!v->is_object()) return invalid_argument(f.name(), "must be an object of strings");
  std::map<std::string, std::string> values;
  for (const auto& [key, value] : v->items()) {
    CORRAL_RETURN_IF_ERROR(string_value(value, child_path(f.name(), key), max_value, values[key],
                                        /*plain=*/false));
  }
  out = std::move(values);
  return Status();
}

}  // namespace corral::core::json_fields
