#include "server/api/api_views.h"

#include <algorithm>

#include "core/json_object.h"
#include "core/units.h"
#include "core/utf8.h"

namespace corral::server {

using core::JobPhase;
using core::Result;
using nlohmann::json;

json parse_or_null(const std::string& text) {
  json j = json::parse(text, nullptr, false);
  return j.is_discarded() ? json(nullptr) : j;
}

// A job as the API shows it. A pending job's position comes from `positions`, the queue
// order of the scheduler's last cycle (one consistent order; sched_loop.h), when this
// corrald schedules; else from the stored row.
// The backfill head's planned start has a latest start (a promise); the jobs behind it
// have a forecast only (latestAtMs null).
json planned_start_json(const store::JobRow& j) {
  if (j.phase != JobPhase::kPending || core::to_ms(j.planned_start) <= 0) return nullptr;
  const std::int64_t latest = core::to_ms(j.planned_latest);
  return {{"atMs", core::to_ms(j.planned_start)},
          {"latestAtMs", latest > 0 ? json(latest) : json(nullptr)}};
}

std::string pending_reason(const store::JobRow& j, const std::string& cycle_failure) {
  const std::string stored = j.reason.empty() ? "waiting for the scheduler" : j.reason;
  if (cycle_failure.empty()) return stored;
  return "scheduling cycles are failing (" + cycle_failure + "); last reason: " + stored;
}

json job_json(const store::JobRow& j, const SchedLoop::QueuePositions* positions,
              const std::string& cycle_failure) {
  const bool pending = j.phase == JobPhase::kPending;
  const std::int32_t position = !pending    ? 0
                                : positions ? SchedLoop::queue_position(positions, j.id)
                                            : j.queue_position;
  json out = {{"id", j.id.value},
              {"name", j.name},
              {"tenant", j.tenant.value},
              {"priorityClass", j.priority_class},
              {"gpus", j.gpus},
              {"phase", std::string(core::to_string(j.phase))},
              {"reason", pending ? pending_reason(j, cycle_failure) : j.reason},
              {"pendingKind", j.pending_kind},
              {"queuePosition", position},
              {"plannedStart", planned_start_json(j)},
              {"preemptions", j.preemptions},
              {"attempt", j.attempt},
              {"createdAtMs", core::to_ms(j.created_at)},
              {"updatedAtMs", core::to_ms(j.updated_at)},
              {"queuedAtMs", core::to_ms(j.queued_at)},
              {"spec", parse_or_null(j.spec_json)}};
  // A task of an array: its array's id and its index (null for a job in no array).
  out["array"] = j.array_job.value > 0 ? json{{"job", j.array_job.value}, {"index", j.array_index}}
                                       : json(nullptr);
  return out;
}

json allocation_json(const std::vector<store::AllocationRow>& rows) {
  json gpus = json::array();
  for (const auto& a : rows) gpus.push_back({{"node", a.node.value}, {"index", a.gpu_index}});
  const auto& first = rows.front();
  return {{"job", first.job.value},
          {"attempt", first.attempt},
          {"gpuType", first.gpu_type.value},
          {"epoch", first.epoch},
          {"borrowed", first.borrowed},
          {"active", first.active},
          {"createdAtMs", core::to_ms(first.created_at)},
          {"shareMilli", first.share_milli},  // a share of each GPU; 0: whole GPUs
          {"gpus", gpus}};
}

bool can_see_tenant(const Principal& p, const std::string& tenant) {
  return p.role == Role::kAdmin || (p.role == Role::kMember && p.tenant == tenant);
}

std::string audit_summary(const store::JobRow& j) {
  return "phase=" + std::string(core::to_string(j.phase)) + " tenant=" + j.tenant.value +
         " gpus=" + std::to_string(j.gpus) + " attempt=" + std::to_string(j.attempt);
}

// A job visible to `p`, or NotFound (also for other tenants' jobs: their ids leak nothing).
Result<store::JobRow> visible_job(store::JobRepo& jobs, const Principal& p,
                                  const std::string& id_text) {
  const auto id = parse_decimal(id_text);
  if (!id) return core::not_found("job " + id_text.substr(0, 32) + " not found");
  CORRAL_ASSIGN_OR_RETURN(auto job, jobs.get_job(core::JobId(*id)));
  if (!job || !can_see_tenant(p, job->tenant.value)) {
    return core::not_found("job " + std::to_string(*id) + " not found");
  }
  return *job;
}

Result<TenantConfig> load_tenant(store::TenantRepo& tenants, const std::string& name) {
  CORRAL_ASSIGN_OR_RETURN(auto row, tenants.get_tenant(core::TenantId(name)));
  if (!row) return core::not_found("tenant " + name + " not found");
  return tenant_config_from_json(name, row->config_json);
}

core::Result<core::Time> time_param(const std::string& name, const std::string& text) {
  if (!text.empty() && text.size() <= 15 &&
      std::all_of(text.begin(), text.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
    return core::time_from_ms(std::stoll(text));
  }
  auto t = core::parse_utc(text);
  if (!t.ok()) return core::invalid_argument(name, t.status().message() + " or milliseconds");
  return *t;
}

core::Result<std::string> action_reason(const std::string& body) {
  if (body.empty()) return std::string();
  CORRAL_ASSIGN_OR_RETURN(const nlohmann::json fields, core::parse_json_object(body));
  std::string reason;
  for (const auto& [k, v] : fields.items()) {
    if (k != "reason") return core::invalid_argument(k, "unknown field (reason)");
    if (!v.is_string() || v.get<std::string>().size() > 1024 ||
        core::has_control_chars(v.get<std::string>())) {
      return core::invalid_argument(
          "reason", "must be a string of at most 1024 bytes, without control characters");
    }
    reason = v.get<std::string>();
  }
  return reason;
}

}  // namespace corral::server
