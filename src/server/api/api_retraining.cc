// A model's retraining template and the jobs its drift submitted
// (docs/drift.md#retraining-on-drift): PUT, GET and DELETE /v1/models/{id}/retraining,
// and retrain_on_drift(), which a drifted report calls. A retraining job goes through
// the same admit_job() as a submission (rights, admission limits, the dataset gate);
// its tenant's retraining budget then holds it in the queue (retraining_budget.h) when
// it would pass the budget, and refuses outright a template larger than the budget.
#include <httplib.h>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/job_phase.h"
#include "core/job_spec_parse.h"
#include "core/json_object.h"
#include "core/units.h"
#include "server/api/api_routes.h"
#include "server/api/api_views.h"
#include "server/api/model_registry.h"
#include "server/base/http_status.h"
#include "server/controllers/job_secrets.h"
#include "server/controllers/retraining_budget.h"

namespace corral::server {
namespace {

using core::Result;
using core::Status;
using nlohmann::json;

constexpr std::int32_t kJobsShown = 20;

Result<TenantConfig> tenant_of(store::Tx& tx, const core::TenantId& tenant) {
  return load_tenant(tx.tenants(), tenant.value);
}

json budget_json(const registry::RetrainingBudget& b, const registry::RetrainingUse& use) {
  return {{"maxGpus", b.max_gpus ? json(*b.max_gpus) : json(nullptr)},
          {"gpuHours", b.gpu_hours ? json(*b.gpu_hours) : json(nullptr)},
          {"period", core::format_duration(b.period)},
          {"inUse",
           {{"gpus", use.gpus},
            {"gpuHours", use.gpu_hours},
            {"periodStartMs", core::to_ms(use.period_start)},
            {"periodEndMs", core::to_ms(use.period_end)}}}};
}

json retraining_job_json(const store::RetrainingJobRow& r) {
  return {{"job", r.job.value},      {"version", r.version},
          {"reportId", r.report_id}, {"submittedAtMs", core::to_ms(r.submitted_at)},
          {"phase", r.phase},        {"gpus", r.gpus}};
}

// The template as a job spec: parsed and validated as a submission is, for the model's
// tenant, without secrets (a template is stored in the clear and read back by members).
Result<core::JobSpec> read_template(const json& body, const core::TenantId& tenant,
                                    const registry::RetrainingBudget& budget) {
  for (const auto& [k, v] : body.items()) {
    if (k != "job") return core::invalid_argument(k, "unknown field");
  }
  if (!body.contains("job") || !body["job"].is_object()) {
    return core::invalid_argument("job", "must be the retraining job's spec, an object");
  }
  core::ParseOutcome parsed = core::parse_job_spec(body["job"].dump(), core::SpecFormat::kJson);
  if (!parsed.ok()) {
    for (auto& e : parsed.errors) e.path = e.path.empty() ? "job" : "job." + e.path;
    return core::invalid_fields(parsed.errors);
  }
  const core::JobSpec& spec = *parsed.spec;
  if (spec.tenant != tenant) {
    return core::invalid_argument("job.tenant", "must be the model's tenant, " + tenant.value);
  }
  if (!spec.secret_env.empty()) {
    return core::invalid_argument("job.secretEnv", "a retraining template cannot carry secrets");
  }
  if (const std::string why = registry::exceeds_budget(tenant, budget, spec.resources.gpus);
      !why.empty()) {
    return core::invalid_argument("job.resources.gpus", why);
  }
  return *parsed.spec;
}

// PUT /v1/models/{id}/retraining {job}
Result<Reply> put_template(ApiContext& api, const Call& c, store::Tx& tx) {
  const std::string id = c.path_param(1);
  CORRAL_ASSIGN_OR_RETURN(const auto versions, visible_model(tx.models(), c.who, id));
  const core::TenantId tenant = versions.front().tenant;
  CORRAL_ASSIGN_OR_RETURN(const json body, core::parse_json_object(c.body()));
  CORRAL_ASSIGN_OR_RETURN(const TenantConfig cfg, tenant_of(tx, tenant));
  CORRAL_ASSIGN_OR_RETURN(const core::JobSpec spec, read_template(body, tenant, cfg.retraining));
  const std::string text = core::job_spec_to_json(spec);
  CORRAL_ASSIGN_OR_RETURN(const auto before, tx.models().get_retraining_template(id));
  CORRAL_RETURN_IF_ERROR(tx.models().put_retraining_template(
      {.model = id, .tenant = tenant, .spec = text, .by = c.who.id, .at = api.now()}));
  CORRAL_RETURN_IF_ERROR(api.pipeline.audit(tx, c, "model.retraining.set", "model/" + id,
                                            before ? before->spec : "", text));
  return json_reply({{"model", id},
                     {"job", json::parse(text)},
                     {"setBy", c.who.id},
                     {"setAtMs", core::to_ms(api.now())}});
}

// GET /v1/models/{id}/retraining: the template, the tenant's budget and its use, and the
// newest retraining jobs of the model.
Result<Reply> get_retraining(ApiContext& api, const Call& c, store::Tx& tx) {
  const std::string id = c.path_param(1);
  CORRAL_ASSIGN_OR_RETURN(const auto versions, visible_model(tx.models(), c.who, id));
  const core::TenantId tenant = versions.front().tenant;
  CORRAL_ASSIGN_OR_RETURN(const auto row, tx.models().get_retraining_template(id));
  CORRAL_ASSIGN_OR_RETURN(const TenantConfig cfg, tenant_of(tx, tenant));
  CORRAL_ASSIGN_OR_RETURN(const registry::RetrainingUse use,
                          retraining_use(tx.models(), tenant, cfg.retraining, api.now()));
  CORRAL_ASSIGN_OR_RETURN(const auto jobs, tx.models().list_retraining_jobs(id, kJobsShown));
  json out = {{"model", id},
              {"tenant", tenant.value},
              {"job", row ? json::parse(row->spec) : json(nullptr)},
              {"setBy", row ? json(row->by) : json(nullptr)},
              {"setAtMs", row ? json(core::to_ms(row->at)) : json(nullptr)},
              {"budget", budget_json(cfg.retraining, use)},
              {"jobs", json::array()}};
  for (const auto& j : jobs) out["jobs"].push_back(retraining_job_json(j));
  return json_reply(out);
}

// DELETE /v1/models/{id}/retraining: drift no longer submits jobs; those submitted stay.
Result<Reply> delete_template(ApiContext& api, const Call& c, store::Tx& tx) {
  const std::string id = c.path_param(1);
  CORRAL_RETURN_IF_ERROR(visible_model(tx.models(), c.who, id).status());
  CORRAL_ASSIGN_OR_RETURN(const auto before, tx.models().get_retraining_template(id));
  if (!before) return core::not_found("model " + id + " has no retraining template");
  CORRAL_RETURN_IF_ERROR(tx.models().delete_retraining_template(id).status());
  CORRAL_RETURN_IF_ERROR(
      api.pipeline.audit(tx, c, "model.retraining.delete", "model/" + id, before->spec, ""));
  return json_reply({{"model", id}, {"deleted", true}});
}

// An admission refusal the report records rather than fails on: the drift is evidence
// to keep whether or not a job could be submitted for it.
bool is_refusal(const Status& s) {
  using core::StatusCode;
  return s.code() == StatusCode::kInvalidArgument || s.code() == StatusCode::kResourceExhausted ||
         s.code() == StatusCode::kFailedPrecondition || s.code() == StatusCode::kPermissionDenied;
}

}  // namespace

Result<RetrainOutcome> retrain_on_drift(ApiContext& api, const Call& c, store::Tx& tx,
                                        const store::ModelVersionRow& v) {
  // Locked first, so a concurrent report of the same model sees this one's job as open.
  CORRAL_RETURN_IF_ERROR(tx.models().lock_retraining_template(v.name));
  CORRAL_ASSIGN_OR_RETURN(const auto row, tx.models().get_retraining_template(v.name));
  if (!row) return RetrainOutcome{.record = {{"outcome", "no template"}}};
  CORRAL_ASSIGN_OR_RETURN(const auto open, tx.models().list_open_retraining_jobs());
  for (const auto& j : open) {
    if (j.model == v.name) {
      return RetrainOutcome{
          .record = {{"outcome", "skipped"},
                     {"job", j.job.value},
                     {"reason", "retraining job " + std::to_string(j.job.value) + " of " + v.name +
                                    " is " + j.phase + "; one runs at a time"}}};
    }
  }
  core::ParseOutcome parsed = core::parse_job_spec(row->spec, core::SpecFormat::kJson);
  if (!parsed.ok()) return core::internal_error("stored retraining template does not parse");
  core::JobSpec spec = std::move(*parsed.spec);
  // What the job retrains, for people and tools listing jobs by label.
  spec.labels["retrain-model"] = v.name;
  spec.labels["retrain-version"] = v.version;
  if (!core::parse_job_spec(core::job_spec_to_json(spec), core::SpecFormat::kJson).ok()) {
    spec.labels.erase("retrain-version");  // a version name no label value can hold
  }
  CORRAL_ASSIGN_OR_RETURN(const TenantConfig cfg, tenant_of(tx, spec.tenant));
  std::string refused = registry::exceeds_budget(spec.tenant, cfg.retraining, spec.resources.gpus);
  std::optional<store::JobRow> job;
  if (refused.empty()) {
    auto admitted =
        admit_job(api, c, tx, spec, seal_job_secrets(api.pipeline.keys(), {}), "model.retrain");
    if (admitted.ok()) {
      job = std::move(*admitted);
    } else if (is_refusal(admitted.status())) {
      refused = admitted.status().to_string();
    } else {
      return admitted.status();
    }
  }
  if (!job) return RetrainOutcome{.record = {{"outcome", "refused"}, {"reason", refused}}};
  return RetrainOutcome{.record = {{"outcome", "submitted"}, {"job", job->id.value}}, .job = job};
}

Status record_retraining(store::Tx& tx, const RetrainOutcome& outcome,
                         const store::ModelVersionRow& v, std::int64_t report_id,
                         const std::string& why, core::Time now) {
  if (!outcome.job) return Status();
  const store::JobRow& job = *outcome.job;
  CORRAL_RETURN_IF_ERROR(tx.models().insert_retraining_job({.job = job.id,
                                                            .tenant = job.tenant,
                                                            .model = v.name,
                                                            .version = v.version,
                                                            .report_id = report_id,
                                                            .submitted_at = now}));
  return tx.records().append_job_event({.job = job.id,
                                        .time = now,
                                        .kind = "retraining",
                                        .message = "submitted because " + v.name + "@" + v.version +
                                                   " drifted (report " + std::to_string(report_id) +
                                                   "): " + why});
}

std::vector<Route> retraining_routes(ApiContext& api) {
  const std::string path = R"(/v1/models/([^/]+)/retraining)";
  return {
      write_route("PUT", path, kUsers, bind_api(api, put_template)),
      read_route("GET", path, kUsers, bind_api(api, get_retraining)),
      write_route("DELETE", path, kUsers, bind_api(api, delete_template)),
  };
}

}  // namespace corral::server
