#include <algorithm>
#include <bit>

#include "sched/internal/admit.h"
#include "sched/internal/cycle.h"
#include "sched/internal/explain.h"
#include "sched/internal/preempt.h"
#include "sched/internal/text.h"

namespace corral::sched::detail {

// A blocked job that GPUs already being given up would seat waits for them instead of
// preempting more. Those jobs (victims asked to stop for it in an earlier cycle, jobs
// being cancelled or drained) free their GPUs within their grace; asking another job to
// stop as well costs that job its work since its checkpoint and frees nothing sooner.
// While agents confirm the first victim's stop, every cycle would otherwise pick a
// second. It is placed once they are free. Counts as a preemption search. Returns the
// pending reason. With `claim`, the jobs waited for are this job's alone in this cycle
// (a later job does not wait for them too, and preempts another instead).
std::optional<std::string> wait_for_stopping(Cycle& c, const JobRequest& r, TenantIx tenant,
                                             bool claim) {
  if (!c.config.preemption.enabled || c.searches >= c.config.preemption.max_searches_per_cycle) {
    return std::nullopt;
  }
  std::vector<std::int32_t> stopping;
  for (std::int32_t ix = 0; ix < static_cast<std::int32_t>(c.s.running().size()); ++ix) {
    if (c.s.running()[ix].stopping && !c.running.touched[ix]) stopping.push_back(ix);
  }
  if (stopping.empty()) return std::nullopt;
  ++c.searches;
  const Plan::Mark mark = c.plan.mark();
  for (const std::int32_t ix : stopping) {
    const JobRequest& v = c.s.running()[ix].request;
    c.plan.give_back(c.running.takes[ix], c.running.tenant[ix], v.cpus_per_gpu,
                     v.memory_per_gpu_mib);
  }
  c.memos.clear();  // they record what did not fit without these GPUs
  Attempt attempt = try_place(c, r, tenant);
  c.plan.rollback(mark);
  c.memos.clear();  // and these, what did not fit with them
  if (!attempt.placement) return std::nullopt;
  // Only the stopping jobs whose GPUs it would use are waited for.
  std::vector<std::int32_t> waited;
  for (const std::int32_t ix : stopping) {
    if (detail::overlaps(c.running.takes[ix], attempt.takes)) waited.push_back(ix);
  }
  if (waited.empty()) return std::nullopt;  // it fits without them: not blocked by room
  // The plan keeps them held by the stopping jobs, which is the truth until they are gone
  // (fair share charges their tenants meanwhile); held GPUs go to no one else, and a
  // stopping job is no one's victim, so nothing more is needed to keep them.
  std::string names;
  for (const std::int32_t ix : waited) {
    if (claim) c.running.touched[ix] = true;  // waited for by this job only
    names += cat(names.empty() ? "" : ", ", c.s.running()[ix].request.id.value);
  }
  return cat("waiting for job", waited.size() > 1 ? "s " : " ", names,
             ", already stopping, to free the GPUs this job will use");
}

// A job requeued by a resize is placed at the size decide() gave it. When that size does
// not fit now but would on GPUs that jobs already stopping give up (the job it grows into
// was shrunk by the same decision, and its workers may still be checkpointing when this
// one's are gone), it waits for them: restarting smaller would lose the growth it was
// stopped for. When the target would not fit even then (its GPUs went elsewhere, or a job
// earlier in the cycle waits for them), or was capped by its tenant's class cap, it takes
// what fits (nullopt). It claims nothing: a job that preempted one of those jobs, later in
// the queue, still waits for its victim rather than preempting another.
std::optional<std::string> wait_for_resize_target(Cycle& c, const PendingJob& job,
                                                  TenantIx tenant) {
  const JobRequest& r = job.request;
  if (job.resize_target <= 0 || !r.elastic ||
      detail::allowed_sizes(r).front() != job.resize_target) {
    return std::nullopt;
  }
  JobRequest at_target = r;
  at_target.gpus = job.resize_target;
  at_target.elastic->min_gpus = job.resize_target;
  const Attempt now = try_place(c, at_target, tenant);
  if (now.placement) return std::nullopt;  // it fits: placed at its target as usual
  if (now.kind != PendingKind::kCapacity && now.kind != PendingKind::kTopology &&
      now.kind != PendingKind::kPower) {
    return std::nullopt;
  }
  return wait_for_stopping(c, at_target, tenant, /*claim=*/false);
}

// Preemption for a blocked job: per acceptable type in order, at the smallest size the
// job accepts, the cheapest set of victims that opens a placement. Applies it and
// returns true when one is found. A set with a victim that must pay for itself
// (detail::must_pay) is taken only when its victims lose less work than the waiting it
// saves (detail::WaitingCost); otherwise `declined` says what was weighed.
bool try_preempt(Cycle& c, detail::JobQueue& queue, const PendingJob& job, TenantIx tenant,
                 bool due, std::string& declined) {
  const JobRequest& r = job.request;
  if (!c.config.preemption.enabled || c.searches >= c.config.preemption.max_searches_per_cycle) {
    return false;
  }
  ++c.searches;
  const std::int32_t size = detail::allowed_sizes(r).back();
  const std::int32_t reservation = c.gate.reservation_index(r);
  for (TypeIx type : candidate_types(c.s, c.config, r)) {
    const detail::PlaceRequest request = place_request(c, r, type, size);
    if (detail::never_fits(c.bounds, request)) continue;
    const detail::Admission admission =
        detail::admit(c.plan, tenant, type, gpu_milli_of(r, size), is_session(r));
    if (!admission.ok) continue;
    const detail::Preemptor preemptor{
        .job = &job,
        .tenant = tenant,
        .within_guarantee = !admission.borrowed,
        .level = detail::las_level(c.config, job.attained_gpu_seconds),
        .reservation_masks = reservation >= 0 ? &c.gate.reserved(reservation) : nullptr,
        .forbidden = &c.gate.forbidden(),
        .due = due};
    auto found = detail::find_preemption(c.plan, c.running, request, preemptor, c.config, c.now);
    if (!found) continue;
    if (std::any_of(found->victims.begin(), found->victims.end(),
                    [&](const detail::Victim& v) { return detail::must_pay(v, c.config); })) {
      double lost = 0;
      bool across_tenants = false;
      for (const detail::Victim& v : found->victims) {
        lost += v.lost_gpu_seconds;
        across_tenants = across_tenants || v.kind == detail::VictimKind::kReclaim ||
                         v.kind == detail::VictimKind::kStarved;
      }
      const double waiting =
          c.waiting.gpu_seconds(c.plan, c.running, request, c.gate.forbidden(),
                                c.config.preemption.grace, c.now, across_tenants, lost);
      if (lost >= waiting) {
        if (declined.empty()) {
          declined =
              cat("waits for running jobs to end rather than stop job",
                  found->victims.size() > 1 ? "s " : " ",
                  c.s.running()[found->victims.front().running_ix].request.id.value,
                  found->victims.size() > 1 ? " and others" : "", " (", detail::gpu_hours(lost),
                  " of work lost against ", detail::gpu_hours(waiting), " of waiting)");
        }
        continue;
      }
    }

    Placement placement = make_placement(c, r, type, found->placement, admission.borrowed);
    std::vector<std::pair<std::size_t, const detail::Victim*>> shrinks;  // resize, victim
    for (const detail::Victim& v : found->victims) {
      const RunningJob& victim = c.s.running()[v.running_ix];
      c.plan.give_back(v.released, c.running.tenant[v.running_ix], victim.request.cpus_per_gpu,
                       victim.request.memory_per_gpu_mib);
      c.running.touched[v.running_ix] = true;
      placement.waits_for.push_back(victim.request.id);
      if (v.shrink) {
        shrinks.emplace_back(c.out.resizes.size(), &v);
        c.out.resizes.push_back({.job = victim.request.id,
                                 .from_gpus = static_cast<std::int32_t>(victim.gpus.size()),
                                 .for_job = r.id,
                                 .reason = v.reason});
      } else {
        c.out.preemptions.push_back({.victim = victim.request.id,
                                     .for_job = r.id,
                                     .reason = v.reason,
                                     .grace = c.config.preemption.grace});
      }
    }
    c.plan.take(found->placement.takes, tenant, r.cpus_per_gpu, r.memory_per_gpu_mib);
    for (const auto& [at, v] : shrinks) {
      Resize& rz = c.out.resizes[at];
      // A shrink gives up only what the placement needs: a 32-GPU job making room for 8
      // goes to 24, one checkpoint-restart, where going to its minimum of 8 and growing
      // back to 24 in the next cycle made two.
      const JobRequest& vr = c.s.running()[v->running_ix].request;
      rz.gpus = keep_what_is_left(c, v->running_ix, v->kept, v->released,
                                  detail::useful_sizes(vr, c.config.elastic_min_efficiency),
                                  rz.from_gpus - 1);
      rz.to_gpus = static_cast<std::int32_t>(rz.gpus.size());
    }
    for (const detail::Victim& v : found->victims) {
      queue.refresh(c.plan, c.running.tenant[v.running_ix]);
    }
    // Victims' GPUs the job does not use are not free until the victims are gone: no one
    // else may have them in this decision.
    std::vector<Plan::Take> leftover;
    for (const detail::Victim& v : found->victims) {
      for (const Plan::Take& t : v.released) {
        const std::uint64_t still_free = t.mask & c.plan.free_mask(t.node);
        if (still_free != 0) leftover.push_back({t.node, still_free});
      }
    }
    c.plan.block(leftover);
    c.out.placements.push_back(std::move(placement));
    c.memos.clear();  // GPUs were given back: what did not fit before may fit now
    return true;
  }
  return false;
}

}  // namespace corral::sched::detail
