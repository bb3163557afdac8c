// Point-in-time feature lookups (docs/features.md): for an entity and an instant, the
// value with the latest event time at or before the instant and within a TTL of it,
// never a later one, so a training row sees only what was known at its own time. Equal
// event times are broken by write order (the later write wins), as a correction would.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/feature_value.h"

namespace corral::registry {

struct LookupRow {
  std::string entity;
  std::int64_t at_ms = 0;
};

// For each row, the index into `values` (in any order) of its answer, or -1 when no value
// of its entity has an event time in [at - ttl, at].
std::vector<std::int64_t> point_in_time(const std::vector<core::FeatureValue>& values,
                                        const std::vector<LookupRow>& rows, std::int64_t ttl_ms);

}  // namespace corral::registry
