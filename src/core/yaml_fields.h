// Typed reads of a YAML map's fields, the YAML twin of json_fields.h, for the files
// Corral reads by hand (the simulator's fleets and synthetic workloads, the agent's
// inventories): one rule for YAML scalars. A field absent or null reads as absent (the
// fallback, or "is required"); a scalar that is not of the asked type or outside its range
// is InvalidArgument naming the field by its path ("pools[2].gpus_per_node: must be
// between 1 and 64, got 0"); a key nobody asked about is "unknown field", so a typo never
// becomes a default silently.
//
// Thread safety: a YamlFields is used by one thread; it remembers which keys were read.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "core/result.h"
#include "core/status.h"

namespace corral::core {

class YamlFields {
 public:
  // The fields of `map`, which sits at `path` in the file ("" for the root).
  YamlFields(const YAML::Node& map, std::string path) : map_(map), path_(std::move(path)) {}

  // The path of field `key`.
  std::string at(std::string_view key) const;
  // Whether `key` is there and not null. Marks it known, as get() does.
  bool has(std::string_view key);
  // The node at `key` (undefined when absent).
  YAML::Node get(std::string_view key);

  // Required when there is no fallback.
  Result<std::string> str(std::string_view key, std::optional<std::string> fallback);
  Result<std::int64_t> integer(std::string_view key, std::optional<std::int64_t> fallback,
                               std::int64_t lo, std::int64_t hi);
  Result<double> number(std::string_view key, std::optional<double> fallback, double lo, double hi);

  // An optional field read into `out`, which keeps its value when the field is absent.
  template <typename Int>
  Status read_int(std::string_view key, std::int64_t lo, std::int64_t hi, Int& out) {
    if (!has(key)) return Status();
    CORRAL_ASSIGN_OR_RETURN(const std::int64_t v, integer(key, std::nullopt, lo, hi));
    out = static_cast<Int>(v);
    return Status();
  }
  Status read_number(std::string_view key, double lo, double hi, double& out);
  Status read_string(std::string_view key, std::string& out);
  // YAML's booleans as yaml-cpp reads them (true/false, yes/no, on/off, any case).
  Status read_bool(std::string_view key, bool& out);

  // Refuses every key of the map outside `allowed` (before reading any, so the first
  // error a file gets for a typo names the typo).
  Status only(std::initializer_list<std::string_view> allowed) const;
  // Call last: refuses every key nothing asked about.
  Status no_unknown() const;

  // A scalar's text for an error message ('?' for a map or a list).
  static std::string scalar_text(const YAML::Node& n) { return n.IsScalar() ? n.Scalar() : "?"; }

 private:
  YAML::Node map_;
  std::string path_;
  std::set<std::string, std::less<>> seen_;
};

}  // namespace corral::core
