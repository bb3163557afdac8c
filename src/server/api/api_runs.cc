// /v1/runs (docs/runs.md): a job is its run, and a run is what the job trained on and
// what it produced: its manifest (dataset versions with their digests, code, image, the
// hash of its normalized spec), each attempt as placed (GPUs, topology level, the
// checkpoint it restored from), its metrics and its artifacts (reported ones and its
// checkpoints). A run is visible exactly where its job is: another tenant's run answers
// 404, the same as one that does not exist, so neither its metric names nor its URIs leak.
#include <httplib.h>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dataset.h"
#include "core/job_phase.h"
#include "core/job_spec_parse.h"
#include "server/api/api_routes.h"
#include "server/api/api_views.h"
#include "server/base/crypto.h"
#include "server/base/http_status.h"
#include "server/base/model_json.h"
#include "server/http/list_page.h"

namespace corral::server {
namespace {

using core::Result;
using core::Status;
using nlohmann::json;

// The hash of the normalized spec as stored: equal for a run and its reproductions.
std::string config_hash(const store::JobRow& job) { return "sha256:" + sha256_hex(job.spec_json); }

json lineage_json(const store::JobRow& job) {
  const json spec = json::parse(job.spec_json, nullptr, false);
  const json lineage = spec.is_object() ? spec.value("lineage", json::object()) : json::object();
  return {{"datasets", lineage.value("datasets", json::array())},
          {"code", lineage.value("code", json::object())},
          {"image", lineage.value("image", "")}};
}

json summary_json(const store::JobRow& job) {
  const json lineage = lineage_json(job);
  return {{"id", job.id.value},
          {"job", job.id.value},
          {"name", job.name},
          {"tenant", job.tenant.value},
          {"status", std::string(core::to_string(job.phase))},
          {"attempts", job.attempt},
          {"datasets", lineage["datasets"]},
          {"code", lineage["code"]},
          {"image", lineage["image"]},
          {"configHash", config_hash(job)},
          {"createdAtMs", core::to_ms(job.created_at)},
          {"updatedAtMs", core::to_ms(job.updated_at)}};
}

json attempt_json(const store::RunAttemptRow& a) {
  std::vector<std::string> nodes;
  for (const std::string& g : a.gpus) {
    const std::string node = g.substr(0, g.rfind(':'));
    if (nodes.empty() || nodes.back() != node) nodes.push_back(node);
  }
  return {{"attempt", a.attempt},
          {"gpuType", a.gpu_type.value},
          {"gpus", a.gpus},
          {"nodes", nodes},
          {"packed", a.packed},
          {"restoredFrom", a.restored_from.empty()
                               ? json(nullptr)
                               : json{{"uri", a.restored_from}, {"step", a.restored_step}}},
          {"startedAtMs", core::to_ms(a.started_at)}};
}

// The feature set versions the run's workers looked up (docs/features.md, "From a
// training job"): what it read is part of what it trained on.
Result<json> features_json(store::FeatureRepo& features, const store::JobRow& job) {
  json out = json::array();
  CORRAL_ASSIGN_OR_RETURN(const auto used, features.list_run_features(job.id));
  for (const auto& f : used) {
    json marks = json::parse(f.watermarks, nullptr, false);
    if (!marks.is_object()) marks = json::object();
    out.push_back({{"set", f.name + "@" + f.version},
                   {"lookups", f.lookups},
                   {"rows", f.rows},
                   {"latestAtMs", f.latest_at_ms >= 0 ? json(f.latest_at_ms) : json(nullptr)},
                   {"firstLookupAtMs", core::to_ms(f.first_lookup_at)},
                   {"lastLookupAtMs", core::to_ms(f.last_lookup_at)},
                   {"watermarks", std::move(marks)}});
  }
  return out;
}

// Its datasets with what was admitted (digest, schema, size): versions never change, so
// these are what the run read; and the feature set versions it looked up.
Result<json> manifest_json(store::Tx& tx, const store::JobRow& job) {
  const json lineage = lineage_json(job);
  json datasets = json::array();
  for (const json& ref_text : lineage["datasets"]) {
    if (!ref_text.is_string()) continue;
    const auto ref = core::parse_dataset_ref(ref_text.get<std::string>(), "");
    if (!ref.ok()) continue;
    CORRAL_ASSIGN_OR_RETURN(const auto v, tx.datasets().get_dataset_version(*ref));
    json d = {{"ref", ref->text()}};
    if (v) {
      d["uri"] = v->uri;
      d["digest"] = v->digest;
      d["schemaHash"] = v->schema_hash;
      d["sizeBytes"] = v->size_bytes;
      d["status"] = std::string(core::to_string(v->status));
    }
    datasets.push_back(std::move(d));
  }
  CORRAL_ASSIGN_OR_RETURN(json features, features_json(tx.features(), job));
  return json{{"datasets", std::move(datasets)},
              {"code", lineage["code"]},
              {"image", lineage["image"]},
              {"configHash", config_hash(job)},
              {"features", std::move(features)}};
}

Result<json> artifacts_json(store::Tx& tx, const store::JobRow& job) {
  json out = json::array();
  CORRAL_ASSIGN_OR_RETURN(const auto artifacts, tx.runs().list_artifacts(job.id));
  for (const auto& a : artifacts) {
    out.push_back({{"kind", "artifact"},
                   {"name", a.artifact.name},
                   {"uri", a.artifact.uri},
                   {"digest", a.artifact.digest},
                   {"bytes", a.artifact.bytes},
                   {"attempt", a.attempt},
                   {"atMs", core::to_ms(a.at)}});
  }
  // Its checkpoints are artifacts too: what a later attempt, or a fine-tune, starts from.
  CORRAL_ASSIGN_OR_RETURN(const auto checkpoints, tx.checkpoints().list_checkpoints(job.id));
  for (const auto& c : checkpoints) {
    out.push_back({{"kind", "checkpoint"},
                   {"name", "checkpoint"},
                   {"uri", c.uri},
                   {"digest", c.checksum},
                   {"bytes", c.bytes},
                   {"attempt", c.attempt},
                   {"step", c.step},
                   {"atMs", core::to_ms(c.time)}});
  }
  return out;
}

Result<store::JobRow> visible_run(const Call& c, store::Tx& tx) {
  auto job = visible_job(tx.jobs(), c.who, c.path_param(1));
  if (!job.ok() && job.status().code() == core::StatusCode::kNotFound) {
    return core::not_found("run " + c.path_param(1).substr(0, 32) + " not found");
  }
  return job;
}

Result<Reply> get_run(ApiContext&, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const store::JobRow job, visible_run(c, tx));
  CORRAL_ASSIGN_OR_RETURN(json out, run_json(tx, job));
  return json_reply(out);
}

// GET /v1/runs?tenant=&status=&dataset=ID@VERSION, by id.
Result<Reply> list_runs(ApiContext&, const Call& c, store::Tx& tx) {
  const Principal& p = c.who;
  store::JobFilter filter;
  if (const auto t = c.query("tenant")) {
    if (!valid_name(*t)) return core::invalid_argument("tenant", "must be a tenant name");
    if (!can_see_tenant(p, *t)) return permission_denied("may not list tenant " + *t);
    filter.tenant = core::TenantId(*t);
  } else if (p.role == Role::kMember) {
    filter.tenant = core::TenantId(p.tenant);
  }
  if (const auto s = c.query("status")) {
    const auto phase = core::job_phase_from_string(*s);
    if (!phase)
      return core::invalid_argument("status", "unknown status \"" + s->substr(0, 32) + "\"");
    filter.phases.push_back(*phase);
  }
  std::optional<core::DatasetRef> dataset;
  if (const auto d = c.query("dataset")) {
    CORRAL_ASSIGN_OR_RETURN(dataset, core::parse_dataset_ref(*d, "dataset"));
  }
  CORRAL_ASSIGN_OR_RETURN(const PageRequest page, c.page());
  CORRAL_ASSIGN_OR_RETURN(filter.after_id, id_cursor(page));
  filter.limit = page.limit + 1;
  std::vector<json> items;
  std::vector<std::int64_t> ids;
  // Filters the store does not apply are applied here, reading on until the page is full.
  for (;;) {
    std::vector<store::JobRow> jobs;
    std::size_t read = 0;
    if (dataset) {
      CORRAL_ASSIGN_OR_RETURN(
          const auto using_it,
          tx.datasets().list_jobs_using(*dataset, core::JobId(filter.after_id), filter.limit));
      read = using_it.size();
      CORRAL_ASSIGN_OR_RETURN(jobs, tx.jobs().get_jobs(using_it));
      if (!using_it.empty()) filter.after_id = using_it.back().value;
    } else {
      CORRAL_ASSIGN_OR_RETURN(jobs, tx.jobs().list_jobs(filter));
      read = jobs.size();
      if (!jobs.empty()) filter.after_id = jobs.back().id.value;
    }
    for (const auto& j : jobs) {
      if (!can_see_tenant(p, j.tenant.value)) continue;
      if (filter.tenant && j.tenant != *filter.tenant) continue;
      if (!filter.phases.empty() && j.phase != filter.phases.front()) continue;
      items.push_back(summary_json(j));
      ids.push_back(j.id.value);
      if (items.size() > static_cast<std::size_t>(page.limit)) break;
    }
    if (items.size() > static_cast<std::size_t>(page.limit) ||
        read < static_cast<std::size_t>(filter.limit)) {
      break;
    }
  }
  return json_reply(page_answer("runs", std::move(items), page,
                                [&](std::size_t i) { return std::to_string(ids[i]); }));
}

// GET /v1/runs/{id}/metrics?name=&cursor=&limit=: points by name, then step. The cursor
// is the last point's NAME@STEP (a name holds no '@').
Result<Reply> run_metrics(ApiContext&, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const store::JobRow job, visible_run(c, tx));
  const std::string name = c.query("name").value_or("");
  if (!name.empty() && !core::is_metric_name(name)) {
    return core::invalid_argument("name", "must be a metric name");
  }
  CORRAL_ASSIGN_OR_RETURN(const PageRequest page, c.page());
  std::string after_name;
  std::int64_t after_step = -1;
  if (page.cursor) {
    const auto at = page.cursor->rfind('@');
    const auto step =
        at == std::string::npos ? std::nullopt : parse_decimal(page.cursor->substr(at + 1));
    if (!step || !core::is_metric_name(page.cursor->substr(0, at))) {
      return core::invalid_argument("cursor", "is not a cursor of this list");
    }
    after_name = page.cursor->substr(0, at);
    after_step = *step;
  }
  CORRAL_ASSIGN_OR_RETURN(const auto rows, tx.runs().list_metrics(job.id, name, after_name,
                                                                  after_step, page.limit + 1));
  std::vector<json> items;
  for (const auto& m : rows) {
    items.push_back({{"name", m.name},
                     {"step", m.step},
                     {"value", m.value},
                     {"attempt", m.attempt},
                     {"atMs", core::to_ms(m.at)}});
  }
  return json_reply(page_answer("points", std::move(items), page, [&](std::size_t i) {
    return rows[i].name + "@" + std::to_string(rows[i].step);
  }));
}

Result<Reply> run_artifacts(ApiContext&, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const store::JobRow job, visible_run(c, tx));
  CORRAL_ASSIGN_OR_RETURN(json artifacts, artifacts_json(tx, job));
  return json_reply({{"artifacts", std::move(artifacts)}, {"nextCursor", nullptr}});
}

// POST /v1/runs/{id}/reproduce: a new job with the run's normalized spec (so the same
// dataset versions, code commit and image, and the same config hash) and its sealed
// secrets, through everything a submission goes through: the gate holds it if a version
// has been quarantined since. The idempotency key makes a retry answer the same job.
Result<Reply> reproduce(ApiContext& api, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const store::JobRow job, visible_run(c, tx));
  const core::ParseOutcome parsed = core::parse_job_spec(job.spec_json, core::SpecFormat::kJson);
  if (!parsed.ok()) {
    return Status(core::StatusCode::kInternal,
                  "run " + std::to_string(job.id.value) + "'s stored spec no longer parses");
  }
  // Its spec would submit the whole array again, and one task alone has no index.
  if (parsed.spec->array) {
    return core::failed_precondition(
        "run " + std::to_string(job.id.value) + " is task " + std::to_string(job.array_index) +
        " of array " + std::to_string(job.array_job.value) +
        "; a task of an array cannot be reproduced alone (submit its spec again)");
  }
  CORRAL_ASSIGN_OR_RETURN(const std::string secrets, tx.jobs().get_job_secrets(job.id));
  CORRAL_ASSIGN_OR_RETURN(store::JobRow row,
                          admit_job(api, c, tx, *parsed.spec, secrets, "run.reproduce"));
  CORRAL_RETURN_IF_ERROR(tx.runs().set_run_origin(row.id, job.id));
  CORRAL_RETURN_IF_ERROR(tx.records().append_job_event(
      {.job = row.id,
       .time = row.created_at,
       .kind = "reproduces",
       .message = "run " + std::to_string(job.id.value) + " (" + config_hash(job) + ")"}));
  ++api.metrics.jobs_submitted;
  json out = summary_json(row);
  out["reproduces"] = job.id.value;
  Reply reply = json_reply(out, 201);
  reply.wake_scheduler = true;
  reply.submitted_job = row.id.value;
  return reply;
}

}  // namespace

Result<json> run_json(store::Tx& tx, const store::JobRow& job) {
  json out = summary_json(job);
  CORRAL_ASSIGN_OR_RETURN(out["manifest"], manifest_json(tx, job));
  CORRAL_ASSIGN_OR_RETURN(const auto attempts, tx.runs().list_run_attempts(job.id));
  out["attemptHistory"] = json::array();
  for (const auto& a : attempts) out["attemptHistory"].push_back(attempt_json(a));
  CORRAL_ASSIGN_OR_RETURN(const auto metrics, tx.runs().summarize_metrics(job.id));
  out["metrics"] = json::array();
  for (const auto& m : metrics) {
    out["metrics"].push_back({{"name", m.name},
                              {"points", m.points},
                              {"lastStep", m.last_step},
                              {"lastValue", m.last_value}});
  }
  CORRAL_ASSIGN_OR_RETURN(out["artifacts"], artifacts_json(tx, job));
  CORRAL_ASSIGN_OR_RETURN(const auto origin, tx.runs().run_origin(job.id));
  out["reproduces"] = origin ? json(origin->value) : json(nullptr);
  return out;
}

std::vector<Route> run_routes(ApiContext& api) {
  const std::string run = R"(/v1/runs/([^/]+))";
  return {
      read_route("GET", "/v1/runs", kUsers, bind_api(api, list_runs)),
      read_route("GET", run, kUsers, bind_api(api, get_run)),
      read_route("GET", run + "/metrics", kUsers, bind_api(api, run_metrics)),
      read_route("GET", run + "/artifacts", kUsers, bind_api(api, run_artifacts)),
      write_route("POST", run + "/reproduce", kUsers, bind_api(api, reproduce)),
  };
}

}  // namespace corral::server
