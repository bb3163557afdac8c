// Drift reports of a model version (docs/drift.md): the serving side sets a reference
// sample per feature (or for predictions, under any name), then posts current samples;
// each is compared with core::drift_stats, judged as Evidently does by default (up to
// 1,000 reference values: the KS p-value under 0.05; more: the normed Wasserstein
// distance at 0.1 or above) unless the reference sets its own thresholds, and kept as a
// report with its segment.
//
// A model version is visible as in the registry (model_registry.h): another tenant's
// answers 404.
#include <cmath>
#include <httplib.h>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/agent_protocol.h"
#include "core/drift.h"
#include "core/job_spec_parse.h"
#include "core/json_object.h"
#include "server/api_routes.h"
#include "server/api_views.h"
#include "server/http_status.h"
#include "server/model_registry.h"

namespace corral::server {
namespace {

using core::Result;
using core::Status;
using nlohmann::json;

constexpr std::size_t kMaxFeatures = 100;
constexpr std::size_t kMaxValues = 100'000;
constexpr std::size_t kSmallReference = 1000;  // Evidently: KS up to here, Wasserstein above

Result<store::ModelVersionRow> visible_version(const Call& c, store::Tx& tx) {
  return visible_model_version(tx, c.who, c.path_param(1), c.path_param(2));
}

// {feature: [finite numbers]}: at most 100 features of 1 to 100,000 values.
Result<json> read_samples(const json& body) {
  const json features = body.value("features", json());
  if (!features.is_object() || features.empty() || features.size() > kMaxFeatures) {
    return core::invalid_argument("features", "must map 1 to 100 feature names to their values");
  }
  for (const auto& [name, values] : features.items()) {
    const std::string path = "features." + name;
    if (!core::is_metric_name(name)) return core::invalid_argument(path, "must be a feature name");
    if (!values.is_array() || values.empty() || values.size() > kMaxValues) {
      return core::invalid_argument(path, "must be an array of 1 to 100000 numbers");
    }
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (!values[i].is_number() || !std::isfinite(values[i].get<double>())) {
        return core::invalid_argument(path + "[" + std::to_string(i) + "]",
                                      "must be a finite number");
      }
    }
  }
  return features;
}

// POST .../drift/reference {features, thresholds?: {ksP, wassersteinNormed}}
Result<Reply> set_reference(ApiContext& api, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const auto v, visible_version(c, tx));
  CORRAL_ASSIGN_OR_RETURN(const json body, core::parse_json_object(c.body()));
  for (const auto& [k, value] : body.items()) {
    if (k != "features" && k != "thresholds") return core::invalid_argument(k, "unknown field");
  }
  CORRAL_ASSIGN_OR_RETURN(const json features, read_samples(body));
  json thresholds = {{"ksP", 0.05}, {"wassersteinNormed", 0.1}};
  const json given = body.value("thresholds", json::object());
  if (!given.is_object())
    return core::invalid_argument("thresholds", "must be {ksP, wassersteinNormed}");
  for (const auto& [k, value] : given.items()) {
    if (!thresholds.contains(k)) return core::invalid_argument("thresholds." + k, "unknown field");
    if (!value.is_number() || !(value.get<double>() > 0) || !(value.get<double>() <= 1e6)) {
      return core::invalid_argument("thresholds." + k, "must be a number above 0");
    }
    thresholds[k] = value;
  }
  const json reference = {{"features", features}, {"thresholds", thresholds}};
  CORRAL_RETURN_IF_ERROR(
      tx.put_drift_reference(v.name, v.version, reference.dump(), c.who.id, api.now()));
  CORRAL_RETURN_IF_ERROR(api.pipeline.audit(
      tx, c, "model.drift.reference", "model/" + v.name + "@" + v.version, "", thresholds.dump()));
  json sizes = json::object();
  for (const auto& [name, values] : features.items()) sizes[name] = values.size();
  return json_reply(
      {{"model", v.name}, {"version", v.version}, {"features", sizes}, {"thresholds", thresholds}});
}

// POST .../drift {features, segment?}: one report, kept.
Result<Reply> report(ApiContext& api, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const auto v, visible_version(c, tx));
  CORRAL_ASSIGN_OR_RETURN(const json body, core::parse_json_object(c.body()));
  for (const auto& [k, value] : body.items()) {
    if (k != "features" && k != "segment") return core::invalid_argument(k, "unknown field");
  }
  const json segment = body.value("segment", json(""));
  if (!segment.is_string() || segment.get<std::string>().size() > 63 ||
      (!segment.get<std::string>().empty() && !core::is_dns_label(segment.get<std::string>()))) {
    return core::invalid_argument("segment", "must be a segment label (a DNS label)");
  }
  CORRAL_ASSIGN_OR_RETURN(const json current, read_samples(body));
  CORRAL_ASSIGN_OR_RETURN(const auto stored, tx.drift_reference(v.name, v.version));
  if (!stored) {
    return core::failed_precondition(
        v.name + "@" + v.version +
        " has no drift reference: set one first (POST .../drift/reference)");
  }
  const json reference = json::parse(*stored);
  const json& thresholds = reference["thresholds"];
  json features = json::object();
  bool drifted = false;
  for (const auto& [name, values] : current.items()) {
    const json ref = reference["features"].value(name, json());
    if (!ref.is_array())
      return core::invalid_argument("features." + name, "has no reference sample");
    const core::DriftStats s =
        core::drift_stats(ref.get<std::vector<double>>(), values.get<std::vector<double>>());
    const bool small = ref.size() <= kSmallReference;
    const double threshold =
        small ? thresholds["ksP"].get<double>() : thresholds["wassersteinNormed"].get<double>();
    const bool drift = small ? s.ks_p < threshold : s.wasserstein_normed >= threshold;
    drifted = drifted || drift;
    features[name] = {{"method", small ? "ks" : "wasserstein"},
                      {"threshold", threshold},
                      {"drifted", drift},
                      {"ks", s.ks},
                      {"ksP", s.ks_p},
                      {"psi", s.psi},
                      {"jensenShannon", s.jensen_shannon},
                      {"wasserstein", s.wasserstein},
                      {"wassersteinNormed", s.wasserstein_normed},
                      {"referenceValues", ref.size()},
                      {"currentValues", values.size()}};
  }
  const json out = {{"model", v.name},    {"version", v.version}, {"segment", segment},
                    {"drifted", drifted}, {"features", features}, {"atMs", core::to_ms(api.now())}};
  CORRAL_RETURN_IF_ERROR(tx.append_drift_report({.model = v.name,
                                                 .version = v.version,
                                                 .segment = segment,
                                                 .drifted = drifted,
                                                 .report = out.dump(),
                                                 .at = api.now()}));
  return json_reply(out, 201);
}

Result<Reply> list_reports(ApiContext&, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const auto v, visible_version(c, tx));
  CORRAL_ASSIGN_OR_RETURN(const auto rows, tx.list_drift_reports(v.name, v.version, 100));
  json reports = json::array();
  for (const auto& r : rows) {
    json one = json::parse(r.report, nullptr, false);
    one["id"] = r.id;
    reports.push_back(std::move(one));
  }
  return json_reply({{"reports", std::move(reports)}, {"nextCursor", nullptr}});
}

}  // namespace

std::vector<Route> drift_routes(ApiContext& api) {
  const std::string drift = R"(/v1/models/([^/]+)/versions/([^/]+)/drift)";
  return {
      write_route("POST", drift + "/reference", kUsers, bind_api(api, set_reference)),
      write_route("POST", drift, kUsers, bind_api(api, report)),
      read_route("GET", drift, kUsers, bind_api(api, list_reports)),
  };
}

}  // namespace corral::server
