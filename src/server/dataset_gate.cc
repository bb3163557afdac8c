#include "server/dataset_gate.h"

#include <map>
#include <vector>

namespace corral::server {

using core::Result;

std::string dataset_hold_reason(const core::DatasetRef& ref, core::QualityStatus status,
                                const std::string& why) {
  std::string out = "held: dataset " + ref.text() + " is " + std::string(core::to_string(status));
  if (status == core::QualityStatus::kPending) out += " (its quality checks have not passed)";
  if (!why.empty()) out += " (" + why + ")";
  return out;
}

Result<std::string> check_job_datasets(store::Tx& tx, const core::JobSpec& spec) {
  std::string hold;
  for (std::size_t i = 0; i < spec.lineage.datasets.size(); ++i) {
    const core::DatasetRef& ref = spec.lineage.datasets[i];
    CORRAL_ASSIGN_OR_RETURN(const auto v, tx.get_dataset_version(ref));
    if (!v || !v->visible_to(spec.tenant)) {
      return core::invalid_argument("lineage.datasets[" + std::to_string(i) + "]",
                                    "unknown dataset version " + ref.text());
    }
    if (hold.empty() && v->status != core::QualityStatus::kPassed) {
      hold = dataset_hold_reason(ref, v->status, v->status_reason);
    }
  }
  return hold;
}

Result<std::int64_t> apply_dataset_status(store::Tx& tx, const core::DatasetVersion& v,
                                          core::Time now) {
  CORRAL_ASSIGN_OR_RETURN(const auto holds, tx.list_dataset_holds());
  std::map<std::int64_t, std::string> held;  // pending job -> its first hold's reason
  for (const auto& h : holds)
    held.emplace(h.job.value, dataset_hold_reason(h.ref, h.status, h.reason));
  const std::string verb =
      "dataset " + v.ref.text() + " " + std::string(core::to_string(v.status)) +
      (v.status_reason.empty() ? "" : " (" + v.status_reason + ")") + " by " + v.status_by;
  std::int64_t touched = 0;
  core::JobId after(0);
  for (;;) {
    CORRAL_ASSIGN_OR_RETURN(const auto jobs, tx.list_jobs_using(v.ref, after, 500));
    if (jobs.empty()) break;
    after = jobs.back();
    CORRAL_ASSIGN_OR_RETURN(auto rows, tx.get_jobs(jobs));
    for (store::JobRow& row : rows) {
      if (core::is_terminal(row.phase)) continue;
      ++touched;
      const bool waiting =
          row.phase == core::JobPhase::kPending || row.phase == core::JobPhase::kRequeued;
      CORRAL_RETURN_IF_ERROR(tx.append_job_event(
          {.job = row.id,
           .time = now,
           .kind = "dataset",
           .message = verb + (waiting || v.status == core::QualityStatus::kPassed
                                  ? ""
                                  : "; the job keeps running on data it already read")}));
      if (!waiting) continue;
      const store::JobRow was = row;
      const auto h = held.find(row.id.value);
      row.reason = h != held.end() ? h->second : "";
      row.pending_kind = h != held.end() ? "held" : "";
      row.updated_at = now;
      CORRAL_ASSIGN_OR_RETURN(const bool updated, tx.update_job(row, was.phase));
      if (!updated) return core::raced("job " + std::to_string(row.id.value) + " moved");
    }
  }
  return touched;
}

}  // namespace corral::server
