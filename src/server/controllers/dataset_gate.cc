#include "server/controllers/dataset_gate.h"

#include <map>
#include <vector>

#include "server/base/stored_documents.h"

namespace corral::server {

using core::Result;

std::string dataset_hold_reason(const core::DatasetRef& ref, core::QualityStatus status,
                                const std::string& why) {
  std::string out = "held: dataset " + ref.text() + " is " + std::string(core::to_string(status));
  if (status == core::QualityStatus::kPending) out += " (its quality checks have not passed)";
  if (!why.empty()) out += " (" + why + ")";
  return out;
}

bool holds_job(core::QualityStatus status, const DatasetPolicy& policy) {
  if (status == core::QualityStatus::kPassed) return false;
  return !(status == core::QualityStatus::kPending && policy.allow_pending);
}

std::map<std::string, DatasetPolicy> dataset_policies(
    const std::vector<store::TenantRow>& tenants) {
  std::map<std::string, DatasetPolicy> out;
  for (const TenantConfig& cfg : stored_tenants(tenants)) out[cfg.tenant.id.value] = cfg.datasets;
  return out;
}

Result<std::vector<store::DatasetHold>> current_holds(
    store::DatasetRepo& datasets, const std::vector<store::TenantRow>& tenants) {
  CORRAL_ASSIGN_OR_RETURN(auto holds, datasets.list_dataset_holds());
  if (holds.empty()) return holds;  // the usual case: no tenant config parsed
  const auto policies = dataset_policies(tenants);
  std::erase_if(holds, [&](const store::DatasetHold& h) {
    const auto p = policies.find(h.tenant.value);
    return !holds_job(h.status, p != policies.end() ? p->second : DatasetPolicy{});
  });
  return holds;
}

Result<std::string> check_job_datasets(store::DatasetRepo& datasets, const core::JobSpec& spec,
                                       const DatasetPolicy& policy) {
  std::string hold;
  for (std::size_t i = 0; i < spec.lineage.datasets.size(); ++i) {
    const core::DatasetRef& ref = spec.lineage.datasets[i];
    CORRAL_ASSIGN_OR_RETURN(const auto v, datasets.get_dataset_version(ref));
    if (!v || !v->visible_to(spec.tenant)) {
      return core::invalid_argument("lineage.datasets[" + std::to_string(i) + "]",
                                    "unknown dataset version " + ref.text());
    }
    if (hold.empty() && holds_job(v->status, policy)) {
      hold = dataset_hold_reason(ref, v->status, v->status_reason);
    }
  }
  return hold;
}

Result<std::int64_t> apply_dataset_status(store::Tx& tx, const LifecycleContext& ctx,
                                          const core::DatasetVersion& v) {
  CORRAL_ASSIGN_OR_RETURN(const auto tenants, tx.tenants().list_tenants());
  CORRAL_ASSIGN_OR_RETURN(const auto holds, current_holds(tx.datasets(), tenants));
  std::map<std::int64_t, std::string> held;  // pending job -> its first hold's reason
  for (const auto& h : holds)
    held.emplace(h.job.value, dataset_hold_reason(h.ref, h.status, h.reason));
  const auto policies = dataset_policies(tenants);
  const bool quarantined = v.status == core::QualityStatus::kQuarantined;
  const std::string verb =
      "dataset " + v.ref.text() + " " + std::string(core::to_string(v.status)) +
      (v.status_reason.empty() ? "" : " (" + v.status_reason + ")") + " by " + v.status_by;
  std::int64_t touched = 0;
  core::JobId after(0);
  for (;;) {
    CORRAL_ASSIGN_OR_RETURN(const auto jobs, tx.datasets().list_jobs_using(v.ref, after, 500));
    if (jobs.empty()) break;
    after = jobs.back();
    CORRAL_ASSIGN_OR_RETURN(auto rows, tx.jobs().get_jobs(jobs));
    for (store::JobRow& row : rows) {
      if (core::is_terminal(row.phase)) continue;
      ++touched;
      const bool waiting =
          row.phase == core::JobPhase::kPending || row.phase == core::JobPhase::kRequeued;
      const auto policy = policies.find(row.tenant.value);
      const bool stop =
          !waiting && quarantined && policy != policies.end() &&
          policy->second.stop_on_quarantine &&
          (row.phase == core::JobPhase::kLaunching || row.phase == core::JobPhase::kRunning);
      std::string message = verb;
      if (stop) {
        message += "; stopping through a checkpoint (tenant policy datasets.stopOnQuarantine)";
      } else if (!waiting && quarantined) {
        message += "; the job keeps running on data it already read";
      }
      CORRAL_RETURN_IF_ERROR(tx.records().append_job_event(
          {.job = row.id, .time = ctx.now, .kind = "dataset", .message = message}));
      if (stop) {
        // Requeued once stopped, it waits behind the gate until the version passes again;
        // one no agent runs is requeued at once, and says so now.
        CORRAL_RETURN_IF_ERROR(preempt_job(tx, ctx, row, {.reason = message}));
        CORRAL_ASSIGN_OR_RETURN(auto now_row, tx.jobs().get_job(row.id));
        if (now_row && (now_row->phase == core::JobPhase::kPending ||
                        now_row->phase == core::JobPhase::kRequeued)) {
          const store::JobRow was = *now_row;
          now_row->reason = dataset_hold_reason(v.ref, v.status, v.status_reason);
          now_row->pending_kind = "held";
          CORRAL_ASSIGN_OR_RETURN(const bool updated, tx.jobs().update_job(*now_row, was.phase));
          if (!updated) return core::raced("job " + std::to_string(row.id.value) + " moved");
        }
        continue;
      }
      if (!waiting) continue;
      const store::JobRow was = row;
      const auto h = held.find(row.id.value);
      row.reason = h != held.end() ? h->second : "";
      row.pending_kind = h != held.end() ? "held" : "";
      row.updated_at = ctx.now;
      CORRAL_ASSIGN_OR_RETURN(const bool updated, tx.jobs().update_job(row, was.phase));
      if (!updated) return core::raced("job " + std::to_string(row.id.value) + " moved");
    }
  }
  return touched;
}

}  // namespace corral::server
