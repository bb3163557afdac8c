// A feature value as a feature set stores it (docs/features.md): one entity's values at
// one event time. The store keeps them and the CLI prints them; the rule that answers a
// lookup from them, point in time, is registry/feature_lookup.h.
//
// Thread safety: a value type.
#pragma once

#include <cstdint>
#include <string>

namespace corral::core {

struct FeatureValue {
  std::string entity;
  std::int64_t event_ms = 0;
  std::int64_t seq = 0;  // write order: larger is later
  std::string values;    // JSON object of feature: value
};

}  // namespace corral::core
