// Drift of a model version (docs/drift.md). The serving side sets a reference sample per
// feature (predictions and labels are samples named like any other), posted whole or
// taken from a window of what it reported before; then it posts current samples, and
// logs predictions by id whose labels it posts when they arrive. Each current sample is
// compared with core::drift_stats and judged as Evidently does by default (up to 1,000
// reference values: the KS p-value under 0.05; more: the normed Wasserstein distance at
// 0.1 or above) unless the reference sets its own thresholds; labels are also judged by
// the error of the predictions they label, where the reference sets a threshold. Every
// report is kept with its segment; one that drifted submits the model's retraining
// template (api_retraining.cc), subject to the tenant's retraining budget.
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
#include "core/drift.h"
#include "core/job_spec_parse.h"
#include "core/json_object.h"
#include "server/api_routes.h"
#include "server/api_views.h"
#include "server/http_status.h"
#include "server/model_json.h"
#include "server/model_registry.h"

namespace corral::server {
namespace {

using core::Result;
using core::Status;
using nlohmann::json;
// Each feature's sample as posted and kept: [values], or a histogram {"edges", "counts"}.
using Samples = std::map<std::string, json>;

constexpr std::size_t kMaxFeatures = 100;
constexpr std::size_t kMaxValues = 100'000;
constexpr std::size_t kMaxBins = 1000;          // bins of a histogram
constexpr std::size_t kMaxDriftBatch = 10'000;  // predictions or labels in one request
constexpr std::size_t kSmallReference = 1000;   // Evidently: KS up to here, Wasserstein above

Result<store::ModelVersionRow> visible_model_version(const Call& c, store::Tx& tx) {
  return visible_model_version(tx, c.who, c.path_param(1), c.path_param(2));
}

// `body`'s fields are among `keys`; else the first other one is named, under `path`.
Status only_fields(const json& body, const std::string& path,
                   std::initializer_list<const char*> keys) {
  for (const auto& [k, value] : body.items()) {
    if (std::find_if(keys.begin(), keys.end(), [&](const char* key) { return k == key; }) ==
        keys.end()) {
      return core::invalid_argument(path.empty() ? k : path + "." + k, "unknown field");
    }
  }
  return Status();
}

Result<double> finite(const json& v, const std::string& path) {
  if (!v.is_number() || !std::isfinite(v.get<double>())) {
    return core::invalid_argument(path, "must be a finite number");
  }
  return v.get<double>();
}

// {"edges": 2 to 1,001 rising numbers, "counts": one per bin, 0 or more, not all 0}.
Status check_histogram(const json& h, const std::string& path) {
  CORRAL_RETURN_IF_ERROR(only_fields(h, path, {"edges", "counts"}));
  const json edges = h.value("edges", json()), counts = h.value("counts", json());
  if (!edges.is_array() || edges.size() < 2 || edges.size() > kMaxBins + 1) {
    return core::invalid_argument(path + ".edges", "must be an array of 2 to 1001 rising numbers");
  }
  for (std::size_t i = 0; i < edges.size(); ++i) {
    const std::string at = path + ".edges[" + std::to_string(i) + "]";
    CORRAL_ASSIGN_OR_RETURN(const double edge, finite(edges[i], at));
    if (i > 0 && !(edge > edges[i - 1].get<double>())) {
      return core::invalid_argument(at, "must be above the edge before it");
    }
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
    total += count;
  }
  if (!(total > 0)) return core::invalid_argument(path + ".counts", "must not all be 0");
  return Status();
}

// {feature: [finite numbers] | histogram}: at most 100 features of 1 to 100,000 values or
// 1,000 bins.
Result<Samples> read_samples(const json& body) {
  const json features = body.value("features", json());
  if (!features.is_object() || features.empty() || features.size() > kMaxFeatures) {
    return core::invalid_argument("features", "must map 1 to 100 feature names to their values");
  }
  Samples out;
  for (const auto& [name, values] : features.items()) {
    const std::string path = "features." + name;
    if (!core::is_metric_name(name)) return core::invalid_argument(path, "must be a feature name");
    if (values.is_object()) {
      CORRAL_RETURN_IF_ERROR(check_histogram(values, path));
    } else if (!values.is_array() || values.empty() || values.size() > kMaxValues) {
      return core::invalid_argument(
          path, "must be an array of 1 to 100000 numbers, or a histogram {edges, counts}");
    } else {
      for (std::size_t i = 0; i < values.size(); ++i) {
        CORRAL_RETURN_IF_ERROR(finite(values[i], path + "[" + std::to_string(i) + "]").status());
      }
    }
    out[name] = values;
  }
  return out;
}

// How many values a sample holds: a histogram's counts, added up.
double size_of(const json& sample) {
  if (sample.is_array()) return static_cast<double>(sample.size());
  double total = 0;
  for (const auto& c : sample["counts"]) total += c.get<double>();
  return total;
}

json count_json(double n) {
  return n == std::floor(n) && n < 9e15 ? json(static_cast<std::int64_t>(n)) : json(n);
}

// One feature's statistics. Two samples are compared as they are; where either is a
// histogram, the other is counted into its bins (two histograms must share their edges).
Result<core::DriftStats> compare(const json& ref, const json& cur, const std::string& path) {
  if (ref.is_array() && cur.is_array()) {
    return core::drift_stats(ref.get<std::vector<double>>(), cur.get<std::vector<double>>());
  }
  if (ref.is_object() && cur.is_object() && ref["edges"] != cur["edges"]) {
    return core::invalid_argument(path + ".edges", "must be the reference's edges");
  }
  const auto edges = (ref.is_object() ? ref : cur)["edges"].get<std::vector<double>>();
  const auto binned = [&](const json& s) {
    return s.is_object()
               ? core::Histogram{.edges = edges, .counts = s["counts"].get<std::vector<double>>()}
               : core::histogram_of(s.get<std::vector<double>>(), edges);
  };
  return core::drift_stats(binned(ref), binned(cur));
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
// apply only where set.
Result<json> read_thresholds(const json& body) {
  json thresholds = {
      {"ksP", 0.05}, {"wassersteinNormed", 0.1}, {"mae", nullptr}, {"accuracy", nullptr}};
  const json given = body.value("thresholds", json::object());
  if (!given.is_object()) {
    return core::invalid_argument("thresholds", "must be {ksP, wassersteinNormed, mae, accuracy}");
  }
  for (const auto& [k, value] : given.items()) {
    if (!thresholds.contains(k)) return core::invalid_argument("thresholds." + k, "unknown field");
    const double most = k == "accuracy" ? 1.0 : 1e6;
    if (!value.is_number() || !(value.get<double>() > 0) || !(value.get<double>() <= most)) {
      return core::invalid_argument("thresholds." + k, k == "accuracy"
                                                           ? "must be a number in (0, 1]"
                                                           : "must be a number above 0");
    }
    thresholds[k] = value;
  }
  return thresholds;
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
Result<Samples> window_samples(store::Tx& tx, const store::ModelVersionRow& v, const json& w) {
  if (!w.is_object()) return core::invalid_argument("window", "must be {fromMs, toMs, segment}");
  CORRAL_RETURN_IF_ERROR(only_fields(w, "window", {"fromMs", "toMs", "segment"}));
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
  CORRAL_ASSIGN_OR_RETURN(const auto kept, tx.list_drift_samples(window));
  for (const auto& text : kept) {
    const json samples = json::parse(text, nullptr, false);
    if (!samples.is_object()) continue;
    for (const auto& [name, values] : samples.items()) {
      if (!values.is_array()) continue;
      for (const auto& x : values) out[name].push_back(x.get<double>());
    }
  }
  CORRAL_ASSIGN_OR_RETURN(const auto logged, tx.list_drift_predictions(window));
  for (const auto& p : logged) {
    out["prediction"].push_back(p.value);
    if (p.label) out["label"].push_back(*p.label);
  }
  if (out.empty()) {
    return core::failed_precondition("no reports or predictions of " + v.name + "@" + v.version +
                                     " in the window");
  }
  Samples joined;
  for (const auto& [name, values] : out) joined[name] = bounded(values);
  return joined;
}

// POST .../drift/reference {features | window, thresholds?}
Result<Reply> set_reference(ApiContext& api, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const auto v, visible_model_version(c, tx));
  CORRAL_ASSIGN_OR_RETURN(const json body, core::parse_json_object(c.body()));
  CORRAL_RETURN_IF_ERROR(only_fields(body, "", {"features", "window", "thresholds"}));
  if (body.contains("features") == body.contains("window")) {
    return core::invalid_argument("features", "give either features or window, not both");
  }
  Samples features;
  if (body.contains("window")) {
    CORRAL_ASSIGN_OR_RETURN(features, window_samples(tx, v, body["window"]));
  } else {
    CORRAL_ASSIGN_OR_RETURN(features, read_samples(body));
  }
  CORRAL_ASSIGN_OR_RETURN(const json thresholds, read_thresholds(body));
  const json reference = {{"features", features}, {"thresholds", thresholds}};
  CORRAL_RETURN_IF_ERROR(
      tx.put_drift_reference(v.name, v.version, reference.dump(), c.who.id, api.now()));
  CORRAL_RETURN_IF_ERROR(api.pipeline.audit(
      tx, c, "model.drift.reference", "model/" + v.name + "@" + v.version, "", thresholds.dump()));
  json sizes = json::object();
  for (const auto& [name, sample] : features) sizes[name] = count_json(size_of(sample));
  return json_reply(
      {{"model", v.name}, {"version", v.version}, {"features", sizes}, {"thresholds", thresholds}});
}

Result<json> stored_reference(store::Tx& tx, const store::ModelVersionRow& v) {
  CORRAL_ASSIGN_OR_RETURN(const auto stored, tx.drift_reference(v.name, v.version));
  if (!stored) {
    return core::failed_precondition(
        v.name + "@" + v.version +
        " has no drift reference: set one first (POST .../drift/reference)");
  }
  return json::parse(*stored);
}

// Each of `current`'s samples against the reference's of the same name, judged; the
// names of those that drifted are added to `drifted`. A sample with no reference is
// refused when `required`, else left out.
Result<json> judge(const json& reference, const Samples& current, bool required,
                   std::vector<std::string>& drifted) {
  const json& thresholds = reference["thresholds"];
  json features = json::object();
  for (const auto& [name, sample] : current) {
    const std::string path = "features." + name;
    const json ref = reference["features"].value(name, json());
    if (!ref.is_array() && !ref.is_object()) {
      if (!required) continue;
      return core::invalid_argument(path, "has no reference sample");
    }
    CORRAL_ASSIGN_OR_RETURN(const core::DriftStats s, compare(ref, sample, path));
    const bool small = size_of(ref) <= kSmallReference;
    const double threshold =
        small ? thresholds["ksP"].get<double>() : thresholds["wassersteinNormed"].get<double>();
    const bool drift = small ? s.ks_p < threshold : s.wasserstein_normed >= threshold;
    if (drift) drifted.push_back(name);
    features[name] = {{"method", small ? "ks" : "wasserstein"},
                      {"threshold", threshold},
                      {"drifted", drift},
                      {"ks", s.ks},
                      {"ksP", s.ks_p},
                      {"psi", s.psi},
                      {"jensenShannon", s.jensen_shannon},
                      {"wasserstein", s.wasserstein},
                      {"wassersteinNormed", s.wasserstein_normed},
                      {"referenceValues", count_json(size_of(ref))},
                      {"currentValues", count_json(size_of(sample))}};
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
                          tx.append_drift_report({.model = v.name,
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
  CORRAL_ASSIGN_OR_RETURN(const auto v, visible_model_version(c, tx));
  CORRAL_ASSIGN_OR_RETURN(const json body, core::parse_json_object(c.body()));
  CORRAL_RETURN_IF_ERROR(only_fields(body, "", {"features", "segment"}));
  CORRAL_ASSIGN_OR_RETURN(const std::string segment, read_segment(body, "segment"));
  CORRAL_ASSIGN_OR_RETURN(const Samples current, read_samples(body));
  CORRAL_ASSIGN_OR_RETURN(const json reference, stored_reference(tx, v));
  std::vector<std::string> drifted;
  CORRAL_ASSIGN_OR_RETURN(json features, judge(reference, current, true, drifted));
  CORRAL_ASSIGN_OR_RETURN(
      json out, keep_report(api, c, tx, v,
                            {{"kind", "features"}, {"segment", segment}, {"features", features}},
                            drifted, json(current).dump()));
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
    CORRAL_RETURN_IF_ERROR(only_fields(item, path, {"id", "value"}));
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
  CORRAL_ASSIGN_OR_RETURN(const auto v, visible_model_version(c, tx));
  CORRAL_ASSIGN_OR_RETURN(const json body, core::parse_json_object(c.body()));
  CORRAL_RETURN_IF_ERROR(only_fields(body, "", {"predictions", "segment"}));
  CORRAL_ASSIGN_OR_RETURN(const std::string segment, read_segment(body, "segment"));
  CORRAL_ASSIGN_OR_RETURN(const auto predictions, read_by_id(body, "predictions"));
  CORRAL_ASSIGN_OR_RETURN(const auto logged,
                          tx.get_drift_predictions(v.name, v.version, keys_of(predictions)));
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
  CORRAL_ASSIGN_OR_RETURN(const std::int64_t added, tx.insert_drift_predictions(rows));
  return json_reply({{"model", v.name},
                     {"version", v.version},
                     {"logged", added},
                     {"alreadyLogged", static_cast<std::int64_t>(predictions.size()) - added}},
                    201);
}

// The labelled predictions' error: mean absolute and root mean square, and accuracy
// (a prediction of 0.5 or more read as 1) when every label is 0 or 1.
json performance(const std::vector<double>& predictions, const std::vector<double>& labels) {
  double abs_sum = 0, sq_sum = 0;
  std::size_t right = 0;
  bool binary = true;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const double e = predictions[i] - labels[i];
    abs_sum += std::abs(e);
    sq_sum += e * e;
    binary = binary && (labels[i] == 0 || labels[i] == 1);
    right += (predictions[i] >= 0.5 ? 1.0 : 0.0) == labels[i] ? 1 : 0;
  }
  const double n = static_cast<double>(labels.size());
  return {{"labeled", labels.size()},
          {"mae", abs_sum / n},
          {"rmse", std::sqrt(sq_sum / n)},
          {"accuracy", binary ? json(static_cast<double>(right) / n) : json(nullptr)}};
}

// POST .../drift/labels {labels: [{id, value}]}: the labels of logged predictions, which
// arrive later. Each segment's newly labelled predictions make one report: the labels
// against the reference's "label" sample, if it has one, and the predictions' error
// against the reference's mae and accuracy thresholds, if it sets them. Unknown ids are
// answered, not refused (the serving side may have logged only a sample).
Result<Reply> post_labels(ApiContext& api, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const auto v, visible_model_version(c, tx));
  CORRAL_ASSIGN_OR_RETURN(const json body, core::parse_json_object(c.body()));
  CORRAL_RETURN_IF_ERROR(only_fields(body, "", {"labels"}));
  CORRAL_ASSIGN_OR_RETURN(const auto labels, read_by_id(body, "labels"));
  CORRAL_ASSIGN_OR_RETURN(const json reference, stored_reference(tx, v));
  CORRAL_ASSIGN_OR_RETURN(const auto logged,
                          tx.get_drift_predictions(v.name, v.version, keys_of(labels)));
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
    CORRAL_RETURN_IF_ERROR(tx.label_drift_prediction(v.name, v.version, p.id, label, api.now()));
    by_segment[p.segment].first.push_back(p.value);
    by_segment[p.segment].second.push_back(label);
  }
  json unknown = json::array();
  for (const auto& [id, value] : labels) {
    if (!known.contains(id) && unknown.size() < 20) unknown.push_back(id);
  }
  const json& thresholds = reference["thresholds"];
  json reports = json::array();
  for (const auto& [segment, pair] : by_segment) {
    const auto& [predictions, values] = pair;
    std::vector<std::string> drifted;
    CORRAL_ASSIGN_OR_RETURN(json features,
                            judge(reference, {{"label", json(values)}}, false, drifted));
    json perf = performance(predictions, values);
    const json mae = thresholds.value("mae", json());
    const json accuracy = thresholds.value("accuracy", json());
    if (mae.is_number() && perf["mae"].get<double>() > mae.get<double>()) {
      drifted.push_back("mae");
    }
    if (accuracy.is_number() && perf["accuracy"].is_number() &&
        perf["accuracy"].get<double>() < accuracy.get<double>()) {
      drifted.push_back("accuracy");
    }
    CORRAL_ASSIGN_OR_RETURN(json out, keep_report(api, c, tx, v,
                                                  {{"kind", "labels"},
                                                   {"segment", segment},
                                                   {"features", features},
                                                   {"performance", perf}},
                                                  drifted, ""));
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
  CORRAL_ASSIGN_OR_RETURN(const auto v, visible_model_version(c, tx));
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
      write_route("POST", drift + "/predictions", kUsers, bind_api(api, log_predictions)),
      write_route("POST", drift + "/labels", kUsers, bind_api(api, post_labels)),
      read_route("GET", drift, kUsers, bind_api(api, list_reports)),
  };
}

}  // namespace corral::server
