#include "server/controllers/runs.h"

#include <optional>
#include <set>
#include <string>
#include <utility>

namespace corral::server {

using core::Result;
using core::Status;

const core::Checkpoint* restore_point(const std::vector<core::Checkpoint>& oldest_first,
                                      std::int32_t attempt) {
  const core::Checkpoint* restore = nullptr;
  for (const auto& c : oldest_first) {
    if (c.attempt < attempt) restore = &c;
  }
  return restore;
}

Status record_run_attempt(store::Tx& tx, core::JobId job, std::int32_t attempt,
                          const core::GpuTypeId& gpu_type, const std::vector<sched::GpuRef>& gpus,
                          std::optional<core::PackLevel> packed, core::Time now) {
  std::string level = packed ? std::string(core::to_string(*packed)) : "";
  if (!packed) {  // the level it had before, as a resize in place keeps it within its level
    CORRAL_ASSIGN_OR_RETURN(const auto known, tx.runs().list_run_attempts(job));
    for (const auto& a : known) {
      if (a.attempt == attempt) level = a.packed;
    }
  }
  CORRAL_ASSIGN_OR_RETURN(const auto checkpoints, tx.checkpoints().list_checkpoints(job));
  const core::Checkpoint* from = restore_point(checkpoints, attempt);
  store::RunAttemptRow row{.job = job,
                           .attempt = attempt,
                           .gpu_type = gpu_type,
                           .packed = level,
                           .restored_from = from ? from->uri : "",
                           .restored_step = from ? from->step : 0,
                           .started_at = now};
  for (const auto& g : gpus) row.gpus.push_back(g.node.value + ":" + std::to_string(g.index));
  return tx.runs().put_run_attempt(row);
}

Result<RunReportTaken> record_run_report(store::RunRepo& runs, core::JobId job,
                                         std::int32_t attempt, const core::RunReport& report,
                                         core::Time now) {
  RunReportTaken taken;
  if (!report.metrics.empty()) {
    CORRAL_ASSIGN_OR_RETURN(const std::int64_t before, runs.count_metric_points(job));
    std::set<std::pair<std::string, std::int64_t>> keys;
    for (const auto& p : report.metrics) keys.emplace(p.name, p.step);
    // Points already there only change value; new keys are what the cap counts. The bound
    // is checked on the most the report could add, so a run near its cap is refused a
    // report that might have fit, never let past it.
    if (before + static_cast<std::int64_t>(keys.size()) > kMaxRunMetricPoints) {
      // Not a 429: waiting does not make room, so no retry should follow.
      return core::failed_precondition(
          "run " + std::to_string(job.value) + " holds " + std::to_string(before) +
          " metric points; a run keeps at most " + std::to_string(kMaxRunMetricPoints));
    }
    CORRAL_ASSIGN_OR_RETURN(taken.points, runs.put_metrics(job, attempt, report.metrics, now));
  }
  for (const auto& a : report.artifacts) {
    CORRAL_ASSIGN_OR_RETURN(
        const bool added,
        runs.insert_artifact({.job = job, .attempt = attempt, .artifact = a, .at = now}));
    if (added) taken.artifacts.push_back(a);
  }
  return taken;
}

}  // namespace corral::server
