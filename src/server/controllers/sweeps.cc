#include "server/controllers/sweeps.h"

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/job_phase.h"
#include "sched/asha.h"
#include "server/base/log.h"

namespace corral::server {

core::Status judge_sweep_trial(store::Tx& tx, const LifecycleContext& ctx, const store::JobRow& job,
                               const core::RunReport& report) {
  if (job.array_job.value == 0 || core::is_terminal(job.phase) || report.metrics.empty()) {
    return {};
  }
  // A stored spec that no longer parses (a stricter validator since) is no sweep to
  // judge: its run report is recorded all the same.
  const auto spec = ctx.specs.get(job.id, job.spec_json);
  if (!spec.ok() || !(*spec)->sweep || !(*spec)->sweep->early_stopping) return {};
  const core::SweepSpec& sweep = *(*spec)->sweep;
  std::vector<core::MetricPoint> points;
  for (const auto& p : report.metrics) {
    if (p.name == sweep.metric) points.push_back(p);
  }
  if (points.empty()) return {};
  std::sort(points.begin(), points.end(),
            [](const auto& a, const auto& b) { return a.step < b.step; });
  const std::vector<std::int64_t> rungs = core::rung_steps(*sweep.early_stopping);
  CORRAL_ASSIGN_OR_RETURN(const auto judged, tx.runs().list_trial_rungs(job.id));
  if (!judged.empty() && !judged.back().continued) return {};  // stopped: a late report
  for (auto rung = static_cast<std::int32_t>(judged.size());
       rung < static_cast<std::int32_t>(rungs.size()); ++rung) {
    // The value judged at a rung: the first the trial reported at or past its step.
    const auto at = std::find_if(points.begin(), points.end(),
                                 [&](const auto& p) { return p.step >= rungs[rung]; });
    if (at == points.end()) break;
    CORRAL_ASSIGN_OR_RETURN(const auto there, tx.runs().list_sweep_rungs(job.array_job, rung));
    std::vector<double> earlier;
    for (const auto& r : there) earlier.push_back(r.value);
    const sched::RungVerdict v =
        sched::judge_rung(earlier, at->value, sweep.goal, sweep.early_stopping->reduction_factor);
    CORRAL_ASSIGN_OR_RETURN(const bool fresh, tx.runs().insert_sweep_rung(
                                                  {.sweep = job.array_job,
                                                   .trial = job.id,
                                                   .rung = rung,
                                                   .seq = static_cast<std::int32_t>(earlier.size()),
                                                   .step = at->step,
                                                   .value = at->value,
                                                   .continued = v.continues,
                                                   .at = ctx.now}));
    if (!fresh) return {};
    const std::string verdict = fmt::format(
        "rung {} (step {}): {} {:g} at step {} ranks {} of the {} trials here; the best {} go "
        "on (cut {:g})",
        rung, rungs[rung], sweep.metric, at->value, at->step, v.rank, v.reached, v.kept, v.cut);
    CORRAL_RETURN_IF_ERROR(tx.records().append_job_event(
        {.job = job.id,
         .time = ctx.now,
         .kind = v.continues ? "sweep_rung" : "early_stopped",
         .message = verdict + (v.continues ? ": goes on" : ": stopped")}));
    ctx.fx.log.push_back(LogEvent("sweep_rung")
                             .add("job", job.id.value)
                             .add("sweep", job.array_job.value)
                             .add("rung", rung)
                             .add("value", fmt::format("{:g}", at->value))
                             .add("rank", v.rank)
                             .add("continues", v.continues));
    if (!v.continues) {
      return cancel_job(tx, ctx, job, "stopped early by its sweep's ASHA rule at " + verdict)
          .status();
    }
  }
  return {};
}

}  // namespace corral::server
