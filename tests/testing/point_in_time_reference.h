// The point-in-time answer by definition, by brute force: of the entity's values with
// event times in [at - ttl, at], the latest event time, then the latest write. What
// registry::point_in_time and the lookup endpoint are checked against.
#pragma once

#include <cstdint>
#include <vector>

#include "registry/feature_lookup.h"

namespace corral::testing {

// The index into `values` of the answer to `row`, or -1.
inline std::int64_t point_in_time_reference(const std::vector<core::FeatureValue>& values,
                                            const registry::LookupRow& row, std::int64_t ttl) {
  std::int64_t best = -1;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const core::FeatureValue& v = values[i];
    if (v.entity != row.entity || v.event_ms > row.at_ms || v.event_ms < row.at_ms - ttl) continue;
    const core::FeatureValue* b = best < 0 ? nullptr : &values[static_cast<std::size_t>(best)];
    if (b == nullptr || v.event_ms > b->event_ms || (v.event_ms == b->event_ms && v.seq > b->seq)) {
      best = static_cast<std::int64_t>(i);
    }
  }
  return best;
}

}  // namespace corral::testing
