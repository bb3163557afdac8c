#include "sim/snapshot_from_fleet.h"

#include <algorithm>

#include "sched/dependencies.h"

namespace corral::sim {
AttemptSplit split_attempt(std::int64_t held, std::int64_t restore, std::int64_t interval,
                           std::int64_t cost) {
  AttemptSplit s;
  s.restart = std::min(held, restore);
  const std::int64_t worked = held - s.restart;
  if (interval <= 0) {
    s.partial = worked;
    return s;
  }
  s.written = worked / (interval + cost);
  const std::int64_t rest = worked - s.written * (interval + cost);
  s.saved = s.written * interval;
  s.checkpoint = s.written * cost + std::max<std::int64_t>(0, rest - interval);
  s.partial = std::min(rest, interval);
  s.last_written_at = s.restart + s.written * (interval + cost);
  return s;
}

std::optional<core::Time> last_checkpoint(const ModelJob& j, const CheckpointModel& m,
                                          std::int64_t now_ms) {
  if (m.on_stop) return core::time_from_ms(now_ms);  // a stop loses nothing
  const AttemptSplit s = split_attempt(now_ms - j.run_start_ms, j.restore_ms,
                                       core::to_ms(j.request.checkpoint_interval), m.cost_ms);
  if (s.written == 0) return std::nullopt;
  return core::time_from_ms(j.run_start_ms + s.last_written_at);
}

double attained_gpu_seconds(const ModelJob& j, std::int64_t now_ms) {
  std::int64_t gpu_ms = j.ended_gpu_ms;
  if (j.state == JobState::kRunning) {
    // A share's service is its share of the GPU's time (as corrald's adapter counts it).
    gpu_ms += (now_ms - j.run_start_ms) *
              sched::gpu_milli_of(j.request, static_cast<std::int32_t>(j.gpus.size())) / 1000;
  }
  return static_cast<double>(gpu_ms) / 1000.0;
}

double sweep_attained_gpu_seconds(const ModelJob& j, const std::vector<ModelJob>& jobs,
                                  std::int64_t now_ms) {
  double total = 0;
  // An array's tasks are consecutive jobs, its first task's id naming it (id = index + 1).
  for (auto k = static_cast<std::size_t>(j.array_job.value - 1);
       k < jobs.size() && jobs[k].array_job == j.array_job; ++k) {
    total += attained_gpu_seconds(jobs[k], now_ms);
  }
  return total;
}

sched::RunningJob running_job(const ModelJob& j, const CheckpointModel& m, const RunHistory& runs,
                              std::int64_t now_ms) {
  return {.request = runs.with_estimate(j.request, j.name),
          .started_at = core::time_from_ms(j.run_start_ms),
          .last_checkpoint_at = last_checkpoint(j, m, now_ms),
          .preemptions = j.preemptions,
          .gpus = j.gpus,
          .borrowed = j.borrowed,
          .attained_gpu_seconds = attained_gpu_seconds(j, now_ms),
          .reservation = j.request.reservation};
}

namespace {

// One job's fact: started once it was placed, ended when done.
sched::DependencyFact fact_of(const ModelJob& j) {
  const bool ended = j.state == JobState::kDone;
  return {.job = j.request.id,
          .started = j.attempts > 0,
          .ended = ended,
          .succeeded = ended && !j.cancelled,
          .started_at = j.attempts > 0 ? core::time_from_ms(j.first_start_ms) : core::Time{},
          .ended_at = ended ? core::time_from_ms(j.ended_ms) : core::Time{}};
}

}  // namespace

std::vector<sched::DependencyFact> dependency_facts(const ModelJob& j,
                                                    const std::vector<ModelJob>& jobs) {
  std::vector<sched::DependencyFact> out;
  const auto job_at = [&](std::int64_t id) -> const ModelJob* {
    return id >= 1 && id <= static_cast<std::int64_t>(jobs.size()) ? &jobs[id - 1] : nullptr;
  };
  for (const core::Dependency& dep : j.depends_on) {
    const ModelJob* target = dep.id ? job_at(dep.id->value) : nullptr;
    std::optional<sched::DependencyFact> fact;
    if (target != nullptr && target->array_job == target->request.id) {
      // An array's tasks are consecutive from its first.
      std::vector<sched::DependencyFact> tasks;
      for (std::int64_t id = dep.id->value;
           job_at(id) != nullptr && job_at(id)->array_job == target->request.id; ++id) {
        const ModelJob& t = *job_at(id);
        if (!dep.elementwise) {
          tasks.push_back(fact_of(t));
        } else if (t.array_index == j.array_index) {
          fact = fact_of(t);
        }
      }
      if (!dep.elementwise) fact = sched::summed_fact(target->request.id, tasks);
    } else if (target != nullptr && !dep.elementwise) {
      fact = fact_of(*target);
    }
    // A job that is not there reads as ended, neither started nor succeeded (as corrald).
    if (!fact) fact = sched::DependencyFact{.job = dep.id.value_or(core::JobId(0)), .ended = true};
    fact->on = dep.on;
    out.push_back(*fact);
  }
  return out;
}

sched::PendingJob pending_job(const ModelJob& j, const std::vector<ModelJob>& jobs,
                              const RunHistory& runs, std::int64_t now_ms) {
  return {.request = runs.with_estimate(j.request, j.name),
          .queued_at = core::time_from_ms(j.queued_at_ms),
          .attempt = j.attempts,
          .preemptions = j.preemptions,
          .attained_gpu_seconds = j.sweep_trial ? sweep_attained_gpu_seconds(j, jobs, now_ms)
                                                : attained_gpu_seconds(j, now_ms),
          // A resized job restarts at once (Engine::resize), never through the queue.
          .resize_target = 0,
          .dependencies = dependency_facts(j, jobs)};
}

sched::SnapshotInput snapshot_from_fleet(const FleetFacts& fleet,
                                         const std::map<core::TenantId, double>& usage,
                                         const std::vector<ModelJob>& jobs,
                                         const CheckpointModel& m, const RunHistory& runs,
                                         std::int64_t now_ms) {
  sched::SnapshotInput in{.gpu_types = fleet.gpu_types,
                          .nodes = fleet.nodes,
                          .racks = fleet.racks,
                          .tenants = fleet.tenants,
                          .reservations = fleet.reservations};
  for (const auto& [tenant, u] : usage) {
    if (u > 0) in.usage[tenant] = u;
  }
  for (const ModelJob& j : jobs) {
    if (j.state == JobState::kRunning) in.running.push_back(running_job(j, m, runs, now_ms));
    if (j.state == JobState::kPending) in.pending.push_back(pending_job(j, jobs, runs, now_ms));
  }
  return in;
}

}  // namespace corral::sim
