// The user API's route tables, one per kind of state (api.h wires them): each file holds
// its handlers, business actions stay in the controllers (lifecycle.h, node_admin.h).
//
// Thread safety: handlers run on httplib's worker threads; everything they reach through
// ApiContext is safe for that.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "core/job_spec.h"
#include "server/base/metrics.h"
#include "server/base/spec_cache.h"
#include "server/billing/billing_config.h"
#include "server/controllers/assignment_board.h"
#include "server/controllers/lifecycle.h"
#include "server/cycle/scheduler.h"
#include "server/http/admission.h"
#include "server/http/request_pipeline.h"
#include "server/reports/usage_history.h"
#include "store/store.h"

namespace corral::server {

struct ApiContext {
  RequestPipeline& pipeline;
  Scheduler& loop;
  Metrics& metrics;
  AssignmentBoard& board;
  SpecCache& specs;
  const AgentSettings agent_settings;
  AdmissionControl& admission;
  const BillingSettings billing;
  const DashboardSettings dashboard;

  core::Time now() const { return pipeline.clock().now(); }
  LifecycleContext lifecycle(Effects& fx) const {
    return LifecycleContext{board, agent_settings, now(), fx, specs};
  }
};

// A route file's handler, given the context it runs in.
using ApiHandler = core::Result<Reply> (*)(ApiContext&, const Call&, store::Tx&);
inline Route::InTx bind_api(ApiContext& api, ApiHandler fn) {
  return [&api, fn](const Call& c, store::Tx& tx) { return fn(api, c, tx); };
}

// /v1/jobs (submit, get, list, events, cancel) and /v1/queue.
std::vector<Route> job_routes(ApiContext& api);
// /v1/arrays (an array's tasks and cost; cancelling them all) and /v1/workflows
// (several job specs that depend on one another, submitted as one document).
std::vector<Route> workflow_routes(ApiContext& api);
std::vector<Route> sweep_routes(ApiContext& api);
// /v1/nodes: list, get, register, cordon/drain/undrain.
std::vector<Route> node_routes(ApiContext& api);
// /v1/tenants, /v1/allocations.
std::vector<Route> tenant_routes(ApiContext& api);
// /v1/reservations: list, create, get, delete (api_reservations.cc).
std::vector<Route> reservation_routes(ApiContext& api);
// /v1/audit, /v1/shards, /v1/scheduler/captures, /healthz, /metrics.
std::vector<Route> admin_routes(ApiContext& api);
// /v1/tokens: mint, list, get, revoke (api_tokens.cc).
std::vector<Route> token_routes(ApiContext& api);
// /v1/datasets: dataset versions, their status and the jobs that use them (api_datasets.cc).
std::vector<Route> dataset_routes(ApiContext& api);
// /v1/chargeback (api_billing.cc).
std::vector<Route> billing_routes(ApiContext& api);
// The dashboard's page and files (/, /ui/*) and /v1/fleet, /v1/shares, /v1/history
// (api_dashboard.cc).
std::vector<Route> dashboard_routes(ApiContext& api);

// /v1/runs: runs with their manifests, metrics and artifacts; reproductions (api_runs.cc).
std::vector<Route> run_routes(ApiContext& api);
// /v1/models: versions from runs' artifacts, approvals, gated aliases, their history and
// rollback (api_models.cc).
std::vector<Route> model_routes(ApiContext& api);
// /v1/features: feature set versions, their values and point-in-time lookups
// (api_features.cc).
std::vector<Route> feature_routes(ApiContext& api);
// /v1/models/{id}/versions/{v}/drift: reference samples and drift reports (api_drift.cc).
std::vector<Route> drift_routes(ApiContext& api);

// /v1/models/{id}/retraining: a model's retraining template, its tenant's retraining
// budget and the jobs its drift submitted (api_retraining.cc).
std::vector<Route> retraining_routes(ApiContext& api);

// What a drifted report did about retraining: `record` ({outcome: "submitted", job} |
// {outcome: "skipped" | "refused", reason} | {outcome: "no template"}) goes into the
// report; `job` is the job submitted, if one was.
struct RetrainOutcome {
  nlohmann::json record;
  std::optional<store::JobRow> job;
};

// Submits `v`'s model's retraining template, if it has one and no retraining job of the
// model is still open (api_retraining.cc). A template over its tenant's retraining budget
// and an admission refusal are recorded as "refused", not returned as errors.
core::Result<RetrainOutcome> retrain_on_drift(ApiContext& api, const Call& c, store::Tx& tx,
                                              const store::ModelVersionRow& v);
// Once the report is stored as `report_id`: the job's retraining row, which the budget
// counts, and its event saying `why`.
core::Status record_retraining(store::Tx& tx, const RetrainOutcome& outcome,
                               const store::ModelVersionRow& v, std::int64_t report_id,
                               const std::string& why, core::Time now);

// What every new job goes through once its spec is read (a submission, a reproduction):
// the caller's right to the spec's tenant, routing, the tenant's admission limits and the
// dataset gate; then its row, events, dataset lineage and `audit_action` entry
// (api_jobs.cc). `sealed_secrets`: its secretEnv as job_secrets.h seals it. A workflow's
// steps after the first do not take from the tenant's submit rate (`rate_token` false):
// one document is one submission.
// The most spec bytes one submission stores (an array's tasks each store the spec).
inline constexpr std::int64_t kMaxSubmissionBytes = 64LL << 20;

core::Result<store::JobRow> admit_job(ApiContext& api, const Call& c, store::Tx& tx,
                                      const core::JobSpec& spec, const std::string& sealed_secrets,
                                      std::string_view audit_action, bool rate_token = true);

// A job's GPU-hours and cost so far: its ledger entries, and the periods not accrued yet
// accrued for it alone up to now (api_billing.cc).
core::Result<nlohmann::json> job_cost_json(ApiContext& api, store::Tx& tx,
                                           const store::JobRow& job);

}  // namespace corral::server
