#include "registry/feature_lookup.h"

#include <algorithm>
#include <map>

namespace corral::registry {

using core::FeatureValue;

std::vector<std::int64_t> point_in_time(const std::vector<FeatureValue>& values,
                                        const std::vector<LookupRow>& rows, std::int64_t ttl_ms) {
  // Each entity's values by (event time, write order): the answer is the last one not
  // after the instant.
  std::map<std::string, std::vector<std::int64_t>> by_entity;
  for (std::size_t i = 0; i < values.size(); ++i) {
    by_entity[values[i].entity].push_back(static_cast<std::int64_t>(i));
  }
  const auto before = [&](std::int64_t a, std::int64_t b) {
    const FeatureValue &x = values[static_cast<std::size_t>(a)],
                       &y = values[static_cast<std::size_t>(b)];
    return x.event_ms != y.event_ms ? x.event_ms < y.event_ms : x.seq < y.seq;
  };
  for (auto& [entity, list] : by_entity) std::sort(list.begin(), list.end(), before);
  std::vector<std::int64_t> out;
  out.reserve(rows.size());
  for (const LookupRow& row : rows) {
    const auto it = by_entity.find(row.entity);
    if (it == by_entity.end()) {
      out.push_back(-1);
      continue;
    }
    const auto& list = it->second;
    const auto after =
        std::upper_bound(list.begin(), list.end(), row.at_ms, [&](std::int64_t at, std::int64_t i) {
          return at < values[static_cast<std::size_t>(i)].event_ms;
        });
    if (after == list.begin()) {
      out.push_back(-1);
      continue;
    }
    const std::int64_t found = *(after - 1);
    out.push_back(values[static_cast<std::size_t>(found)].event_ms >= row.at_ms - ttl_ms ? found
                                                                                         : -1);
  }
  return out;
}

}  // namespace corral::registry
