#include "testing/mini_cluster.h"

#include <algorithm>
#include <cstdio>

#include "core/check.h"

namespace corral::testing {

void MiniCluster::submit(sched::PendingJob job, core::Duration runtime) {
  // Tenants named by jobs join with weight 1 and no quota limit, as in FleetBuilder.
  const bool known = std::any_of(state_.tenants.begin(), state_.tenants.end(),
                                 [&](const core::Tenant& t) { return t.id == job.request.tenant; });
  if (!known) state_.tenants.push_back({.id = job.request.tenant});
  remaining_[job.request.id] = std::min(runtime, job.request.max_runtime);
  state_.pending.push_back(std::move(job));
}

sched::Decisions MiniCluster::step(const sched::SchedulerConfig& config, core::Time now,
                                   std::vector<std::string>& violations) {
  // 1. Progress since the last step: work done, checkpoints taken, jobs finished.
  const core::Duration elapsed = now - last_step_;
  last_step_ = now;
  std::erase_if(state_.running, [&](sched::RunningJob& r) {
    core::Duration& left = remaining_[r.request.id];
    left -= std::min(left, elapsed);
    const core::Duration interval = r.request.checkpoint_interval;
    if (interval.count() > 0) {
      const auto done = (now - r.started_at) / interval;
      r.last_checkpoint_at = r.started_at + done * interval;
    }
    if (left.count() > 0) return false;
    finished_[r.request.id] = now;
    return true;
  });

  // 2. Decide on the current state.
  auto snapshot = sched::build_snapshot(state_);
  if (!snapshot.ok())
    std::fprintf(stderr, "MiniCluster: %s\n", snapshot.status().to_string().c_str());
  CORRAL_CHECK(snapshot.ok());
  sched::Decisions d = sched::decide(*snapshot, config, now);
  for (std::string& v : sched::check(*snapshot, d, config, now)) violations.push_back(std::move(v));

  // 3. Apply: victims back to the queue, resizes, then placements.
  std::map<core::JobId, const sched::PendingJob*> pending;
  for (const auto& p : state_.pending) pending[p.request.id] = &p;
  std::vector<sched::PendingJob> requeued;
  for (const sched::Preemption& p : d.preemptions) {
    const auto it = std::find_if(state_.running.begin(), state_.running.end(),
                                 [&](const auto& r) { return r.request.id == p.victim; });
    CORRAL_CHECK(it != state_.running.end());
    const core::Time since = it->last_checkpoint_at.value_or(it->started_at);
    const double lost_s = static_cast<double>((now - since).count()) / 1000.0;
    lost_gpu_seconds_ += lost_s * static_cast<double>(it->gpus.size());
    remaining_[p.victim] += now - since + it->request.restore_time;
    ++preemptions_;
    requeued.push_back({.request = it->request,
                        .queued_at = now,
                        .preemptions = it->preemptions + 1,
                        .attained_gpu_seconds = it->attained_gpu_seconds});
    state_.running.erase(it);
  }
  for (const sched::Resize& r : d.resizes) {
    for (auto& run : state_.running) {
      if (run.request.id == r.job) run.gpus = r.gpus;
    }
  }
  for (const sched::Placement& p : d.placements) {
    const sched::PendingJob& job = *pending.at(p.job);
    first_start_.emplace(p.job, now);
    state_.running.push_back({.request = job.request,
                              .started_at = now,
                              .preemptions = job.preemptions,
                              .gpus = p.gpus,
                              .borrowed = p.borrowed,
                              .attained_gpu_seconds = job.attained_gpu_seconds,
                              .reservation = p.reservation});
    // Resized elastic jobs restart too; keep the request's size in step with the GPUs.
    state_.running.back().request.gpus = static_cast<std::int32_t>(p.gpus.size());
  }
  std::erase_if(state_.pending, [&](const sched::PendingJob& p) {
    return std::any_of(d.placements.begin(), d.placements.end(),
                       [&](const sched::Placement& pl) { return pl.job == p.request.id; });
  });
  for (auto& r : requeued) state_.pending.push_back(std::move(r));
  return d;
}

}  // namespace corral::testing
