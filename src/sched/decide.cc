#include "sched/decide.h"

#include <algorithm>
#include <bit>
#include <string>

#include "core/units.h"
#include "sched/dependencies.h"
#include "sched/internal/cycle.h"
#include "sched/internal/lend.h"
#include "sched/internal/order.h"
#include "sched/internal/reclaim_wait.h"
#include "sched/internal/text.h"

namespace corral::sched {

using detail::Attempt;
using detail::candidate_types;
using detail::cat;
using detail::Cycle;

Decisions decide(const ClusterSnapshot& snapshot, const SchedulerConfig& config, core::Time now) {
  Cycle c(snapshot, config, now);
  detail::JobQueue queue(snapshot, config, now);

  // 1. order: jobs in queue order; each is admitted, placed or explained before the next
  //    is looked at, so fair share sees every placement made before it.
  std::int32_t in_line = 0;  // pending jobs given a position so far
  // The previous job's placement, if any, counts against its tenant's class cap, its
  // array's limit and its user's sessions.
  std::size_t counted = 0;
  TenantIx previous_tenant = -1;
  const JobRequest* previous = nullptr;
  const auto count_placements = [&] {
    for (; counted < c.out.placements.size(); ++counted) {
      const auto gpus = static_cast<std::int64_t>(c.out.placements[counted].gpus.size());
      c.caps.add(previous_tenant, previous->tier, gpus);
      c.arrays.add(previous->array);
      c.sessions.add(*previous, gpus);
    }
  };
  while (auto next = queue.next(c.plan)) {
    count_placements();
    const auto [ix, standing] = *next;
    const TenantIx tenant = *snapshot.find_tenant(snapshot.pending()[ix].request.tenant);
    // Its tenant's cap for its priority class: an elastic job may start smaller (its
    // capped request is what the rest of the cycle sees), or it waits.
    const detail::ClassCaps::Fit cap = c.caps.fit(tenant, snapshot.pending()[ix]);
    const PendingJob& job = cap.capped ? *cap.capped : snapshot.pending()[ix];
    const JobRequest& r = job.request;
    previous_tenant = tenant;
    previous = &snapshot.pending()[ix].request;
    c.out.queue.push_back({r.id, standing});

    // A job that can never fit the fleet, or waits for its array, is not in line
    // (position 0): it must never read as ahead of work that can run.
    const auto wait = [&](PendingKind kind, std::string reason) {
      c.out.pending.push_back({.job = r.id,
                               .position = out_of_line(kind) ? 0 : ++in_line,
                               .kind = kind,
                               .reason = std::move(reason)});
    };
    if (std::string full = c.arrays.blocked(r); !full.empty()) {
      wait(PendingKind::kArrayLimit, std::move(full));
      continue;
    }
    if (std::string full = c.sessions.blocked(r); !full.empty()) {
      wait(PendingKind::kSessionLimit, std::move(full));
      continue;
    }
    if (std::string problem = c.gate.reservation_problem(r); !problem.empty()) {
      wait(PendingKind::kReservation, std::move(problem));
      continue;
    }
    if (!cap.fits) {
      wait(PendingKind::kQuota, c.caps.reason(tenant, r.tier, cap.least));
      continue;
    }
    // A job that checkpoints may run on the head's promised GPUs until they are due.
    const bool borrows =
        c.head && detail::may_borrow_promise(job, *c.head, *c.gate.shadow_at(), config, now);
    c.gate.enter(c.plan, c.gate.view_for(r, borrows));

    // A job restarting after a resize waits for the shrink it grows into: the GPUs a job
    // resized with it still gives up.
    if (auto reason = wait_for_resize_target(c, job, tenant)) {
      wait(PendingKind::kWaiting, std::move(*reason));
      continue;
    }
    // 2-3. admit and place, all or nothing.
    Attempt attempt = is_share(r) ? detail::try_place_share(c, r, tenant) : try_place(c, r, tenant);
    if (attempt.placement) {
      if (is_share(r)) {
        for (const detail::Plan::Take& t : attempt.takes) {
          c.plan.take_share(t.node, std::countr_zero(t.mask), tenant, r);
        }
      } else {
        c.plan.take(attempt.takes, tenant, r.cpus_per_gpu, r.memory_per_gpu_mib);
      }
      c.out.placements.push_back(std::move(*attempt.placement));
      continue;
    }
    // A share waits for room: it neither preempts nor is promised a start (place_share.cc).
    if (is_share(r)) {
      wait(attempt.kind, std::move(attempt.reason));
      continue;
    }
    const bool blocked_by_room = attempt.kind == PendingKind::kCapacity ||
                                 attempt.kind == PendingKind::kTopology ||
                                 attempt.kind == PendingKind::kPower;
    // 4. wait for GPUs already being given up, else preempt, for a job entitled to
    //    someone's GPUs.
    if (blocked_by_room) {
      if (auto reason = wait_for_stopping(c, r, tenant)) {
        wait(PendingKind::kWaiting, std::move(*reason));
        continue;
      }
    }
    // A starved job whose turn it is has its promise due: it may preempt the jobs that
    //    went ahead of it, when that loses less work than waiting (try_preempt), and is
    //    otherwise promised its planned start.
    const bool due =
        blocked_by_room && !c.head && !config.backfill && queue.may_promise(c.plan, ix);
    std::string declined;
    if (blocked_by_room && try_preempt(c, queue, job, tenant, due, declined)) continue;
    if (!declined.empty()) attempt.reason += cat("; ", declined);
    if (blocked_by_room && declined.empty()) {
      if (auto reclaim = detail::reclaim_wait(c.plan, c.running, config, r, tenant,
                                              candidate_types(c.s, config, r), now)) {
        attempt.reason += cat("; ", *reclaim);
      }
    }
    // 5. backfill: the first job blocked for room is promised its planned start (without
    //    EASY backfill, only the starved job whose turn it is).
    if (blocked_by_room && !c.head && (config.backfill || due)) {
      if (auto reason = plan_head(c, job, attempt.reason)) {
        wait(PendingKind::kWaiting, std::move(*reason));
        continue;
      }
    }
    // 6. explain. The head is named only when it stands in this job's way: it waits for
    //    a type this job could use, and this job would still run when the head starts.
    //    (The gate still shows this job's view: placing it, preempting for it and planning
    //    it as head change no view but the head's own.)
    if (blocked_by_room && c.head && c.gate.current().shadow_forbidden &&
        (r.gpu_types.empty() ||
         std::ranges::count(r.gpu_types, c.s.gpu_types()[c.head_type].id) > 0)) {
      const PlannedStart& head = c.out.planned_starts.back();
      attempt.reason += cat("; behind job ", head.job.value, " (planned start by ",
                            core::instant_text(head.at), ")");
    }
    // It waits ahead of the jobs after it for its preferred type (detail::WaitingCost).
    if (blocked_by_room && attempt.preferred >= 0) {
      c.waiting.left_waiting(attempt.preferred, detail::allowed_sizes(r).back());
    }
    wait(attempt.kind, std::move(attempt.reason));
  }

  count_placements();
  // Jobs that wait for their dependencies were not queued: each is out of line, or
  // abandoned when a dependency can never be met.
  for (const PendingJob& job : snapshot.pending()) {
    if (job.dependencies.empty()) continue;
    DependencyVerdict verdict = judge_dependencies(job.dependencies);
    if (verdict.state == DependencyState::kWaiting) {
      c.out.pending.push_back({.job = job.request.id,
                               .position = 0,
                               .kind = PendingKind::kDependency,
                               .reason = std::move(verdict.reason)});
    } else if (verdict.state == DependencyState::kNever) {
      c.out.abandoned.push_back({job.request.id, std::move(verdict.reason)});
    }
  }
  // 7. running elastic jobs are re-sized where GPUs add the most.
  if (config.elastic_growth) allocate_elastic(c);
  // 8. a forecast start for every job waiting for room.
  forecast_starts(c);
  return std::move(c.out);
}

}  // namespace corral::sched
