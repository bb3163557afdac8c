// /v1/arrays: a job array seen and cancelled as one (docs/jobspec.md#array). An array is
// named by its first task's job id; each task is a job of its own under /v1/jobs.
// /v1/workflows: several job specs submitted as one document, their steps depending on
// one another by name (docs/jobspec.md#workflows).
#include <httplib.h>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "core/job_phase.h"
#include "core/json_object.h"
#include "core/workflow_parse.h"
#include "server/api/api_routes.h"
#include "server/api/api_views.h"
#include "server/base/http_status.h"
#include "server/billing/chargeback.h"
#include "server/controllers/job_secrets.h"

namespace corral::server {
namespace {

using core::Result;
using nlohmann::json;

Result<Reply> get_array(ApiContext& api, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const auto tasks, visible_array(tx.jobs(), c.who, c.req.matches[1]));
  const store::JobRow& first = tasks.front();
  const json spec = parse_or_null(first.spec_json);
  json items = json::array();
  std::map<std::string, std::int64_t> phases;
  std::int64_t gpu_ms = 0, amount = 0;
  for (const store::JobRow& t : tasks) {
    ++phases[std::string(core::to_string(t.phase))];
    // A task never placed has cost nothing; only the others are priced (job_cost_json
    // reads the ledger and accrues the open periods, per task).
    json cost = money_json({});
    if (t.attempt > 0) {
      CORRAL_ASSIGN_OR_RETURN(cost, job_cost_json(api, tx, t));
    }
    gpu_ms += cost.value("gpuMs", std::int64_t{0});
    amount += cost.value("amountMicros", std::int64_t{0});
    items.push_back({{"index", t.array_index},
                     {"job", t.id.value},
                     {"phase", std::string(core::to_string(t.phase))},
                     {"reason", t.reason},
                     {"attempt", t.attempt},
                     {"cost", std::move(cost)}});
  }
  json total = money_json({.gpu_ms = gpu_ms, .amount = amount});
  total["currency"] = api.billing.currency;
  return json_reply(
      {{"id", first.id.value},
       {"name", first.name},
       {"tenant", first.tenant.value},
       {"count", tasks.size()},
       {"maxRunning", spec.is_object()
                          ? spec.value(spec.contains("sweep") ? "sweep" : "array", json::object())
                                .value("maxRunning", 0)
                          : 0},
       {"phases", phases},
       {"cost", std::move(total)},
       {"tasks", std::move(items)}});
}

// Cancels every task that has not ended; the ended ones stay as they are.
Result<Reply> cancel_array(ApiContext& api, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const std::string reason, action_reason(c.req.body));
  CORRAL_ASSIGN_OR_RETURN(const auto tasks, visible_array(tx.jobs(), c.who, c.req.matches[1]));
  const std::string note =
      "cancelled by " + c.who.id + " with its array" + (reason.empty() ? "" : ": " + reason);
  Effects fx;
  std::int64_t cancelled = 0;
  for (const store::JobRow& t : tasks) {
    if (core::is_terminal(t.phase)) continue;
    CORRAL_RETURN_IF_ERROR(cancel_job(tx, api.lifecycle(fx), t, note).status());
    ++cancelled;
  }
  const store::JobRow& first = tasks.front();
  CORRAL_RETURN_IF_ERROR(api.pipeline.audit(
      tx, c, "array.cancel", "job/" + std::to_string(first.id.value), audit_summary(first),
      json{{"cancelled", cancelled}, {"tasks", tasks.size()}, {"reason", reason}}.dump()));
  api.metrics.jobs_cancelled += cancelled;
  Reply reply =
      json_reply({{"id", first.id.value}, {"count", tasks.size()}, {"cancelled", cancelled}});
  reply.wake_scheduler = true;
  reply.effects = fx;
  return reply;
}

// Every step admitted in one transaction, each after the steps it names, so that a name
// resolves to the step of this document (the tenant's latest job of the name): all of
// them or none.
Result<Reply> submit_workflow(ApiContext& api, const Call& c, store::Tx& tx) {
  const core::WorkflowOutcome parsed = core::parse_workflow(
      c.req.body, yaml_body(c.req) ? core::SpecFormat::kYaml : core::SpecFormat::kJson);
  if (!parsed.ok()) return core::invalid_fields(parsed.errors);
  json steps = json::array();
  std::map<std::string, store::JobRow> admitted;  // by step name
  std::int64_t tasks = 0;
  for (std::size_t i = 0; i < parsed.steps.size(); ++i) {
    core::JobSpec spec = parsed.steps[i];
    // A name that is a step's is that step, the row just inserted: never another job
    // of the name that a concurrent submission made the tenant's latest.
    for (std::size_t d = 0; d < spec.depends_on.size(); ++d) {
      core::Dependency& dep = spec.depends_on[d];
      const auto step = dep.id ? admitted.end() : admitted.find(dep.name);
      if (step == admitted.end()) continue;
      if (step->second.tenant != spec.tenant) {
        return core::invalid_argument(
            core::child_path(core::element_path(core::element_path("steps", i) + ".dependsOn", d),
                             "job"),
            "step " + dep.name + " is tenant " + step->second.tenant.value +
                "'s; a step depends only on steps of its own tenant");
      }
      dep.id = step->second.array_job.value > 0 ? step->second.array_job : step->second.id;
      dep.name.clear();
    }
    tasks += spec.array ? spec.array->count : 1;
    if (tasks > core::kMaxWorkflowTasks) {
      return core::invalid_argument("steps", "the steps' jobs and tasks number more than the " +
                                                 std::to_string(core::kMaxWorkflowTasks) +
                                                 " one workflow may have");
    }
    CORRAL_ASSIGN_OR_RETURN(
        const store::JobRow row,
        admit_job(api, c, tx, spec, seal_job_secrets(api.pipeline.keys(), spec.secret_env),
                  "workflow.submit", /*rate_token=*/i == 0));
    api.metrics.jobs_submitted += spec.array ? spec.array->count : 1;
    steps.push_back({{"name", spec.name}, {"id", row.id.value}});
    admitted.emplace(spec.name, row);
  }
  Reply reply = json_reply({{"steps", std::move(steps)}}, 201);
  reply.wake_scheduler = true;
  return reply;
}

}  // namespace

Result<std::vector<store::JobRow>> visible_array(store::JobRepo& jobs, const Principal& p,
                                                 const std::string& id_text) {
  CORRAL_ASSIGN_OR_RETURN(const store::JobRow first, visible_job(jobs, p, id_text));
  if (first.array_job != first.id) {
    return core::not_found("job " + id_text + " is not an array (an array is named by its first " +
                           "task's id" +
                           (first.array_job.value > 0
                                ? "; this task's array is " + std::to_string(first.array_job.value)
                                : "") +
                           ")");
  }
  return jobs.list_array_tasks(first.id);
}

std::vector<Route> workflow_routes(ApiContext& api) {
  Route workflows = write_route("POST", "/v1/workflows", kUsers, bind_api(api, submit_workflow));
  workflows.takes_yaml = true;
  return {
      read_route("GET", R"(/v1/arrays/([^/]+))", kUsers, bind_api(api, get_array)),
      write_route("POST", R"(/v1/arrays/([^/]+)/cancel)", kUsers, bind_api(api, cancel_array)),
      std::move(workflows),
  };
}

}  // namespace corral::server
