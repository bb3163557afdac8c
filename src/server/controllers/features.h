// The point-in-time lookup of a feature set version (docs/features.md), shared by the
// member endpoint (api_features.cc: POST /v1/features/{name}/versions/{v}/lookup) and a
// training job's own lookups through its agent (agent_reports.h): one parser of the rows,
// one read of the store, one answer, so the two can never disagree.
//
// Thread safety: free functions over the caller's Tx.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "store/store.h"

namespace corral::server {

// Rows a lookup, values a write.
inline constexpr std::size_t kMaxFeatureBatch = 10000;
// The latest event time or instant taken (about 35,000 years past 1970).
inline constexpr std::int64_t kMaxFeatureTimeMs = std::int64_t{1} << 50;

struct FeatureLookupAnswer {
  nlohmann::json body;  // {"results": [{entity, atMs, eventTimeMs, values}], "watermarks"}
  std::int64_t rows = 0;
  std::int64_t latest_at_ms = -1;  // the latest instant a row asked for; -1: no rows
  std::map<std::string, std::int64_t> watermarks;
};

// Answers `request` ({rows: [{entity, atMs}], ttlMs}) from `set`, in the rows' order:
// for each row the entity's value with the latest event time at or before atMs, within
// ttlMs (registry::point_in_time). InvalidArgument names the field (`rows[3].atMs`).
core::Result<FeatureLookupAnswer> lookup_features(store::FeatureRepo& features,
                                                  const store::FeatureSetRow& set,
                                                  const nlohmann::json& request);

// The version `ref` ("NAME@VERSION") names, when it is `tenant`'s: NotFound otherwise,
// the same answer for another tenant's set as for none.
core::Result<store::FeatureSetRow> tenant_feature_set(store::FeatureRepo& features,
                                                      std::string_view ref,
                                                      const std::string& tenant);

}  // namespace corral::server
