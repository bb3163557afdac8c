// Drift of a model version (docs/drift.md). The serving side sets a reference sample per
// feature (predictions and labels are samples named like any other), posted whole or
// taken from a window of what it reported before; then it posts current samples, and
// logs predictions by id whose labels it posts when they arrive. Each current sample is
// judged by registry::judge (registry/drift.h: Evidently's defaults unless the reference
// sets its own thresholds); labels are also judged by the error of the predictions they
// label, where the reference sets a threshold. This file parses, asks the registry and
// stores. Every report is kept with its segment; one that drifted submits the model's
// retraining template (api_retraining.cc), subject to the tenant's retraining budget.
//
// A model version is visible as in the registry (model_registry.h): another tenant's
// answers 404.
#include <algorithm>
#include <cmath>
#include <httplib.h>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/agent_protocol.h"
#include "core/job_spec_parse.h"
#include "core/json_object.h"
#include "registry/drift.h"
#include "server/api/api_routes.h"
#include "server/api/api_views.h"
#include "server/api/model_registry.h"
#include "server/base/http_status.h"
#include "server/base/model_json.h"

namespace corral::server {
namespace {

using core::Result;
using core::Status;
using nlohmann::json;

constexpr std::size_t kMaxFeatures = 100;
constexpr std::size_t kMaxValues = 100'000;
constexpr std::size_t kMaxBins = 1000;          // bins of a histogram
constexpr std::size_t kMaxDriftBatch = 10'000;  // predictions or labels in one request

Result<store::ModelVersionRow> visible_model_version(const Call& c, store::ModelRepo& models) {
  return visible_model_version(models, c.who, c.path_param(1), c.path_param(2));
}

Result<double> finite(const json& v, const std::string& path) {
  if (!v.is_number() || !std::isfinite(v.get<double>())) {
    return core::invalid_argument(path, "must be a finite number");
  }
  return v.get<double>();
}

// {"edges": 2 to 1,001 rising numbers, "counts": one per bin, 0 or more, not all 0}.
Result<registry::Histogram> read_histogram(const json& h, const std::string& path) {
  CORRAL_RETURN_IF_ERROR(core::only_fields(h, path, {"edges", "counts"}));
  const json edges = h.value("edges", json()), counts = h.value("counts", json());
  if (!edges.is_array() || edges.size() < 2 || edges.size() > kMaxBins + 1) {
    return core::invalid_argument(path + ".edges", "must be an array of 2 to 1001 rising numbers");
  }
  registry::Histogram out;
  for (std::size_t i = 0; i < edges.size(); ++i) {
    const std::string at = path + ".edges[" + std::to_string(i) + "]";
    CORRAL_ASSIGN_OR_RETURN(const double edge, finite(edges[i], at));
    if (i > 0 && !(edge > out.edges.back())) {
      return core::invalid_argument(at, "must be above the edge before it");
    }
    out.edges.push_back(edge);
  }
  if (!counts.is_array() || counts.size() != edges.size() - 1) {
    return core::invalid_argument(
        path + ".counts", "must hold one count per bin, " + std::to_string(edges.size() - 1));
  }
  double total = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const std::string at = path + ".counts[" + std::to_string(i) + "]";
    CORRAL_ASSIGN_OR_RETURN(const double count, finite(counts[i], at));
    if (count < 0) return core::invalid_argument(at, "must be a count, 0 or more");
    out.counts.push_back(count);
    total += count;
  }
  if (!(total > 0)) return core::invalid_argument(path + ".counts", "must not all be 0");
  return out;
}

// [finite numbers] | histogram: 1 to 100,000 values or 1,000 bins.
Result<registry::Sample> read_sample(const json& values, const std::string& path) {
  if (values.is_object()) {
    CORRAL_ASSIGN_OR_RETURN(registry::Histogram h, read_histogram(values, path));
    return registry::Sample(std::move(h));
  }
  if (!values.is_array() || values.empty() || values.size() > kMaxValues) {
    return core::invalid_argument(
        path, "must be an array of 1 to 100000 numbers, or a histogram {edges, counts}");
  }
  std::vector<double> out;
  out.reserve(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    CORRAL_ASSIGN_OR_RETURN(const double x, finite(values[i], core::element_path(path, i)));
    out.push_back(x);
  }
  return registry::Sample(std::move(out));
}

// {feature: sample}: 1 to 100 features, each read by read_sample.
Result<registry::Samples> read_samples(const json& features) {
  if (!features.is_object() || features.empty() || features.size() > kMaxFeatures) {
    return core::invalid_argument("features", "must map 1 to 100 feature names to their values");
  }
  registry::Samples out;
  for (const auto& [name, values] : features.items()) {
    const std::string path = "features." + name;
    if (!core::is_metric_name(name)) return core::invalid_argument(path, "must be a feature name");
    CORRAL_ASSIGN_OR_RETURN(out[name], read_sample(values, path));
  }
  return out;
}

json sample_json(const registry::Sample& s) {
  if (const auto* h = std::get_if<registry::Histogram>(&s)) {
    return {{"edges", h->edges}, {"counts", h->counts}};
  }
  return std::get<std::vector<double>>(s);
}

json samples_json(const registry::Samples& samples) {
  json out = json::object();
  for (const auto& [name, s] : samples) out[name] = sample_json(s);
  return out;
}

json count_json(double n) {
  return n == std::floor(n) && n < 9e15 ? json(static_cast<std::int64_t>(n)) : json(n);
}

// "" or a DNS label.
Result<std::string> read_segment(const json& body, const std::string& path) {
  const json segment = body.value("segment", json(""));
  if (!segment.is_string() || segment.get<std::string>().size() > 63 ||
      (!segment.get<std::string>().empty() && !core::is_dns_label(segment.get<std::string>()))) {
    return core::invalid_argument(path, "must be a segment label (a DNS label)");
  }
  return segment.get<std::string>();
}

// {ksP, wassersteinNormed, mae, accuracy}: the first two default to Evidently's; the
// label thresholds (the predictions' largest mean absolute error, smallest accuracy)
// apply only where set. `stored`: a reference as set_reference kept it, where an unset
// label threshold is written as null; a request may not send null.
Result<registry::DriftThresholds> read_thresholds(const json& body, bool stored = false) {
  const json given = body.value("thresholds", json::object());
  if (!given.is_object()) {
    return core::invalid_argument("thresholds", "must be {ksP, wassersteinNormed, mae, accuracy}");
  }
  registry::DriftThresholds out;
  for (const auto& [k, value] : given.items()) {
    double* field = k == "ksP"                 ? &out.ks_p
                    : k == "wassersteinNormed" ? &out.wasserstein_normed
                                               : nullptr;
    if (field == nullptr && k != "mae" && k != "accuracy") {
      return core::invalid_argument("thresholds." + k, "unknown field");
    }
    if (stored && value.is_null()) continue;
    const double most = k == "accuracy" ? 1.0 : 1e6;
    if (!value.is_number() || !(value.get<double>() > 0) || !(value.get<double>() <= most)) {
      return core::invalid_argument("thresholds." + k, k == "accuracy"
                                                           ? "must be a number in (0, 1]"
                                                           : "must be a number above 0");
    }
    const double v = value.get<double>();
    if (field != nullptr) *field = v;
    if (k == "mae") out.mae = v;
    if (k == "accuracy") out.accuracy = v;
  }
  return out;
}

json thresholds_json(const registry::DriftThresholds& t) {
  return {{"ksP", t.ks_p},
          {"wassersteinNormed", t.wasserstein_normed},
          {"mae", t.mae ? json(*t.mae) : json(nullptr)},
          {"accuracy", t.accuracy ? json(*t.accuracy) : json(nullptr)}};
}

// At most kMaxValues of `values`, evenly spaced, in order: a window's reference is
// bounded like a posted one.
std::vector<double> bounded(const std::vector<double>& values) {
  if (values.size() <= kMaxValues) return values;
  std::vector<double> out;
  out.reserve(kMaxValues);
  for (std::size_t i = 0; i < kMaxValues; ++i)
    out.push_back(values[i * values.size() / kMaxValues]);
  return out;
}

// The samples of the reports and the logged predictions (and their labels) of a window:
// {"fromMs", "toMs", "segment"?}.
// Raw samples only: a histogram's values cannot be joined with others'.
Result<registry::Samples> window_samples(store::ModelRepo& models, const store::ModelVersionRow& v,
                                         const json& w) {
  if (!w.is_object()) return core::invalid_argument("window", "must be {fromMs, toMs, segment}");
  CORRAL_RETURN_IF_ERROR(core::only_fields(w, "window", {"fromMs", "toMs", "segment"}));
  CORRAL_ASSIGN_OR_RETURN(
      const std::int64_t from,
      core::integer_in(w.value("fromMs", json()), "window.fromMs", 0, std::int64_t{1} << 53));
  CORRAL_ASSIGN_OR_RETURN(
      const std::int64_t to,
      core::integer_in(w.value("toMs", json()), "window.toMs", 0, std::int64_t{1} << 53));
  if (to <= from) return core::invalid_argument("window.toMs", "must be after window.fromMs");
  CORRAL_ASSIGN_OR_RETURN(const std::string segment, read_segment(w, "window.segment"));
  const store::DriftWindow window{.model = v.name,
                                  .version = v.version,
                                  .segment = segment,
                                  .from = core::time_from_ms(from),
                                  .to = core::time_from_ms(to)};
  std::map<std::string, std::vector<double>> out;
  CORRAL_ASSIGN_OR_RETURN(const auto kept, models.list_drift_samples(window));
  for (const auto& text : kept) {
    const json samples = json::parse(text, nullptr, false);
    if (!samples.is_object()) continue;
    for (const auto& [name, values] : samples.items()) {
      if (!values.is_array()) continue;
      for (const auto& x : values) out[name].push_back(x.get<double>());
    }
  }
  CORRAL_ASSIGN_OR_RETURN(const auto logged, models.list_drift_predictions(window));
  for (const auto& p : logged) {
    out["prediction"].push_back(p.value);
    if (p.label) out["label"].push_back(*p.label);
  }
  if (out.empty()) {
    return core::failed_precondition("no reports or predictions of " + v.name + "@" + v.version +
                                     " in the window");
  }
  registry::Samples joined;
  for (const auto& [name, values] : out) joined[name] = bounded(values);
  return joined;
}

// POST .../drift/reference {features | window, thresholds?}
Result<Reply> set_reference(ApiContext& api, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const auto v, visible_model_version(c, tx.models()));
  CORRAL_ASSIGN_OR_RETURN(const json body, core::parse_json_object(c.body()));
  CORRAL_RETURN_IF_ERROR(core::only_fields(body, "", {"features", "window", "thresholds"}));
  if (body.contains("features") == body.contains("window")) {
    return core::invalid_argument("features", "give either features or window, not both");
  }
  registry::DriftReference reference;
  if (body.contains("window")) {
    CORRAL_ASSIGN_OR_RETURN(reference.features, window_samples(tx.models(), v, body["window"]));
  } else {
    CORRAL_ASSIGN_OR_RETURN(reference.features, read_samples(body["features"]));
  }
  CORRAL_ASSIGN_OR_RETURN(reference.thresholds, read_thresholds(body));
  const json thresholds = thresholds_json(reference.thresholds);
  const json stored = {{"features", samples_json(reference.features)}, {"thresholds", thresholds}};
  CORRAL_RETURN_IF_ERROR(
      tx.models().put_drift_reference(v.name, v.version, stored.dump(), c.who.id, api.now()));
  CORRAL_RETURN_IF_ERROR(api.pipeline.audit(
      tx, c, "model.drift.reference", "model/" + v.name + "@" + v.version, "", thresholds.dump()));
  json sizes = json::object();
  for (const auto& [name, sample] : reference.features) {
    sizes[name] = count_json(registry::size_of(sample));
  }
  return json_reply(
      {{"model", v.name}, {"version", v.version}, {"features", sizes}, {"thresholds", thresholds}});
}

// The version's reference as set_reference stored it; Internal when the row is unreadable.
Result<registry::DriftReference> stored_reference(store::ModelRepo& models,
                                                  const store::ModelVersionRow& v) {
  CORRAL_ASSIGN_OR_RETURN(const auto stored, models.drift_reference(v.name, v.version));
  if (!stored) {
    return core::failed_precondition(
        v.name + "@" + v.version +
        " has no drift reference: set one first (POST .../drift/reference)");
  }
  const auto unreadable = [&](const std::string& why) {
    return core::internal_error("the stored drift reference of " + v.name + "@" + v.version +
                                " is unreadable: " + why);
  };
  const json doc = json::parse(*stored, nullptr, false);
  if (!doc.is_object() || !doc.value("features", json()).is_object()) {
    return unreadable("not {features, thresholds}");
  }
  registry::DriftReference out;
  for (const auto& [name, values] : doc["features"].items()) {
    auto sample = read_sample(values, "features." + name);
    if (!sample.ok()) return unreadable(sample.status().to_string());
    out.features.emplace(name, *std::move(sample));
  }
  auto thresholds = read_thresholds(doc, /*stored=*/true);
  if (!thresholds.ok()) return unreadable(thresholds.status().to_string());
  out.thresholds = *thresholds;
  return out;
}

json judgement_json(const registry::DriftJudgement& judged) {
  json features = json::object();
  for (const auto& [name, f] : judged.features) {
    features[name] = {{"method", f.by_ks ? "ks" : "wasserstein"},
                      {"threshold", f.threshold},
                      {"drifted", f.drifted},
                      {"ks", f.stats.ks},
                      {"ksP", f.stats.ks_p},
                      {"psi", f.stats.psi},
                      {"jensenShannon", f.stats.jensen_shannon},
                      {"wasserstein", f.stats.wasserstein},
                      {"wassersteinNormed", f.stats.wasserstein_normed},
                      {"referenceValues", count_json(f.reference_values)},
                      {"currentValues", count_json(f.current_values)}};
  }
  return features;
}

// Keeps the report and, when it drifted, submits the model's retraining template; the
// report records what became of that.
Result<json> keep_report(ApiContext& api, const Call& c, store::Tx& tx,
                         const store::ModelVersionRow& v, json report,
                         const std::vector<std::string>& drifted, const std::string& samples) {
  report["model"] = v.name;
  report["version"] = v.version;
  report["drifted"] = !drifted.empty();
  report["atMs"] = core::to_ms(api.now());
  RetrainOutcome outcome;
  std::string why;
  if (!drifted.empty()) {
    for (const auto& name : drifted) why += (why.empty() ? "" : ", ") + name;
    CORRAL_ASSIGN_OR_RETURN(outcome, retrain_on_drift(api, c, tx, v));
    report["retraining"] = outcome.record;
  }
  CORRAL_ASSIGN_OR_RETURN(const std::int64_t id,
                          tx.models().append_drift_report({.model = v.name,
                                                           .version = v.version,
                                                           .segment = report.value("segment", ""),
                                                           .drifted = !drifted.empty(),
                                                           .report = report.dump(),
                                                           .samples = samples,
                                                           .at = api.now()}));
  report["id"] = id;
  CORRAL_RETURN_IF_ERROR(record_retraining(tx, outcome, v, id, why, api.now()));
  return report;
}

bool submitted_retraining(const json& report) {
  return report.contains("retraining") && report["retraining"].value("outcome", "") == "submitted";
}

// POST .../drift {features, segment?}: one report, kept.
Result<Reply> report(ApiContext& api, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const auto v, visible_model_version(c, tx.models()));
  CORRAL_ASSIGN_OR_RETURN(const json body, core::parse_json_object(c.body()));
  CORRAL_RETURN_IF_ERROR(core::only_fields(body, "", {"features", "segment"}));
  CORRAL_ASSIGN_OR_RETURN(const std::string segment, read_segment(body, "segment"));
  CORRAL_ASSIGN_OR_RETURN(const registry::Samples current,
                          read_samples(body.value("features", json())));
  CORRAL_ASSIGN_OR_RETURN(const registry::DriftReference reference,
                          stored_reference(tx.models(), v));
  CORRAL_ASSIGN_OR_RETURN(const registry::DriftJudgement judged,
                          registry::judge(reference, current, true));
  CORRAL_ASSIGN_OR_RETURN(json out, keep_report(api, c, tx, v,
                                                {{"kind", "features"},
                                                 {"segment", segment},
                                                 {"features", judgement_json(judged)}},
                                                judged.drifted, samples_json(current).dump()));
  Reply reply = json_reply(out, 201);
  reply.wake_scheduler = submitted_retraining(out);
  return reply;
}

// [{id, value}] of 1 to 10,000 entries at body[key], ids unique: 1 to 128 printable
// ASCII characters.
Result<std::map<std::string, double>> read_by_id(const json& body, const char* key) {
  const json items = body.value(key, json());
  if (!items.is_array() || items.empty() || items.size() > kMaxDriftBatch) {
    return core::invalid_argument(key, "must be an array of 1 to 10000 {id, value}");
  }
  std::map<std::string, double> out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string path = std::string(key) + "[" + std::to_string(i) + "]";
    const json& item = items[i];
    if (!item.is_object()) return core::invalid_argument(path, "must be {id, value}");
    CORRAL_RETURN_IF_ERROR(core::only_fields(item, path, {"id", "value"}));
    const json given = item.value("id", json());
    const std::string id = given.is_string() ? given.get<std::string>() : "";
    const bool printable =
        std::all_of(id.begin(), id.end(), [](char ch) { return ch > ' ' && ch < 127; });
    if (!printable || id.empty() || id.size() > 128) {
      return core::invalid_argument(path + ".id", "must be 1 to 128 printable ASCII characters");
    }
    CORRAL_ASSIGN_OR_RETURN(const double value,
                            finite(item.value("value", json()), path + ".value"));
    if (!out.emplace(id, value).second)
      return core::invalid_argument(path + ".id", "repeats " + id);
  }
  return out;
}

std::vector<std::string> keys_of(const std::map<std::string, double>& m) {
  std::vector<std::string> out;
  for (const auto& [k, v] : m) out.push_back(k);
  return out;
}

Status conflict(std::string message) {
  return Status(core::StatusCode::kAlreadyExists, std::move(message));
}

// POST .../drift/predictions {segment?, predictions: [{id, value}]}: logged by id so that
// labels can find them; a retry logs nothing twice, another value under a logged id is
// refused.
Result<Reply> log_predictions(ApiContext& api, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const auto v, visible_model_version(c, tx.models()));
  CORRAL_ASSIGN_OR_RETURN(const json body, core::parse_json_object(c.body()));
  CORRAL_RETURN_IF_ERROR(core::only_fields(body, "", {"predictions", "segment"}));
  CORRAL_ASSIGN_OR_RETURN(const std::string segment, read_segment(body, "segment"));
  CORRAL_ASSIGN_OR_RETURN(const auto predictions, read_by_id(body, "predictions"));
  CORRAL_ASSIGN_OR_RETURN(const auto logged, tx.models().get_drift_predictions(
                                                 v.name, v.version, keys_of(predictions)));
  for (const auto& p : logged) {
    if (p.value != predictions.at(p.id) || p.segment != segment) {
      return conflict("prediction " + p.id + " is already logged with another value or segment");
    }
  }
  std::vector<store::DriftPredictionRow> rows;
  for (const auto& [id, value] : predictions) {
    rows.push_back({.model = v.name,
                    .version = v.version,
                    .id = id,
                    .segment = segment,
                    .value = value,
                    .at = api.now()});
  }
  CORRAL_ASSIGN_OR_RETURN(const std::int64_t added, tx.models().insert_drift_predictions(rows));
  return json_reply({{"model", v.name},
                     {"version", v.version},
                     {"logged", added},
                     {"alreadyLogged", static_cast<std::int64_t>(predictions.size()) - added}},
                    201);
}

json performance_json(const registry::Performance& p) {
  return {{"labeled", p.labeled},
          {"mae", p.mae},
          {"rmse", p.rmse},
          {"accuracy", p.accuracy ? json(*p.accuracy) : json(nullptr)}};
}

// POST .../drift/labels {labels: [{id, value}]}: the labels of logged predictions, which
// arrive later. Each segment's newly labelled predictions make one report: the labels
// against the reference's "label" sample, if it has one, and the predictions' error
// against the reference's mae and accuracy thresholds, if it sets them. Unknown ids are
// answered, not refused (the serving side may have logged only a sample).
Result<Reply> post_labels(ApiContext& api, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const auto v, visible_model_version(c, tx.models()));
  CORRAL_ASSIGN_OR_RETURN(const json body, core::parse_json_object(c.body()));
  CORRAL_RETURN_IF_ERROR(core::only_fields(body, "", {"labels"}));
  CORRAL_ASSIGN_OR_RETURN(const auto labels, read_by_id(body, "labels"));
  CORRAL_ASSIGN_OR_RETURN(const registry::DriftReference reference,
                          stored_reference(tx.models(), v));
  CORRAL_ASSIGN_OR_RETURN(const auto logged,
                          tx.models().get_drift_predictions(v.name, v.version, keys_of(labels)));
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> by_segment;
  std::set<std::string> known;
  std::int64_t repeated = 0;
  for (const auto& p : logged) {
    known.insert(p.id);
    const double label = labels.at(p.id);
    if (p.label) {
      if (*p.label != label) return conflict("prediction " + p.id + " already has another label");
      ++repeated;  // a retry
      continue;
    }
    CORRAL_RETURN_IF_ERROR(
        tx.models().label_drift_prediction(v.name, v.version, p.id, label, api.now()));
    by_segment[p.segment].first.push_back(p.value);
    by_segment[p.segment].second.push_back(label);
  }
  json unknown = json::array();
  for (const auto& [id, value] : labels) {
    if (!known.contains(id) && unknown.size() < 20) unknown.push_back(id);
  }
  json reports = json::array();
  for (const auto& [segment, pair] : by_segment) {
    const auto& [predictions, values] = pair;
    CORRAL_ASSIGN_OR_RETURN(registry::DriftJudgement judged,
                            registry::judge(reference, {{"label", values}}, false));
    const registry::Performance perf = registry::performance(predictions, values);
    for (std::string& broken : registry::performance_drift(perf, reference.thresholds)) {
      judged.drifted.push_back(std::move(broken));
    }
    CORRAL_ASSIGN_OR_RETURN(json out, keep_report(api, c, tx, v,
                                                  {{"kind", "labels"},
                                                   {"segment", segment},
                                                   {"features", judgement_json(judged)},
                                                   {"performance", performance_json(perf)}},
                                                  judged.drifted, ""));
    reports.push_back(std::move(out));
  }
  bool submitted = false;
  for (const auto& one : reports) submitted = submitted || submitted_retraining(one);
  Reply reply = json_reply({{"model", v.name},
                            {"version", v.version},
                            {"labeled", static_cast<std::int64_t>(known.size()) - repeated},
                            {"alreadyLabeled", repeated},
                            {"unknown", static_cast<std::int64_t>(labels.size() - known.size())},
                            {"unknownIds", unknown},
                            {"reports", reports}});
  reply.wake_scheduler = submitted;  // the scheduler reads the new job now
  return reply;
}

Result<Reply> list_reports(ApiContext&, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const auto v, visible_model_version(c, tx.models()));
  CORRAL_ASSIGN_OR_RETURN(const auto rows, tx.models().list_drift_reports(v.name, v.version, 100));
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
      write_route("POST", drift + "/predictions", kUsers, bind_api(api, log_predictions)),
      write_route("POST", drift + "/labels", kUsers, bind_api(api, post_labels)),
      read_route("GET", drift, kUsers, bind_api(api, list_reports)),
  };
}

}  // namespace corral::server
