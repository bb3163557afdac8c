// /v1/features (docs/features.md): feature set versions (a schema and a source, written
// once), their values in batches with event times and the sources' watermarks, and the
// point-in-time lookup training reads them with (registry/feature_lookup.h): for each entity
// and instant, the latest value at or before it within a TTL, never a later one.
//
// A feature set belongs to one tenant and is visible only to it (and admins): another
// tenant's answers 404, as one that does not exist.
#include <algorithm>
#include <cmath>
#include <httplib.h>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/agent_protocol.h"
#include "core/dataset.h"
#include "core/feature_value.h"
#include "core/job_spec_parse.h"
#include "core/json_object.h"
#include "core/utf8.h"
#include "server/api/api_routes.h"
#include "server/api/api_views.h"
#include "server/base/http_status.h"
#include "server/base/model_json.h"
#include "server/controllers/features.h"

namespace corral::server {
namespace {

using core::Result;
using core::Status;
using nlohmann::json;

constexpr std::int64_t kMaxTimeMs = kMaxFeatureTimeMs;

Result<std::string> set_name(const Call& c) {
  const std::string name = c.path_param(1);
  if (name.size() > 63 || !core::is_dns_label(name)) {
    return core::not_found("feature set " + name.substr(0, 63) + " not found");
  }
  return name;
}

json set_json(const store::FeatureSetRow& r, const std::map<std::string, std::int64_t>& marks) {
  json out = json::parse(r.content, nullptr, false);
  if (!out.is_object()) out = json::object();
  out["name"] = r.name;
  out["version"] = r.version;
  out["tenant"] = r.tenant.value;
  out["createdBy"] = r.created_by;
  out["createdAtMs"] = core::to_ms(r.created_at);
  out["watermarks"] = marks;
  return out;
}

// The version the path names, if the caller may see it.
Result<store::FeatureSetRow> visible_set(const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const std::string name, set_name(c));
  const std::string version = c.path_param(2);
  CORRAL_ASSIGN_OR_RETURN(const auto row, tx.features().get_feature_set(name, version));
  if (!row || !can_see_tenant(c.who, row->tenant.value)) {
    return core::not_found("feature set " + name + "@" + version.substr(0, 63) + " not found");
  }
  return *row;
}

bool type_matches(const std::string& type, const json& v) {
  if (type == "float") return v.is_number();
  if (type == "int") return v.is_number_integer();
  if (type == "bool") return v.is_boolean();
  return v.is_string();  // "string"
}

// POST /v1/features/{name}/versions {version, tenant?, schema: {feature: float|int|bool|
// string}, source}
Result<Reply> register_set(ApiContext& api, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const std::string name, set_name(c));
  CORRAL_ASSIGN_OR_RETURN(const json body, core::parse_json_object(c.body()));
  for (const auto& [k, v] : body.items()) {
    if (k != "version" && k != "tenant" && k != "schema" && k != "source")
      return core::invalid_argument(k, "unknown field");
  }
  const json version = body.value("version", json());
  if (!version.is_string() || !core::is_dataset_version(version.get<std::string>())) {
    return core::invalid_argument("version", "must be 1 to 63 of letters, digits, '.', '_', '-'");
  }
  std::string tenant = c.who.role == Role::kMember ? c.who.tenant : "default";
  if (body.contains("tenant")) {
    if (!body["tenant"].is_string()) return core::invalid_argument("tenant", "must be a string");
    if (c.who.role == Role::kMember && body["tenant"] != tenant) {
      return permission_denied("a member of tenant " + tenant +
                               " registers only its own feature sets");
    }
    tenant = body["tenant"];
  }
  CORRAL_ASSIGN_OR_RETURN(const auto tenant_row, tx.tenants().get_tenant(core::TenantId(tenant)));
  if (!tenant_row) return core::invalid_argument("tenant", "unknown tenant \"" + tenant + "\"");
  const json schema = body.value("schema", json());
  if (!schema.is_object() || schema.empty() || schema.size() > 1024) {
    return core::invalid_argument("schema",
                                  "must map 1 to 1024 feature names to float, int, bool or string");
  }
  for (const auto& [feature, type] : schema.items()) {
    if (!core::is_metric_name(feature))
      return core::invalid_argument("schema." + feature, "must be a feature name");
    if (type != "float" && type != "int" && type != "bool" && type != "string") {
      return core::invalid_argument("schema." + feature, "must be float, int, bool or string");
    }
  }
  const json source = body.value("source", json(""));
  if (!source.is_string() || source.get<std::string>().size() > 2048) {
    return core::invalid_argument(
        "source", "must be a string of at most 2048 bytes (where the values come from)");
  }
  const json content = {{"schema", schema}, {"source", source}};
  CORRAL_ASSIGN_OR_RETURN(const auto all, tx.features().list_feature_sets(std::nullopt));
  for (const auto& s : all) {
    if (s.name != name) continue;
    if (s.tenant.value != tenant) {
      return Status(core::StatusCode::kAlreadyExists,
                    "feature set " + name + " is taken by another tenant; choose another name");
    }
    if (s.version != version.get<std::string>()) continue;
    if (s.content == content.dump()) return json_reply(set_json(s, {}));
    return core::invalid_argument("version",
                                  name + "@" + s.version +
                                      " is registered with another schema or "
                                      "source: a version is immutable, register a new one");
  }
  const store::FeatureSetRow row{.name = name,
                                 .version = version.get<std::string>(),
                                 .tenant = core::TenantId(tenant),
                                 .content = content.dump(),
                                 .created_by = c.who.id,
                                 .created_at = api.now()};
  CORRAL_RETURN_IF_ERROR(tx.features().insert_feature_set(row));
  CORRAL_RETURN_IF_ERROR(api.pipeline.audit(
      tx, c, "features.register", "features/" + name + "@" + row.version, "", row.content));
  return json_reply(set_json(row, {}), 201);
}

Result<Reply> get_set(ApiContext&, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const auto row, visible_set(c, tx));
  CORRAL_ASSIGN_OR_RETURN(const auto marks, tx.features().watermarks(row.name, row.version));
  return json_reply(set_json(row, marks));
}

Result<Reply> list_sets(ApiContext&, const Call& c, store::Tx& tx) {
  const std::optional<core::TenantId> tenant =
      c.who.role == Role::kAdmin ? std::nullopt : std::optional<core::TenantId>(c.who.tenant);
  CORRAL_ASSIGN_OR_RETURN(const auto rows, tx.features().list_feature_sets(tenant));
  json items = json::array();
  for (const auto& r : rows) items.push_back(set_json(r, {}));
  return json_reply({{"featureSets", std::move(items)}, {"nextCursor", nullptr}});
}

// POST .../values {values: [{entity, eventTimeMs, values: {feature: value}}], watermarks:
// {source: ms}}: appended in order; send an Idempotency-Key so a retry writes them once.
Result<Reply> write_values(ApiContext& api, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const auto set, visible_set(c, tx));
  CORRAL_ASSIGN_OR_RETURN(const json body, core::parse_json_object(c.body()));
  for (const auto& [k, v] : body.items()) {
    if (k != "values" && k != "watermarks") return core::invalid_argument(k, "unknown field");
  }
  const json schema = json::parse(set.content)["schema"];
  const json rows = body.value("values", json::array());
  if (!rows.is_array() || rows.size() > kMaxFeatureBatch) {
    return core::invalid_argument(
        "values", "must be an array of at most " + std::to_string(kMaxFeatureBatch) + " values");
  }
  std::vector<core::FeatureValue> values;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string path = "values[" + std::to_string(i) + "]";
    const json& r = rows[i];
    if (!r.is_object())
      return core::invalid_argument(path, "must be {entity, eventTimeMs, values}");
    for (const auto& [k, v] : r.items()) {
      if (k != "entity" && k != "eventTimeMs" && k != "values")
        return core::invalid_argument(path + "." + k, "unknown field");
    }
    const json entity = r.value("entity", json());
    if (!entity.is_string() || entity.get<std::string>().empty() ||
        entity.get<std::string>().size() > 256 ||
        core::has_control_chars(entity.get<std::string>())) {
      return core::invalid_argument(path + ".entity",
                                    "must be an entity id of 1 to 256 characters");
    }
    CORRAL_ASSIGN_OR_RETURN(
        const std::int64_t at,
        core::integer_in(r.value("eventTimeMs", json()), path + ".eventTimeMs", 0, kMaxTimeMs));
    const json features = r.value("values", json());
    if (!features.is_object() || features.empty())
      return core::invalid_argument(path + ".values", "must be an object of feature: value");
    for (const auto& [feature, v] : features.items()) {
      if (!schema.contains(feature))
        return core::invalid_argument(path + ".values." + feature, "is not in the schema");
      if (!type_matches(schema[feature], v)) {
        return core::invalid_argument(path + ".values." + feature,
                                      "must be a " + schema[feature].get<std::string>());
      }
    }
    values.push_back({.entity = entity, .event_ms = at, .values = features.dump()});
  }
  std::map<std::string, std::int64_t> marks;
  const json wm = body.value("watermarks", json::object());
  if (!wm.is_object())
    return core::invalid_argument("watermarks", "must be an object of source: ms");
  for (const auto& [source, v] : wm.items()) {
    CORRAL_ASSIGN_OR_RETURN(marks[source],
                            core::integer_in(v, "watermarks." + source, 0, kMaxTimeMs));
  }
  CORRAL_RETURN_IF_ERROR(
      tx.features().append_feature_values(set.name, set.version, values, api.now()));
  CORRAL_RETURN_IF_ERROR(tx.features().raise_watermarks(set.name, set.version, marks));
  return json_reply({{"written", values.size()}}, 201);
}

// POST .../lookup {rows: [{entity, atMs}], ttlMs}: answers in the rows' order
// (features.h, which a training job's lookups through its agent share).
Result<Reply> lookup(ApiContext&, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const auto set, visible_set(c, tx));
  CORRAL_ASSIGN_OR_RETURN(const json body, core::parse_json_object(c.body()));
  CORRAL_ASSIGN_OR_RETURN(FeatureLookupAnswer answer, lookup_features(tx.features(), set, body));
  return json_reply(std::move(answer.body));
}

}  // namespace

std::vector<Route> feature_routes(ApiContext& api) {
  const std::string version = R"(/v1/features/([^/]+)/versions/([^/]+))";
  return {
      read_route("GET", "/v1/features", kUsers, bind_api(api, list_sets)),
      write_route("POST", R"(/v1/features/([^/]+)/versions)", kUsers, bind_api(api, register_set)),
      read_route("GET", version, kUsers, bind_api(api, get_set)),
      write_route("POST", version + "/values", kUsers, bind_api(api, write_values)),
      read_route("POST", version + "/lookup", kUsers, bind_api(api, lookup)),
  };
}

}  // namespace corral::server
