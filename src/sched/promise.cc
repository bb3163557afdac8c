#include <algorithm>

#include "core/units.h"
#include "sched/internal/backfill.h"
#include "sched/internal/cycle.h"
#include "sched/internal/explain.h"
#include "sched/internal/text.h"

namespace corral::sched::detail {
namespace {

// What a planned start rests on: the running job whose end makes room, by its estimate.
std::string estimate_basis(const Cycle& c, std::int32_t running_ix) {
  const RunningJob& j = c.s.running()[running_ix];
  if (j.stopping) return cat("job ", j.request.id.value, " stops within its grace");
  switch (j.request.estimate.basis) {
    case EstimateBasis::kSpec:
      return cat("job ", j.request.id.value, "'s expectedRuntime");
    case EstimateBasis::kHistory:
      return cat("estimate from ", j.request.estimate.runs, " earlier run",
                 j.request.estimate.runs == 1 ? "" : "s");
    case EstimateBasis::kMaxRuntime:
      break;
  }
  return "running jobs' max runtimes";
}

}  // namespace

// EASY backfill: the first blocked job gets a planned start and the GPUs it will get are
// promised to it; later jobs that would still run then may not take those. The promise
// rests on running jobs' max runtimes (a job is stopped at its limit, so it is a bound);
// the forecast shown beside it rests on their runtime estimates where they have one.
// Returns the pending reason for the head, which keeps `cause` (why it does not fit now:
// capacity, topology, power), or nothing if it can never start.
std::optional<std::string> plan_head(Cycle& c, const PendingJob& job, const std::string& cause) {
  const JobRequest& r = job.request;
  for (TypeIx type : candidate_types(c.s, c.config, r)) {
    const std::int32_t size = detail::allowed_sizes(r).back();
    const detail::PlaceRequest request = place_request(c, r, type, size);
    if (detail::never_fits(c.bounds, request)) continue;
    auto planned = detail::plan_start(c.plan, c.running, request, c.gate.forbidden(),
                                      c.config.preemption.grace, c.now, detail::EndBy::kMaxRuntime);
    if (!planned) continue;
    // The forecast differs from the bound only when some running job has an estimate.
    const bool estimated = std::any_of(
        c.s.running().begin(), c.s.running().end(),
        [](const RunningJob& j) { return j.request.estimate.basis != EstimateBasis::kMaxRuntime; });
    const auto forecast =
        estimated ? detail::plan_start(c.plan, c.running, request, c.gate.forbidden(),
                                       c.config.preemption.grace, c.now, detail::EndBy::kEstimate)
                  : planned;
    const core::Time expected = forecast ? std::min(forecast->at, planned->at) : planned->at;
    c.head = job;
    c.head_type = type;
    c.gate.set_shadow(planned->takes, planned->at);
    c.out.planned_starts.push_back({.job = r.id,
                                    .at = planned->at,
                                    .expected = expected,
                                    .gpus = detail::gpus_of(c.s, planned->takes)});
    const std::string head = cat("waiting: first in line for ", size, " ",
                                 c.s.gpu_types()[type].id.value, " (", cause, "); ");
    // Instants as core::instant_text: readers show them as the queue shows planned starts.
    if (expected < planned->at) {
      return cat(head, "planned start ~", core::instant_text(expected), " (",
                 estimate_basis(c, forecast->last_ix), "), by ", core::instant_text(planned->at),
                 " at the latest");
    }
    return cat(head, "start by ", core::instant_text(planned->at), " at the latest (",
               estimate_basis(c, planned->last_ix), ")");
  }
  return std::nullopt;
}

}  // namespace corral::sched::detail
