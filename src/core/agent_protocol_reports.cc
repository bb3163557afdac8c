#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <limits>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/agent_protocol.h"
#include "core/internal/protocol_fields.h"
#include "core/job_spec.h"
#include "core/json_fields.h"
#include "core/json_object.h"
#include "core/utf8.h"

namespace corral::core {

using namespace detail;  // NOLINT: the limits and readers both files share

namespace {

// The worker a report came through, as its agent forwards it: the session's epoch and
// the worker's job, attempt and rank.
void put_worker(json& j, std::int64_t epoch, const WorkerKey& key) {
  j["epoch"] = epoch;
  j["job"] = key.job;
  j["attempt"] = key.attempt;
  j["rank"] = key.rank;
}

}  // namespace

// ---- §3b ------------------------------------------------------------------------------

namespace {

json telemetry_sample_json(const TelemetrySample& s) {
  json out = {{"gpu", s.gpu},
              {"timeMs", s.time_ms},
              {"utilization", s.utilization},
              {"memoryUsedMib", s.memory_used_mib},
              {"powerW", s.power_w},
              {"temperatureC", s.temperature_c}};
  if (!s.throttle.empty()) out["throttle"] = s.throttle;
  if (s.ecc_corrected > 0) out["eccCorrected"] = s.ecc_corrected;
  if (s.ecc_uncorrected > 0) out["eccUncorrected"] = s.ecc_uncorrected;
  return out;
}

Status read_telemetry_sample(const json& g, const std::string& path, TelemetrySample& out) {
  CORRAL_RETURN_IF_ERROR(read_int(Field{g, path, "gpu", true}, 0, kMaxGpuIndex, out.gpu));
  CORRAL_RETURN_IF_ERROR(read_int(Field{g, path, "timeMs", true}, 0, kMaxTimeMs, out.time_ms));
  CORRAL_RETURN_IF_ERROR(read_double(Field{g, path, "utilization"}, 0, 1, out.utilization));
  CORRAL_RETURN_IF_ERROR(
      read_int(Field{g, path, "memoryUsedMib"}, 0, std::int64_t{1} << 40, out.memory_used_mib));
  CORRAL_RETURN_IF_ERROR(read_double(Field{g, path, "powerW"}, 0, 100000, out.power_w));
  CORRAL_RETURN_IF_ERROR(read_int(Field{g, path, "temperatureC"}, -273, 1000, out.temperature_c));
  CORRAL_RETURN_IF_ERROR(read_string_array(Field{g, path, "throttle"}, 64, out.throttle));
  if (out.throttle.size() > 16) {
    return invalid_argument(child_path(path, "throttle"), "must have at most 16 reasons");
  }
  CORRAL_RETURN_IF_ERROR(read_int(Field{g, path, "eccCorrected"}, 0, INT64_MAX, out.ecc_corrected));
  return read_int(Field{g, path, "eccUncorrected"}, 0, INT64_MAX, out.ecc_uncorrected);
}

}  // namespace

std::string encode_telemetry_batch(const TelemetryBatch& batch) {
  json samples = json::array();
  for (const TelemetrySample& s : batch.samples) samples.push_back(telemetry_sample_json(s));
  return dump({{"samples", std::move(samples)}});
}

Result<TelemetryBatch> decode_telemetry_batch(std::string_view body) {
  CORRAL_ASSIGN_OR_RETURN(const json j, parse_json_object(body));
  const std::string root;
  TelemetryBatch batch;
  if (const json* a = find(j, "samples");
      a != nullptr && a->is_array() && a->size() > kMaxTelemetryBatch) {
    return invalid_argument("samples",
                            "must have at most " + std::to_string(kMaxTelemetryBatch) + " samples");
  }
  CORRAL_RETURN_IF_ERROR(
      read_objects(Field{j, root, "samples", true}, batch.samples, read_telemetry_sample));
  return batch;
}

// ---- §4 -------------------------------------------------------------------------------

std::string encode_checkpoint_report(const CheckpointReport& r) {
  json j = {{"step", r.step}, {"path", r.path}, {"bytes", r.bytes}, {"checksum", r.checksum}};
  // Absent when not measured, so a corrald older than the field still reads the report.
  if (r.throughput > 0) j["throughput"] = r.throughput;
  return dump(j);
}

Result<CheckpointReport> decode_checkpoint_report(std::string_view body) {
  CORRAL_ASSIGN_OR_RETURN(const json j, parse_json_object(body));
  const std::string root;
  CheckpointReport r;
  CORRAL_RETURN_IF_ERROR(read_int(Field{j, root, "step", true}, 0, INT64_MAX, r.step));
  CORRAL_RETURN_IF_ERROR(read_checkpoint_path(Field{j, root, "path", true}, r.path));
  CORRAL_RETURN_IF_ERROR(read_int(Field{j, root, "bytes"}, 0, INT64_MAX, r.bytes));
  CORRAL_RETURN_IF_ERROR(read_string(Field{j, root, "checksum"}, kMaxChecksumBytes, r.checksum));
  CORRAL_RETURN_IF_ERROR(
      read_double(Field{j, root, "throughput"}, 0, kMaxThroughput, r.throughput));
  return r;
}

std::string encode_worker_checkpoint(const WorkerCheckpoint& c) {
  json j = {{"epoch", c.epoch},         {"job", c.key.job},
            {"attempt", c.key.attempt}, {"rank", c.key.rank},
            {"step", c.report.step},    {"path", c.report.path},
            {"bytes", c.report.bytes},  {"checksum", c.report.checksum}};
  if (c.report.throughput > 0) j["throughput"] = c.report.throughput;  // as above
  return dump(j);
}

Result<WorkerCheckpoint> decode_worker_checkpoint(std::string_view body) {
  CORRAL_ASSIGN_OR_RETURN(const json j, parse_json_object(body));
  const std::string root;
  CORRAL_RETURN_IF_ERROR(only_fields(
      j, root,
      {"epoch", "job", "attempt", "rank", "step", "path", "bytes", "checksum", "throughput"}));
  WorkerCheckpoint c;
  CORRAL_RETURN_IF_ERROR(read_int(Field{j, root, "epoch", true}, 1, INT64_MAX, c.epoch));
  CORRAL_RETURN_IF_ERROR(read_int(Field{j, root, "job", true}, 1, INT64_MAX, c.key.job));
  CORRAL_RETURN_IF_ERROR(read_int(Field{j, root, "attempt", true}, 1, INT32_MAX, c.key.attempt));
  CORRAL_RETURN_IF_ERROR(read_int(Field{j, root, "rank"}, 0, kMaxRank, c.key.rank));
  CORRAL_RETURN_IF_ERROR(read_int(Field{j, root, "step", true}, 0, INT64_MAX, c.report.step));
  CORRAL_RETURN_IF_ERROR(read_checkpoint_path(Field{j, root, "path", true}, c.report.path));
  CORRAL_RETURN_IF_ERROR(read_int(Field{j, root, "bytes", true}, 0, INT64_MAX, c.report.bytes));
  CORRAL_RETURN_IF_ERROR(
      read_string(Field{j, root, "checksum", true}, kMaxChecksumBytes, c.report.checksum));
  CORRAL_RETURN_IF_ERROR(
      read_double(Field{j, root, "throughput"}, 0, kMaxThroughput, c.report.throughput));
  return c;
}

// ---- §5 -------------------------------------------------------------------------------

bool is_metric_name(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/' ||
           c == '-';
  });
}

namespace {

Status read_metric_name(const Field& f, std::string& out) {
  CORRAL_RETURN_IF_ERROR(read_string(f, 128, out));
  if (!is_metric_name(out)) {
    return invalid_argument(f.name(), "must be 1 to 128 of letters, digits, '_', '.', '/', '-'");
  }
  return Status();
}

Status read_metric_point(const json& p, const std::string& path, MetricPoint& out) {
  CORRAL_RETURN_IF_ERROR(only_fields(p, path, {"name", "step", "value"}));
  CORRAL_RETURN_IF_ERROR(read_metric_name(Field{p, path, "name", true}, out.name));
  CORRAL_RETURN_IF_ERROR(read_int(Field{p, path, "step", true}, 0, INT64_MAX, out.step));
  constexpr double kMax = std::numeric_limits<double>::max();  // finite: NaN and inf fail
  return read_double(Field{p, path, "value", true}, -kMax, kMax, out.value);
}

Status read_artifact(const json& a, const std::string& path, ArtifactReport& out) {
  CORRAL_RETURN_IF_ERROR(only_fields(a, path, {"name", "uri", "digest", "bytes"}));
  CORRAL_RETURN_IF_ERROR(read_metric_name(Field{a, path, "name", true}, out.name));
  const Field uri{a, path, "uri", true};
  CORRAL_RETURN_IF_ERROR(read_string(uri, kMaxPathBytes, out.uri));
  static const std::regex kUri(R"(^(/|[a-z][a-z0-9+.-]*://).+)");
  if (!std::regex_match(out.uri, kUri)) {
    return invalid_argument(uri.name(), "must be an absolute path or SCHEME://...");
  }
  const Field digest{a, path, "digest", true};
  CORRAL_RETURN_IF_ERROR(read_string(digest, kMaxChecksumBytes, out.digest));
  static const std::regex kDigest("^sha256:[0-9a-f]{64}$");
  if (!std::regex_match(out.digest, kDigest)) {
    return invalid_argument(digest.name(), "must be sha256: and 64 lowercase hex digits");
  }
  return read_int(Field{a, path, "bytes", true}, 0, INT64_MAX, out.bytes);
}

// The batch's two lists, each bounded before a single element is read.
Status read_run_report(const json& j, RunReport& out) {
  const std::string root;
  for (const auto& [key, max] : {std::pair<const char*, std::size_t>{"metrics", kMaxMetricBatch},
                                 {"artifacts", kMaxArtifactBatch}}) {
    if (const json* a = find(j, key); a != nullptr && a->is_array() && a->size() > max) {
      return invalid_argument(key, "must have at most " + std::to_string(max) + " entries");
    }
  }
  CORRAL_RETURN_IF_ERROR(read_objects(Field{j, root, "metrics"}, out.metrics, read_metric_point));
  CORRAL_RETURN_IF_ERROR(read_objects(Field{j, root, "artifacts"}, out.artifacts, read_artifact));
  if (out.metrics.empty() && out.artifacts.empty()) {
    return invalid_argument("metrics", "a report needs at least one metric point or artifact");
  }
  return Status();
}

json run_report_json(const RunReport& r) {
  json metrics = json::array(), artifacts = json::array();
  for (const MetricPoint& p : r.metrics) {
    metrics.push_back({{"name", p.name}, {"step", p.step}, {"value", p.value}});
  }
  for (const ArtifactReport& a : r.artifacts) {
    artifacts.push_back(
        {{"name", a.name}, {"uri", a.uri}, {"digest", a.digest}, {"bytes", a.bytes}});
  }
  return {{"metrics", std::move(metrics)}, {"artifacts", std::move(artifacts)}};
}

}  // namespace

std::string encode_run_report(const RunReport& report) { return dump(run_report_json(report)); }

Result<RunReport> decode_run_report(std::string_view body) {
  CORRAL_ASSIGN_OR_RETURN(const json j, parse_json_object(body));
  CORRAL_RETURN_IF_ERROR(only_fields(j, "", {"metrics", "artifacts"}));
  RunReport r;
  CORRAL_RETURN_IF_ERROR(read_run_report(j, r));
  return r;
}

std::string encode_worker_run_report(const WorkerRunReport& r) {
  json j = run_report_json(r.report);
  put_worker(j, r.epoch, r.key);
  return dump(j);
}

Result<WorkerRunReport> decode_worker_run_report(std::string_view body) {
  CORRAL_ASSIGN_OR_RETURN(const json j, parse_json_object(body));
  const std::string root;
  CORRAL_RETURN_IF_ERROR(
      only_fields(j, root, {"epoch", "job", "attempt", "rank", "metrics", "artifacts"}));
  WorkerRunReport r;
  CORRAL_RETURN_IF_ERROR(read_int(Field{j, root, "epoch", true}, 1, INT64_MAX, r.epoch));
  CORRAL_RETURN_IF_ERROR(read_int(Field{j, root, "job", true}, 1, INT64_MAX, r.key.job));
  CORRAL_RETURN_IF_ERROR(read_int(Field{j, root, "attempt", true}, 1, INT32_MAX, r.key.attempt));
  CORRAL_RETURN_IF_ERROR(read_int(Field{j, root, "rank"}, 0, kMaxRank, r.key.rank));
  CORRAL_RETURN_IF_ERROR(read_run_report(j, r.report));
  return r;
}

// ---- §5 feature lookups -----------------------------------------------------------------

namespace {

// Splits `j` into its `set` and the rest, which corrald's lookup parser reads.
Status read_feature_lookup(json j, FeatureLookupRequest& out) {
  const std::string root;
  CORRAL_RETURN_IF_ERROR(read_string(Field{j, root, "set", true}, kMaxFeatureSetRefBytes, out.set));
  if (out.set.find('@') == std::string::npos) {
    return invalid_argument("set", "must be NAME@VERSION");
  }
  j.erase("set");
  out.lookup = dump(j);
  return Status();
}

}  // namespace

Result<FeatureLookupRequest> decode_feature_lookup_request(std::string_view body) {
  CORRAL_ASSIGN_OR_RETURN(json j, parse_json_object(body));
  FeatureLookupRequest r;
  CORRAL_RETURN_IF_ERROR(read_feature_lookup(std::move(j), r));
  return r;
}

std::string encode_worker_feature_lookup(const WorkerFeatureLookup& l) {
  json j = json::parse(l.request.lookup, nullptr, false);
  if (!j.is_object()) j = json::object();
  j["set"] = l.request.set;
  put_worker(j, l.epoch, l.key);
  return dump(j);
}

Result<WorkerFeatureLookup> decode_worker_feature_lookup(std::string_view body) {
  CORRAL_ASSIGN_OR_RETURN(json j, parse_json_object(body));
  const std::string root;
  WorkerFeatureLookup l;
  CORRAL_RETURN_IF_ERROR(read_int(Field{j, root, "epoch", true}, 1, INT64_MAX, l.epoch));
  CORRAL_RETURN_IF_ERROR(read_int(Field{j, root, "job", true}, 1, INT64_MAX, l.key.job));
  CORRAL_RETURN_IF_ERROR(read_int(Field{j, root, "attempt", true}, 1, INT32_MAX, l.key.attempt));
  CORRAL_RETURN_IF_ERROR(read_int(Field{j, root, "rank"}, 0, kMaxRank, l.key.rank));
  for (const char* key : {"epoch", "job", "attempt", "rank"}) j.erase(key);
  CORRAL_RETURN_IF_ERROR(read_feature_lookup(std::move(j), l.request));
  return l;
}

}  // namespace corral::core
