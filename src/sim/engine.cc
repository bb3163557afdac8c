#include "sim/engine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <queue>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "core/check.h"
#include "sched/check.h"
#include "sched/decide.h"
#include "sched/estimate.h"
#include "sched/snapshot.h"
#include "sched/usage.h"
#include "sim/internal/engine.h"
#include "sim/profile_facts.h"
#include "sim/rng.h"
#include "sim/snapshot_from_fleet.h"
#include "sim/traces/pollux.h"

namespace corral::sim {
namespace detail {

void Engine::request_cycle() {
  if (cycle_at_ms_) return;
  std::int64_t t = now_ms_;
  if (last_cycle_ms_) t = std::max(t, *last_cycle_ms_ + to_ms(options_.cycle_interval));
  cycle_at_ms_ = t;
  push(t, EventKind::kCycle);
}

void Engine::schedule_failure(std::int32_t node) {
  const std::int64_t mtbf = to_ms(fleet_.failures.mtbf_per_gpu);
  const auto gpus = static_cast<double>(nodes_[node].gpus.size());
  if (mtbf <= 0 || gpus == 0) return;
  const double gap = rng_.exponential(static_cast<double>(mtbf) / gpus);
  push(now_ms_ + std::max<std::int64_t>(1, std::llround(gap)), EventKind::kFailure, node, -1);
}

void Engine::fail_gpu(std::int32_t node, std::int32_t gpu) {
  if (gpu < 0) {
    schedule_failure(node);
    std::vector<std::int32_t> healthy;
    for (const core::Gpu& g : nodes_[node].gpus) {
      if (g.healthy) healthy.push_back(g.index);
    }
    if (healthy.empty()) return;
    gpu = healthy[rng_.next() % healthy.size()];
  } else if (!nodes_[node].gpus[gpu].healthy) {
    return;
  }
  ++result_.gpu_failures;
  if (const std::int32_t job = owner_[node][gpu]; job >= 0) {
    ++result_.jobs[job].failures;
    stop_and_requeue(job);
  }
  nodes_[node].gpus[gpu].healthy = false;
  result_.accrual.unhealthy.push_back({.node = nodes_[node].id,
                                       .index = gpu,
                                       .start = core::time_from_ms(now_ms_),
                                       .end = core::Time::max()});  // until repaired
  fleet_base_.reset();
  --free_by_type_[node_type_[node]];
  --usable_gpus_;
  push(now_ms_ + to_ms(fleet_.failures.repair), EventKind::kRepair, node, gpu);
}

void Engine::repair_gpu(std::int32_t node, std::int32_t gpu) {
  nodes_[node].gpus[gpu].healthy = true;
  for (auto it = result_.accrual.unhealthy.rbegin(); it != result_.accrual.unhealthy.rend(); ++it) {
    if (it->node == nodes_[node].id && it->index == gpu) {
      it->end = core::time_from_ms(now_ms_);
      break;
    }
  }
  fleet_base_.reset();
  ++usable_gpus_;
  if (owner_[node][gpu] < 0) ++free_by_type_[node_type_[node]];
  placeable_change_ = true;
  request_cycle();
}

core::Status Engine::cycle() {
  cycle_at_ms_.reset();
  last_cycle_ms_ = now_ms_;
  // decide() is not called when it cannot place anything:
  //   - without preemption, when no pending job is smaller than the free usable GPUs of
  //     the freest type (a gang takes one type);
  //   - when nothing happened since the last call that could let a job start: no
  //     arrival, no GPU freed or repaired, no wake-up. The last call placed what fit, and
  //     each job it left pending did not fit what remained. Without backfill and
  //     preemption the order alone cannot change that. With them, decide() also depends
  //     on the clock; schedule_wakeup() asks for a cycle at each instant where that can
  //     change the answer (protections expiring, starvation, overrun estimates, planned
  //     starts). Fair-share standings drift continuously between events, which under
  //     backfill could hand the reservation to another job: the simulator re-decides at
  //     events and wake-ups only (the one approximation here; corrald runs on a timer).
  //   - with elastic jobs, decide() also runs with nothing pending, or nothing that fits,
  //     while its allocator could re-size a running elastic job (growable()).
  const std::int32_t max_free = *std::max_element(free_by_type_.begin(), free_by_type_.end());
  const bool grow = growable();
  const bool no_fit_possible = !policy_.config.preemption.enabled && !pending_.empty() &&
                               *pending_sizes_.begin() > max_free && !grow;
  const bool nothing_changed = !placeable_change_;
  if ((pending_.empty() && !grow) ||
      (options_.skip_futile_cycles && (no_fit_possible || nothing_changed))) {
    ++result_.cycles_skipped;
    record_sample();
    return core::ok_status();
  }
  placeable_change_ = false;
  accrue_usage();
  const auto t0 = std::chrono::steady_clock::now();

  // 1. The snapshot, as corrald would build it from its store.
  auto snapshot = build_snapshot();
  if (!snapshot.ok()) {
    return core::internal_error(
        fmt::format("t={} ms: the fleet model built an invalid snapshot: {}", now_ms_,
                    snapshot.status().to_string()));
  }

  // 2. decide(), then the invariant checker, then apply.
  sched::Decisions d = sched::decide(*snapshot, policy_.config, at(now_ms_));
  ++result_.cycles;
  result_.decide_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (options_.check_every > 0 && result_.cycles % options_.check_every == 0) {
    ++result_.checks;
    const std::vector<std::string> bad = sched::check(*snapshot, d, policy_.config, at(now_ms_));
    if (!bad.empty()) {
      return core::internal_error(fmt::format("t={} ms, policy {}: sched::check found {}: {}",
                                              now_ms_, policy_.name, bad.size(),
                                              fmt::join(bad, "; ")));
    }
  }
  // 3. Apply, as the server would: victims stop (losing the work since their last
  //    checkpoint) and go back to the queue, then placements start. Like the scheduler's
  //    own MiniCluster, a victim is taken to stop at once (the grace period is not
  //    modelled), so the job that waits for it starts in the same cycle.
  for (const sched::Preemption& p : d.preemptions) {
    const auto victim = static_cast<std::int32_t>(p.victim.value - 1);
    if (victim < 0 || victim >= static_cast<std::int32_t>(jobs_.size()) ||
        jobs_[victim].state != JobState::kRunning) {
      return core::internal_error(fmt::format("t={} ms: preemption of job {} which is not running",
                                              now_ms_, p.victim.value));
    }
    ++jobs_[victim].preemptions;
    stop_and_requeue(victim);
  }
  bool shrank = false;
  for (const sched::Resize& r : d.resizes) {
    shrank = shrank || r.to_gpus < r.from_gpus;
    CORRAL_RETURN_IF_ERROR(resize(r));
  }
  for (const sched::Placement& p : d.placements) CORRAL_RETURN_IF_ERROR(start(p));
  for (const sched::Abandoned& a : d.abandoned) CORRAL_RETURN_IF_ERROR(abandon(a));
  // GPUs a shrink freed that no placement took were kept from everyone this cycle
  // (decide() blocks them); the next cycle may give them out.
  if (shrank) request_cycle();
  schedule_wakeup(*snapshot, d);
  for (sched::Pending& p : d.pending) {
    set_held(static_cast<std::int32_t>(p.job.value - 1),
             p.kind == sched::PendingKind::kDependency ||
                 p.kind == sched::PendingKind::kArrayLimit ||
                 p.kind == sched::PendingKind::kSessionLimit);
    result_.jobs[p.job.value - 1].last_reason = std::move(p.reason);
  }
  record_sample();
  last_ = std::move(*snapshot);
  return core::ok_status();
}

// The fleet part (types, nodes, racks, tenants) is validated and indexed again only after
// a GPU failed or was repaired; otherwise the last one is shared. Jobs: from the last
// cycle's snapshot plus what changed, when there is one on the same fleet; else every job.
core::Result<sched::ClusterSnapshot> Engine::build_snapshot() {
  std::map<core::TenantId, double> usage;
  for (std::size_t t = 0; t < usage_.size(); ++t) {
    const double u = usage_[t].value_at(at(now_ms_));
    if (u > 0) usage[result_.tenants[t].id] = u;
  }
  const auto list_of = [&](std::int32_t job) -> std::int8_t {
    const JobState state = jobs_[job].state;
    return state == JobState::kPending ? 1 : state == JobState::kRunning ? 2 : 0;
  };
  if (fleet_base_ && last_) {
    // A waiting job's dependency facts move while it stays pending: it is queued afresh.
    // So does a sweep trial's attained service (its sweep's, which runs on).
    for (const std::int32_t job : pending_) {
      if (!jobs_[job].depends_on.empty() || jobs_[job].sweep_trial) touch(job);
    }
    sched::JobsDelta delta{.usage = std::move(usage)};
    for (const std::int32_t job : touched_jobs_) {
      const core::JobId id = jobs_[job].request.id;
      if (snap_list_[job] == 2) delta.stopped.push_back(id);
      if (snap_list_[job] == 1) delta.dequeued.push_back(id);
      snap_list_[job] = list_of(job);
      if (snap_list_[job] == 2) {
        delta.started.push_back(running_job(jobs_[job], checkpoints_, runs_, now_ms_));
      }
      if (snap_list_[job] == 1) {
        delta.queued.push_back(pending_job(jobs_[job], jobs_, runs_, now_ms_));
      }
    }
    delta.progress.reserve(running_.size());
    for (const std::int32_t job : running_) {
      if (touched_[job]) continue;  // in `started`
      const ModelJob& j = jobs_[job];
      delta.progress.push_back({.id = j.request.id,
                                .last_checkpoint_at = last_checkpoint(j, checkpoints_, now_ms_),
                                .preemptions = j.preemptions,
                                .attained_gpu_seconds = attained_gpu_seconds(j, now_ms_)});
    }
    for (const std::int32_t job : touched_jobs_) touched_[job] = false;
    touched_jobs_.clear();
    auto snapshot = sched::rebuild_snapshot(std::move(*last_), std::move(delta));
    last_.reset();
    return snapshot;
  }
  for (const std::int32_t job : touched_jobs_) {
    snap_list_[job] = list_of(job);
    touched_[job] = false;
  }
  touched_jobs_.clear();
  last_.reset();
  if (!fleet_base_) {
    const FleetFacts fleet{.gpu_types = fleet_.gpu_types,
                           .nodes = nodes_,
                           .racks = fleet_.racks,
                           .tenants = result_.tenants,
                           .reservations = fleet_.reservations};
    auto snapshot = sched::build_snapshot(
        snapshot_from_fleet(fleet, usage, jobs_, checkpoints_, runs_, now_ms_));
    if (snapshot.ok()) fleet_base_ = *snapshot;
    return snapshot;
  }
  // The same jobs as snapshot_from_fleet() lists, on the fleet already indexed.
  sched::SnapshotInput in{.usage = std::move(usage)};
  in.running.reserve(running_.size());
  for (const std::int32_t job : running_) {
    in.running.push_back(running_job(jobs_[job], checkpoints_, runs_, now_ms_));
  }
  in.pending.reserve(pending_.size());
  for (const std::int32_t job : pending_)
    in.pending.push_back(pending_job(jobs_[job], jobs_, runs_, now_ms_));
  auto snapshot = sched::rebuild_snapshot(*fleet_base_, std::move(in));
  return snapshot;
}

// With preemption, backfill or starvation promotion, decide() may change its mind with
// no event at all: a running job passes min_runtime and becomes preemptible, a pending
// job reaches starvation_age, a running job outlives its estimate (which moves the
// backfill plan), a planned start comes due. The next such instant gets a cycle.
void Engine::schedule_wakeup(const sched::ClusterSnapshot& s, const sched::Decisions& d) {
  const bool waiting = !pending_.empty();
  const bool grow = growable();  // re-sizing needs nothing pending
  if (!time_dependent() || (!waiting && !grow)) return;
  const sched::SchedulerConfig& c = policy_.config;
  std::int64_t next = std::numeric_limits<std::int64_t>::max();
  const auto consider = [&](std::int64_t t) {
    if (t > now_ms_) next = std::min(next, t);
  };
  for (const sched::RunningJob& r : s.running()) {
    const std::int64_t start = to_ms(r.started_at);
    // A job may be preempted, or an elastic one shrunk, once it ran min_runtime.
    if (waiting && c.preemption.enabled) {
      consider(start + to_ms(c.preemption.min_runtime_for(r.request.tier)));
    }
    // A promise (backfill's head, or the starved job whose turn it is) rests on max runtimes.
    if (waiting && (c.backfill || c.starvation_age.count() > 0)) {
      consider(start + to_ms(r.request.max_runtime));
    }
  }
  if (waiting && c.starvation_age.count() > 0) {
    for (const sched::PendingJob& p : s.pending())
      consider(to_ms(p.queued_at) + to_ms(c.starvation_age));
  }
  for (const sched::PlannedStart& p : d.planned_starts) consider(to_ms(p.at));
  // The elastic allocator re-plans every period, as corrald's loop would run it.
  if (grow) consider(now_ms_ + to_ms(c.elastic_replan_period));
  if (next == std::numeric_limits<std::int64_t>::max() || !wakeups_.insert(next).second) return;
  push(next, EventKind::kWakeup);
}

core::Result<RunResult> Engine::run() {
  const auto wall0 = std::chrono::steady_clock::now();
  CORRAL_RETURN_IF_ERROR(prepare_jobs());
  if (jobs_.empty()) return result_;
  const std::int64_t origin = workload_.jobs.front().submit_ms;
  now_ms_ = origin;
  usage_as_of_ms_ = origin;
  result_.start_ms = origin;
  if (options_.failures) {
    for (std::int32_t n = 0; n < static_cast<std::int32_t>(nodes_.size()); ++n) {
      schedule_failure(n);
    }
  }
  for (const InjectedFailure& f : options_.injected_failures) {
    const auto it = node_ix_.find(f.node);
    if (it == node_ix_.end() || f.gpu < 0 ||
        f.gpu >= static_cast<std::int32_t>(nodes_[it->second].gpus.size())) {
      return core::invalid_argument("injected_failures",
                                    fmt::format("no GPU {}/{} in the fleet", f.node, f.gpu));
    }
    push(origin + to_ms(f.at), EventKind::kFailure, it->second, f.gpu);
  }
  const std::int64_t horizon = options_.horizon.count() > 0
                                   ? origin + to_ms(options_.horizon)
                                   : std::numeric_limits<std::int64_t>::max();
  std::size_t next_arrival = 0;
  while (next_arrival < jobs_.size() || live_events_ > 0) {
    const std::int64_t next_t =
        std::min(next_arrival < jobs_.size() ? workload_.jobs[next_arrival].submit_ms
                                             : std::numeric_limits<std::int64_t>::max(),
                 events_.empty() ? std::numeric_limits<std::int64_t>::max() : events_.top().t_ms);
    if (next_t > horizon) {
      // The run ends here: running attempts keep what they did (nothing stopped them).
      advance_to(horizon);
      for (const std::int32_t job : std::vector<std::int32_t>(running_.begin(), running_.end())) {
        account_kept(job);
        release(job);
        jobs_[job].state = JobState::kDone;
      }
      break;
    }
    // Arrivals come from the sorted workload; everything else from the event queue. At
    // one instant, queued events of kinds before kCycle go first.
    const bool take_arrival =
        next_arrival < jobs_.size() &&
        (events_.empty() || workload_.jobs[next_arrival].submit_ms < events_.top().t_ms ||
         (workload_.jobs[next_arrival].submit_ms == events_.top().t_ms &&
          events_.top().kind == EventKind::kCycle));
    if (take_arrival) {
      advance_to(workload_.jobs[next_arrival].submit_ms);
      arrive(static_cast<std::int32_t>(next_arrival++));
      continue;
    }
    const Event e = events_.top();
    events_.pop();
    // A stopped attempt's completion is stale; stop() already stopped counting it, so it
    // does not keep the run (and end_ms) going.
    const bool stale = e.kind == EventKind::kCompletion &&
                       (jobs_[e.a].state != JobState::kRunning || jobs_[e.a].generation != e.b);
    if (counts_as_live(e.kind) && !stale) --live_events_;
    advance_to(e.t_ms);
    switch (e.kind) {
      case EventKind::kCompletion:
        complete(e.a, e.b);
        break;
      case EventKind::kRung:
        judge_rung(e.a, e.b);
        break;
      case EventKind::kFailure:
        fail_gpu(e.a, e.b);
        break;
      case EventKind::kRepair:
        repair_gpu(e.a, e.b);
        break;
      case EventKind::kWakeup:
        wakeups_.erase(e.t_ms);
        placeable_change_ = true;
        request_cycle();
        break;
      case EventKind::kCycle:
        CORRAL_RETURN_IF_ERROR(cycle());
        break;
    }
  }
  result_.end_ms = now_ms_;
  accrue_usage();
  for (const core::Node& n : nodes_) {
    for (const core::Gpu& g : n.gpus) result_.accrual.gpus.push_back({n.id, g.index, g.type});
  }
  for (std::size_t job = 0; job < jobs_.size(); ++job) {
    result_.jobs[job].attempts = jobs_[job].attempts;
    result_.jobs[job].preemptions = jobs_[job].preemptions;
    result_.jobs[job].gpu_ms = jobs_[job].ended_gpu_ms;
  }
  for (std::size_t t = 0; t < tenant_live_.size(); ++t) {
    result_.backlog[result_.tenants[t].id] = tenant_live_[t].backlog;
  }
  result_.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return std::move(result_);
}

}  // namespace detail

core::Result<RunResult> simulate(const Fleet& fleet, const Workload& workload, const Policy& policy,
                                 const EngineOptions& options) {
  std::vector<core::TenantId> used;
  used.reserve(workload.jobs.size());
  for (const TraceJob& j : workload.jobs) used.push_back(j.tenant);
  CORRAL_ASSIGN_OR_RETURN(std::vector<core::Tenant> tenants, resolve_tenants(fleet, used));
  detail::Engine engine(fleet, workload, policy, options, std::move(tenants));
  return engine.run();
}

}  // namespace corral::sim
