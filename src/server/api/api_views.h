// The user API's JSON views of stored rows, and who may see which: shared by the route
// files (api_jobs.cc, api_nodes.cc, api_tenants.cc, api_admin.cc).
//
// Thread safety: free functions without state.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "server/base/model_json.h"
#include "server/cycle/sched_loop.h"
#include "server/http/token_auth.h"
#include "store/store.h"

namespace corral::server {

// `text` parsed, or null when it is not JSON (a stored blob this server did not write).
nlohmann::json parse_or_null(const std::string& text);

// A job as the API shows it. A pending job's position comes from `positions`, the queue
// order of the scheduler's last cycle (one consistent order; sched_loop.h), when this
// corrald schedules; else from the stored row.
// `cycle_failure`: Scheduler::degraded(), which a pending job's reason then leads with.
nlohmann::json job_json(const store::JobRow& j, const SchedLoop::QueuePositions* positions,
                        const std::string& cycle_failure);
// The reason a pending job waits as this replica sees it: the stored one (or "waiting for
// the scheduler" before its first cycle), led by the failure of the scheduling cycles
// while they fail, since no stored reason moves then.
std::string pending_reason(const store::JobRow& j, const std::string& cycle_failure);

// A pending job's planned start as the scheduler's last promise for it left it:
// {atMs, latestAtMs}, or null (no promise, or not pending).
nlohmann::json planned_start_json(const store::JobRow& j);

// Allocation rows of one attempt, as {job, attempt, gpuType, epoch, gpus: [{node, index}]}.
// REQUIRES: !rows.empty().
nlohmann::json allocation_json(const std::vector<store::AllocationRow>& rows);

// The job's state as audit entries record it before and after a change.
std::string audit_summary(const store::JobRow& j);

// Admins see every tenant; a member its own.
bool can_see_tenant(const Principal& p, const std::string& tenant);

// A job visible to `p`, or NotFound (also for other tenants' jobs: their ids leak nothing).
core::Result<store::JobRow> visible_job(store::JobRepo& jobs, const Principal& p,
                                        const std::string& id_text);

// The tasks of the array `id_text` names (its first task's id), by index, as `p` may see
// them: NotFound for a job that is not an array's first task (api_workflows.cc).
core::Result<std::vector<store::JobRow>> visible_array(store::JobRepo& jobs, const Principal& p,
                                                       const std::string& id_text);

// The run of `job` as GET /v1/runs/{id} answers it: its manifest (lineage), attempts as
// placed, metrics, artifacts and origin (api_runs.cc).
core::Result<nlohmann::json> run_json(store::Tx& tx, const store::JobRow& job);

// A time query parameter: milliseconds since the epoch or a UTC date ("2026-12-01",
// "2026-12-01T08:00:00Z"); InvalidArgument names `name`.
core::Result<core::Time> time_param(const std::string& name, const std::string& text);

// The optional body of an admin action ({"reason": "..."}): the reason, or "" for an
// empty body; InvalidArgument names the field that is wrong.
core::Result<std::string> action_reason(const std::string& body);

// The stored configuration of tenant `name`, or NotFound.
core::Result<TenantConfig> load_tenant(store::TenantRepo& tenants, const std::string& name);

}  // namespace corral::server
