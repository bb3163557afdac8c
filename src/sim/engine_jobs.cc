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
#include "sched/asha.h"
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

namespace corral::sim::detail {

core::Status Engine::prepare_jobs() {
  if (options_.whole_nodes_above < 0 || options_.whole_nodes_above > fleet_.max_node_gpus()) {
    return core::invalid_argument(
        "whole_nodes_above",
        fmt::format("must be between 0 and the largest node's GPUs ({}), got {}",
                    fleet_.max_node_gpus(), options_.whole_nodes_above));
  }
  std::set<core::GpuTypeId> types;
  for (const core::GpuType& t : fleet_.gpu_types) types.insert(t.id);
  const auto regions = assign_regions(fleet_, workload_.jobs, options_.seed);
  if (!regions.ok()) {
    return core::invalid_argument(
        regions.status().field(),
        fmt::format("{}: {}", workload_.source, regions.status().message()));
  }
  jobs_.resize(workload_.jobs.size());
  result_.jobs.resize(workload_.jobs.size());
  snap_list_.assign(jobs_.size(), 0);
  touched_.assign(jobs_.size(), false);
  checkpoints_ = {.cost_ms = to_ms(options_.runtime.checkpoint_cost),
                  .on_stop = options_.runtime.checkpoint_on_stop};
  for (std::size_t i = 0; i < workload_.jobs.size(); ++i) {
    const TraceJob& t = workload_.jobs[i];
    ModelJob& j = jobs_[i];
    sched::JobRequest& r = j.request;
    r.id = core::JobId(static_cast<std::int64_t>(i) + 1);
    r.tenant = t.tenant;
    j.name = t.name;
    same_name_[{t.tenant, t.name}].push_back(static_cast<std::int32_t>(i));
    j.tenant = tenant_ix_.at(t.tenant);
    r.gpus = t.gpus;
    r.gpus_per_node = t.gpus_per_node;
    r.region = (*regions)[i];
    if (!t.gpu_type.empty()) {
      if (!types.count(core::GpuTypeId(t.gpu_type))) {
        return core::invalid_argument(
            "gpu_type", fmt::format("{}: job {} asks for GPU type '{}' which the fleet lacks",
                                    workload_.source, t.name, t.gpu_type));
      }
      r.gpu_types.emplace_back(t.gpu_type);
    }
    // A trace does not say how its jobs wanted to be packed; each asks for the tightest
    // level the fleet could give it, as a preference, so decide() places it there when it
    // can and wider when it cannot (and the runtime model charges for that).
    const core::PackLevel wanted = ideal_level(t.gpus);
    r.topology = {.pack = wanted, .mode = core::TopologyMode::kPreferred};
    r.max_runtime = core::Duration(std::max<std::int64_t>(
        1000, std::llround(static_cast<double>(t.duration_ms) * options_.runtime.estimate_factor)));
    r.tier = t.tier;
    if (sched::is_session(r)) r.user = t.user;  // as corrald's adapter: only sessions carry one
    r.checkpoint_interval = t.checkpoint_interval_ms >= 0 ? core::Duration(t.checkpoint_interval_ms)
                                                          : options_.runtime.checkpoint_interval;
    r.preemptible = policy_.jobs_preemptible || t.preemptible;
    if (t.profile) CORRAL_RETURN_IF_ERROR(check_profile_types(*t.profile, fleet_, t.name));
    if (policy_.jobs_elastic) {
      if (!t.profile) {
        return core::invalid_argument(
            "policy", fmt::format("{}: {} submits jobs elastic, but job {} has no run-time "
                                  "profile to say how its run time changes with its size "
                                  "(only --workload-format pollux has one)",
                                  workload_.source, policy_.name, t.name));
      }
      if (t.elastic_profile && t.elastic_max_gpus > t.elastic_min_gpus) {
        r.elastic = core::ElasticRange{
            .min_gpus = t.elastic_min_gpus,
            .max_gpus = t.elastic_max_gpus,
            .scaling = fleet_scaling_curve(*t.elastic_profile, fleet_, t.elastic_min_gpus,
                                           t.elastic_max_gpus)};
        r.scaling_by_type = scaling_curves_by_type(*t.elastic_profile, fleet_, t.elastic_min_gpus,
                                                   t.elastic_max_gpus);
      }
    }
    // How fast the job runs on each type, from the profile it runs with, at its
    // starting size (Policy::gpu_speed).
    if (const RuntimeProfile* profile = r.elastic ? t.elastic_profile.get() : t.profile.get();
        policy_.gpu_speed && profile != nullptr) {
      r.gpu_speed = gpu_speed(*profile, fleet_, r.elastic ? r.elastic->max_gpus : t.gpus);
    }
    r.restore_time = options_.runtime.restore_time;
    // Whole nodes (EngineOptions::whole_nodes_above); an elastic job's sizes vary.
    const std::int32_t whole = options_.whole_nodes_above;
    const bool big = t.gpus > whole || (options_.whole_nodes_including && t.gpus == whole);
    if (whole > 0 && r.gpus_per_node == 0 && !r.elastic && big && t.gpus % whole == 0) {
      r.gpus_per_node = whole;
    }
    // Workflows: the array's id is its first task's, a step names the job before it.
    if (t.array_index >= 0) {
      j.array_job = core::JobId(static_cast<std::int64_t>(i) + 1 - t.array_index);
      j.array_index = t.array_index;
      if (t.array_max_running > 0) r.array = sched::ArrayLimit{j.array_job, t.array_max_running};
    }
    if (t.after > 0) {
      j.depends_on.push_back({.id = core::JobId(static_cast<std::int64_t>(i) + 1 - t.after),
                              .on = core::DependencyCondition::kSuccess});
    }
    j.sweep_trial = t.trial != nullptr;
    j.remaining_work_ms = t.duration_ms;
    JobResult& out = result_.jobs[i];
    out.name = t.name;
    out.tenant = t.tenant;
    out.gpus = t.gpus;
    out.submit_ms = t.submit_ms;
    out.duration_ms = t.duration_ms;
    out.wanted = wanted;
    out.region = r.region;
  }
  std::erase_if(same_name_, [](const auto& entry) { return entry.second.size() < 2; });
  return core::ok_status();
}

void Engine::enqueue(std::int32_t job) {
  ModelJob& j = jobs_[job];
  j.state = JobState::kPending;
  j.queued_at_ms = now_ms_;
  touch(job);
  pending_.insert(job);
  pending_sizes_.insert(least_gpus(j));
  pending_gpus_ += j.request.gpus;
  pending_delta(j.tenant, 1);
  request_cycle();
}

void Engine::arrive(std::int32_t job) {
  active_delta(jobs_[job].tenant, 1);
  placeable_change_ = true;
  enqueue(job);
}

void Engine::complete(std::int32_t job, std::int32_t generation) {
  ModelJob& j = jobs_[job];
  if (j.state != JobState::kRunning || j.generation != generation) return;  // stale
  account_kept(job);
  release(job);
  j.state = JobState::kDone;
  j.ended_ms = now_ms_;
  j.remaining_work_ms = 0;
  active_delta(j.tenant, -1);
  result_.jobs[job].finish_ms = now_ms_;
  record_run(job);
  request_cycle();
}

void Engine::stop_and_requeue(std::int32_t job) {
  stop(job, options_.runtime.checkpoint_on_stop);
  enqueue(job);
}

void Engine::stop(std::int32_t job, bool checkpoints_on_stop) {
  ModelJob& j = jobs_[job];
  --live_events_;  // its completion event is stale from now on
  JobResult& out = result_.jobs[job];
  // Wall time spent working (after the restore), and the part saved by the checkpoints
  // written in it (or all of it, when a stop checkpoints on the way out).
  AttemptSplit s = split_running(job);
  if (checkpoints_on_stop) {
    s.saved += s.partial;
    s.partial = 0;
  }
  const auto saved_work = static_cast<std::int64_t>(static_cast<double>(s.saved) / j.slowdown);
  j.remaining_work_ms = std::max<std::int64_t>(1, j.remaining_work_ms - saved_work);
  // Held time that left nothing behind: the restore, the lost work, an unfinished write.
  const std::int64_t wasted =
      now_ms_ - j.run_start_ms - s.saved - s.written * to_ms(options_.runtime.checkpoint_cost);
  out.lost_gpu_ms += wasted * static_cast<std::int64_t>(j.gpus.size());
  out.productive_ms += s.saved;
  out.lost_ms += s.partial;
  out.checkpoint_ms += s.checkpoint;
  out.restart_ms += s.restart;
  release(job, s.partial);
}

void Engine::dequeue(std::int32_t job) {
  set_held(job, false);
  const ModelJob& j = jobs_[job];
  pending_.erase(job);
  pending_sizes_.erase(pending_sizes_.find(least_gpus(j)));
  pending_gpus_ -= j.request.gpus;
  pending_delta(j.tenant, -1);
}

core::Status Engine::start(const sched::Placement& p) {
  const auto job = static_cast<std::int32_t>(p.job.value - 1);
  if (job < 0 || job >= static_cast<std::int32_t>(jobs_.size()) ||
      jobs_[job].state != JobState::kPending) {
    return core::internal_error(
        fmt::format("placement of job {} which is not pending", p.job.value));
  }
  dequeue(job);
  return launch(job, p.gpus, p.gpu_type, p.borrowed, p.packed);
}

core::Status Engine::abandon(const sched::Abandoned& a) {
  const auto job = static_cast<std::int32_t>(a.job.value - 1);
  if (job < 0 || job >= static_cast<std::int32_t>(jobs_.size()) ||
      jobs_[job].state != JobState::kPending) {
    return core::internal_error(fmt::format("abandoned job {} which is not pending", a.job.value));
  }
  dequeue(job);
  ModelJob& j = jobs_[job];
  active_delta(j.tenant, -1);
  touch(job);
  j.state = JobState::kDone;
  j.cancelled = true;
  j.ended_ms = now_ms_;
  result_.jobs[job].finish_ms = now_ms_;
  result_.jobs[job].last_reason = a.reason;
  request_cycle();
  return core::ok_status();
}

core::Status Engine::launch(std::int32_t job, const std::vector<sched::GpuRef>& gpu_refs,
                            const core::GpuTypeId& type, bool borrowed, core::PackLevel packed) {
  ModelJob& j = jobs_[job];
  JobResult& out = result_.jobs[job];
  const sched::Placement p{.job = j.request.id, .gpu_type = type, .gpus = gpu_refs};
  // The store's unique constraint, in the simulator: a GPU has one owner at a time.
  for (const sched::GpuRef& g : p.gpus) {
    const auto it = node_ix_.find(g.node.value);
    if (it == node_ix_.end() || g.index < 0 ||
        g.index >= static_cast<std::int32_t>(owner_[it->second].size())) {
      return core::internal_error(
          fmt::format("job {} placed on unknown GPU {}/{}", p.job.value, g.node.value, g.index));
    }
    if (owner_[it->second][g.index] >= 0) {
      return core::internal_error(fmt::format("GPU {}/{} given to job {} while job {} holds it",
                                              g.node.value, g.index, p.job.value,
                                              owner_[it->second][g.index] + 1));
    }
    if (!nodes_[it->second].gpus[g.index].healthy) {
      return core::internal_error(
          fmt::format("job {} placed on unhealthy GPU {}/{}", p.job.value, g.node.value, g.index));
    }
  }
  accrue_usage();
  for (const sched::GpuRef& g : p.gpus) owner_[node_ix_.at(g.node.value)][g.index] = job;
  touch(job);
  running_.insert(job);
  j.state = JobState::kRunning;
  j.gpus = p.gpus;
  j.type = p.gpu_type;
  j.borrowed = borrowed;
  j.run_start_ms = now_ms_;
  j.restore_ms = to_ms(options_.runtime.start_time) +
                 (j.attempts > 0 && j.request.checkpoint_interval.count() > 0
                      ? to_ms(options_.runtime.restore_time)
                      : 0);
  j.slowdown = slowdown(out.wanted, packed);
  const TraceJob& trace = workload_.jobs[job];
  if (const RuntimeProfile* profile =
          j.request.elastic ? trace.elastic_profile.get() : trace.profile.get()) {
    // The job's own model: its time at these GPUs per node against its trace duration.
    // Work is tracked as a fraction of the whole job, so a job that changes size runs its
    // remaining fraction at the new placement's whole-job average rate (for an elastic
    // Pollux job, averaged over all its epochs, not the epochs it has left).
    std::vector<std::int32_t> per_node;
    for (std::size_t i = 0; i < p.gpus.size(); ++i) {
      if (i == 0 || p.gpus[i].node != p.gpus[i - 1].node) per_node.push_back(0);
      ++per_node.back();
    }
    j.slowdown = profile->seconds(p.gpu_type, per_node) * 1000.0 /
                 static_cast<double>(workload_.jobs[job].duration_ms);
  }
  ++j.generation;
  const auto gpus = static_cast<std::int32_t>(p.gpus.size());
  allocated_ += gpus;
  free_by_type_[node_type_[node_ix_.at(p.gpus.front().node.value)]] -= gpus;
  usage_rate_[j.tenant] += gpus * usage_factor_[p.gpu_type];
  tenant_live_[j.tenant].held += gpus;
  if (out.start_ms < 0) out.start_ms = now_ms_;
  if (j.attempts == 0) j.first_start_ms = now_ms_;
  ++j.attempts;
  out.gpu_type = p.gpu_type.value;
  out.packed = packed;
  out.slowdown = j.slowdown;
  const auto run_ms = std::max<std::int64_t>(
      1,
      static_cast<std::int64_t>(std::ceil(static_cast<double>(j.remaining_work_ms) * j.slowdown)));
  // A checkpoint after each full interval of work that ends before the job does.
  const std::int64_t interval = to_ms(j.request.checkpoint_interval);
  const std::int64_t writes = interval > 0 ? (run_ms - 1) / interval : 0;
  push(now_ms_ + j.restore_ms + run_ms + writes * checkpoints_.cost_ms, EventKind::kCompletion, job,
       j.generation);
  schedule_rung(job);
  return core::ok_status();
}

void Engine::schedule_rung(std::int32_t job) {
  const ModelJob& j = jobs_[job];
  const SweepTrial* trial = workload_.jobs[job].trial.get();
  if (!options_.early_stopping || trial == nullptr || !trial->asha) return;
  const std::vector<std::int64_t> rungs = core::rung_steps(*trial->asha);
  if (j.rungs_passed >= static_cast<std::int32_t>(rungs.size())) return;
  // Work is in milliseconds of the trace's run time; a rung is its step's share of it.
  // Counted from the attempt's start, where remaining_work_ms stands until a stop.
  const std::int64_t duration = workload_.jobs[job].duration_ms;
  const auto rung_work = static_cast<std::int64_t>(
      std::ceil(static_cast<double>(duration) * static_cast<double>(rungs[j.rungs_passed]) /
                static_cast<double>(trial->steps)));
  const std::int64_t left = std::max<std::int64_t>(0, rung_work - (duration - j.remaining_work_ms));
  const auto run_ms = static_cast<std::int64_t>(std::ceil(static_cast<double>(left) * j.slowdown));
  const std::int64_t interval = to_ms(j.request.checkpoint_interval);
  const std::int64_t writes = interval > 0 && run_ms > 0 ? (run_ms - 1) / interval : 0;
  push(j.run_start_ms + j.restore_ms + run_ms + writes * checkpoints_.cost_ms, EventKind::kRung,
       job, j.generation);
}

void Engine::judge_rung(std::int32_t job, std::int32_t generation) {
  ModelJob& j = jobs_[job];
  if (j.state != JobState::kRunning || j.generation != generation) return;  // stopped since
  const SweepTrial& trial = *workload_.jobs[job].trial;
  const std::vector<std::int64_t> rungs = core::rung_steps(*trial.asha);
  auto& by_rung = rung_values_[j.array_job.value];
  by_rung.resize(rungs.size());
  std::vector<double>& earlier = by_rung[j.rungs_passed];
  const double value = trial.value_at(rungs[j.rungs_passed]);
  const sched::RungVerdict v =
      sched::judge_rung(earlier, value, core::MetricGoal::kMinimize, trial.asha->reduction_factor);
  earlier.push_back(value);
  if (v.continues) {
    ++j.rungs_passed;
    schedule_rung(job);
    return;
  }
  // Stopped, as corrald cancels it: its work so far counts (it answered what was asked of
  // it), its GPUs go back to the queue.
  stop(job, /*checkpoints_on_stop=*/true);
  j.state = JobState::kDone;
  j.ended_ms = now_ms_;
  j.cancelled = true;
  j.stopped_early = true;
  active_delta(j.tenant, -1);
  result_.jobs[job].finish_ms = now_ms_;
  result_.jobs[job].stopped_early = true;
  request_cycle();
}

core::Status Engine::resize(const sched::Resize& r) {
  const auto job = static_cast<std::int32_t>(r.job.value - 1);
  if (job < 0 || job >= static_cast<std::int32_t>(jobs_.size()) ||
      jobs_[job].state != JobState::kRunning || !jobs_[job].request.elastic) {
    return core::internal_error(
        fmt::format("t={} ms: resize of job {}, which is not a running "
                    "elastic job",
                    now_ms_, r.job.value));
  }
  // corrald asks the job to checkpoint and stop, then places it again at the new size;
  // here it restarts at once on the GPUs decide() named (a subset when it shrinks, a
  // superset when it grows; sched::check() verified that), paying the start-up cost.
  const ModelJob& j = jobs_[job];
  const core::GpuTypeId type = j.type;
  const bool borrowed = j.borrowed;
  const core::PackLevel packed = result_.jobs[job].packed;
  // A resize goes through the job's own checkpoint (the elastic contract: corrald asks it
  // to checkpoint and stop), so it keeps all its work in either world.
  ++result_.jobs[job].resizes;
  stop(job, true);
  CORRAL_RETURN_IF_ERROR(launch(job, r.gpus, type, borrowed, packed));
  result_.jobs[job].resize_restart_gpu_ms +=
      jobs_[job].restore_ms * static_cast<std::int64_t>(r.gpus.size());
  return core::ok_status();
}

bool Engine::growable() const {
  if (!policy_.jobs_elastic || !policy_.config.elastic_growth) return false;
  std::map<std::int32_t, std::int32_t> elastic_by_type;
  for (const std::int32_t job : running_) {
    const ModelJob& j = jobs_[job];
    if (!j.request.elastic) continue;
    const std::int32_t type = node_type_[node_ix_.at(j.gpus.front().node.value)];
    if (++elastic_by_type[type] >= 2) return true;
    if (static_cast<std::int32_t>(j.gpus.size()) < j.request.elastic->max_gpus &&
        free_by_type_[type] > 0) {
      return true;
    }
  }
  return false;
}

}  // namespace corral::sim::detail
