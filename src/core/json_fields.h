// Typed reads of a JSON object's fields, one rule for the bodies Corral reads field by
// field (the agent protocol's, the registry's documents): a field absent or null reads as
// absent and leaves `out` as it was, unless it is required ("is required"); a wrong type
// or range is InvalidArgument naming the field by its path ("workers[2].rank"). Unknown
// keys are refused with core::only_fields (json_object.h).
//
// Thread safety: free functions, safe to call concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/json_object.h"
#include "core/status.h"

namespace corral::core::json_fields {

// The value at obj[key], or null when it is absent (absent and null read the same).
const nlohmann::json* find(const nlohmann::json& obj, std::string_view key);

// Field `key` of `obj`, which sits at `path` in the document.
struct Field {
  const nlohmann::json& obj;
  const std::string& path;
  std::string_view key;
  bool required = false;

  std::string name() const { return child_path(path, key); }
  Status missing() const { return invalid_argument(name(), "is required"); }
};

// An integer in [lo, hi] (json_object.h's integer_in).
template <typename Int>
Status read_int(const Field& f, std::int64_t lo, std::int64_t hi, Int& out) {
  const nlohmann::json* v = find(f.obj, f.key);
  if (v == nullptr) return f.required ? f.missing() : Status();
  CORRAL_ASSIGN_OR_RETURN(const std::int64_t n, integer_in(*v, f.name(), lo, hi));
  out = static_cast<Int>(n);
  return Status();
}

Status read_double(const Field& f, double lo, double hi, double& out);
Status read_bool(const Field& f, bool& out);

// A string of at most `max` bytes. `plain`: no control characters (names, paths, URLs
// and uuids reach log lines and paths); free text may hold any.
Status string_value(const nlohmann::json& v, const std::string& name, std::size_t max,
                    std::string& out, bool plain = true);
Status read_string(const Field& f, std::size_t max, std::string& out);

// The array at the field; nullptr with `error` set when it is something else, or absent
// and required.
const nlohmann::json* array_at(const Field& f, Status& error);

template <typename Int>
Status read_int_array(const Field& f, std::int64_t lo, std::int64_t hi, std::vector<Int>& out) {
  Status error;
  const nlohmann::json* a = array_at(f, error);
  if (a == nullptr) return error;
  std::vector<Int> values;
  for (std::size_t i = 0; i < a->size(); ++i) {
    CORRAL_ASSIGN_OR_RETURN(const std::int64_t n,
                            integer_in((*a)[i], element_path(f.name(), i), lo, hi));
    values.push_back(static_cast<Int>(n));
  }
  out = std::move(values);
  return Status();
}

Status read_string_array(const Field& f, std::size_t max, std::vector<std::string>& out);

// An object of strings, each value free text of at most `max_value` bytes.
Status read_string_map(const Field& f, std::size_t max_value,
                       std::map<std::string, std::string>& out);

// The objects of the array at the field, each handed to `read` with its path.
template <typename T, typename Read>
Status read_objects(const Field& f, std::vector<T>& out, Read read) {
  Status error;
  const nlohmann::json* a = array_at(f, error);
  if (a == nullptr) return error;
  std::vector<T> values(a->size());
  for (std::size_t i = 0; i < a->size(); ++i) {
    const std::string path = element_path(f.name(), i);
    if (!(*a)[i].is_object()) return invalid_argument(path, "must be an object");
    CORRAL_RETURN_IF_ERROR(read((*a)[i], path, values[i]));
  }
  out = std::move(values);
  return Status();
}

}  // namespace corral::core::json_fields
