#include "server/controllers/features.h"

#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

#include "core/dataset.h"
#include "core/job_spec_parse.h"
#include "core/json_object.h"
#include "registry/feature_lookup.h"

namespace corral::server {

using core::Result;
using nlohmann::json;

Result<FeatureLookupAnswer> lookup_features(store::FeatureRepo& features,
                                            const store::FeatureSetRow& set, const json& request) {
  for (const auto& [k, v] : request.items()) {
    if (k != "rows" && k != "ttlMs") return core::invalid_argument(k, "unknown field");
  }
  CORRAL_ASSIGN_OR_RETURN(const std::int64_t ttl, core::integer_in(request.value("ttlMs", json()),
                                                                   "ttlMs", 0, kMaxFeatureTimeMs));
  const json rows = request.value("rows", json());
  if (!rows.is_array() || rows.size() > kMaxFeatureBatch) {
    return core::invalid_argument("rows", "must be an array of at most " +
                                              std::to_string(kMaxFeatureBatch) + " {entity, atMs}");
  }
  FeatureLookupAnswer answer;
  std::vector<registry::LookupRow> queries;
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> span;  // entity -> [min at, max at]
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string path = "rows[" + std::to_string(i) + "]";
    const json& r = rows[i];
    if (!r.is_object() || !r.value("entity", json()).is_string()) {
      return core::invalid_argument(path + ".entity", "must be an entity id");
    }
    CORRAL_ASSIGN_OR_RETURN(
        const std::int64_t at,
        core::integer_in(r.value("atMs", json()), path + ".atMs", 0, kMaxFeatureTimeMs));
    const std::string entity = r["entity"];
    queries.push_back({.entity = entity, .at_ms = at});
    answer.latest_at_ms = std::max(answer.latest_at_ms, at);
    auto [it, fresh] = span.emplace(entity, std::make_pair(at, at));
    if (!fresh) it->second = {std::min(it->second.first, at), std::max(it->second.second, at)};
  }
  // Only what can answer: each entity's values between its earliest instant less the TTL
  // and its latest instant.
  std::vector<core::FeatureValue> values;
  for (const auto& [entity, s] : span) {
    CORRAL_ASSIGN_OR_RETURN(
        auto mine, features.feature_values(set.name, set.version, entity, s.first - ttl, s.second));
    values.insert(values.end(), std::make_move_iterator(mine.begin()),
                  std::make_move_iterator(mine.end()));
  }
  const auto found = registry::point_in_time(values, queries, ttl);
  json results = json::array();
  for (std::size_t i = 0; i < queries.size(); ++i) {
    json r = {{"entity", queries[i].entity},
              {"atMs", queries[i].at_ms},
              {"eventTimeMs", nullptr},
              {"values", nullptr}};
    if (found[i] >= 0) {
      const core::FeatureValue& v = values[static_cast<std::size_t>(found[i])];
      r["eventTimeMs"] = v.event_ms;
      r["values"] = json::parse(v.values);
    }
    results.push_back(std::move(r));
  }
  CORRAL_ASSIGN_OR_RETURN(answer.watermarks, features.watermarks(set.name, set.version));
  answer.rows = static_cast<std::int64_t>(queries.size());
  answer.body = {{"results", std::move(results)}, {"watermarks", answer.watermarks}};
  return answer;
}

Result<store::FeatureSetRow> tenant_feature_set(store::FeatureRepo& features, std::string_view ref,
                                                const std::string& tenant) {
  const auto missing = [&] {
    return core::not_found("feature set " + std::string(ref.substr(0, 128)) + " not found");
  };
  const auto at = ref.find('@');
  if (at == std::string_view::npos) return missing();
  const std::string_view name = ref.substr(0, at), version = ref.substr(at + 1);
  if (name.size() > 63 || !core::is_dns_label(name) || !core::is_dataset_version(version)) {
    return missing();
  }
  CORRAL_ASSIGN_OR_RETURN(const auto row, features.get_feature_set(name, version));
  if (!row || row->tenant.value != tenant) return missing();
  return *row;
}

}  // namespace corral::server
