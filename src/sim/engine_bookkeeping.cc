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

namespace corral::sim::detail {

void Engine::derive_ideal_levels() {
  max_domain_ = fleet_.max_nvlink_domain_gpus();
  max_node_ = fleet_.max_node_gpus();
  std::map<std::string, std::int32_t> leaf, spine;
  for (const core::Node& n : nodes_) {
    const auto g = static_cast<std::int32_t>(n.gpus.size());
    max_leaf_ = std::max(max_leaf_, leaf[n.labels.leaf] += g);
    max_spine_ = std::max(max_spine_, spine[n.labels.spine] += g);
  }
}

core::PackLevel Engine::ideal_level(std::int32_t gpus) const {
  if (gpus <= max_domain_) return core::PackLevel::kNvlink;
  if (gpus <= max_node_) return core::PackLevel::kNode;
  if (gpus <= max_leaf_) return core::PackLevel::kLeaf;
  if (gpus <= max_spine_) return core::PackLevel::kSpine;
  return core::PackLevel::kNone;
}

// The product of the factors of every level from just above `wanted` up to `packed`.
double Engine::slowdown(core::PackLevel wanted, core::PackLevel packed) const {
  const RuntimeModel& m = options_.runtime;
  const double factor[] = {1.0, m.beyond_nvlink, m.beyond_node, m.beyond_leaf, m.beyond_spine};
  double f = 1.0;
  for (int level = static_cast<int>(wanted) + 1; level <= static_cast<int>(packed); ++level) {
    f *= factor[level];
  }
  return f;
}

void Engine::accrue_usage() {
  if (now_ms_ <= usage_as_of_ms_) return;
  const double dt_s = static_cast<double>(now_ms_ - usage_as_of_ms_) / 1000.0;
  for (std::size_t t = 0; t < usage_.size(); ++t) {
    if (usage_rate_[t] > 0) usage_[t].add(usage_rate_[t] * dt_s, at(now_ms_));
  }
  usage_as_of_ms_ = now_ms_;
}

// Moves virtual time forward, integrating allocated and usable GPUs over the step.
void Engine::advance_to(std::int64_t t_ms) {
  CORRAL_CHECK(t_ms >= now_ms_);
  result_.allocated_gpu_ms += static_cast<std::int64_t>(allocated_) * (t_ms - now_ms_);
  result_.usable_gpu_ms += static_cast<std::int64_t>(usable_gpus_) * (t_ms - now_ms_);
  result_.idle_waiting_gpu_ms += static_cast<std::int64_t>(idle_waiting_) * (t_ms - now_ms_);
  if (backlogged_ > 0 && t_ms > now_ms_) {
    const auto dt = static_cast<double>(t_ms - now_ms_);
    for (std::size_t t = 0; t < tenant_live_.size(); ++t) {
      TenantLive& live = tenant_live_[t];
      if (live.pending == 0) continue;
      live.backlog.backlogged_ms += t_ms - now_ms_;
      live.backlog.held_gpu_ms += static_cast<double>(live.held) * dt;
      // Its weighted share of the fleet among the tenants that have work right now.
      live.backlog.fair_gpu_ms +=
          static_cast<double>(result_.total_gpus) * result_.tenants[t].weight / active_weight_ * dt;
    }
  }
  now_ms_ = t_ms;
}

void Engine::pending_delta(std::int32_t tenant, std::int32_t delta) {
  TenantLive& live = tenant_live_[tenant];
  const bool was = live.pending > 0;
  live.pending += delta;
  backlogged_ += (live.pending > 0 ? 1 : 0) - (was ? 1 : 0);
}

void Engine::set_held(std::int32_t job, bool held) {
  if (held_.size() < jobs_.size()) held_.resize(jobs_.size());
  if (held_[job] == held) return;
  held_[job] = held;
  const std::int32_t delta = held ? -1 : +1;
  pending_delta(jobs_[job].tenant, delta);
  active_delta(jobs_[job].tenant, delta);
}

void Engine::active_delta(std::int32_t tenant, std::int32_t delta) {
  TenantLive& live = tenant_live_[tenant];
  if (live.active == 0 && delta > 0) active_weight_ += result_.tenants[tenant].weight;
  live.active += delta;
  if (live.active == 0) active_weight_ -= result_.tenants[tenant].weight;
}

void Engine::release(std::int32_t job, std::int64_t lost_ms) {
  ModelJob& j = jobs_[job];
  JobResult& out = result_.jobs[job];
  accrue_usage();
  for (const sched::GpuRef& g : j.gpus) {
    result_.accrual.holds.push_back(
        {.node = g.node,
         .index = g.index,
         .job = j.request.id,
         .attempt = j.attempts,
         .tenant = j.request.tenant,
         .preemptible = j.request.preemptible,
         .start = core::time_from_ms(j.run_start_ms),
         .end = core::time_from_ms(now_ms_),
         .overhead = core::Duration(std::min(j.restore_ms, now_ms_ - j.run_start_ms)),
         .lost_from =
             lost_ms > 0 ? std::optional(core::time_from_ms(now_ms_ - lost_ms)) : std::nullopt});
  }
  const std::int64_t held_ms = now_ms_ - j.run_start_ms;
  const auto gpus = static_cast<std::int64_t>(j.gpus.size());
  out.run_ms += held_ms;
  j.ended_gpu_ms += held_ms * gpus;
  result_.tenant_gpu_ms[j.request.tenant][j.type] += held_ms * gpus;
  usage_rate_[j.tenant] -= static_cast<double>(gpus) * usage_factor_[j.type];
  tenant_live_[j.tenant].held -= gpus;
  for (const sched::GpuRef& g : j.gpus) {
    const std::int32_t node = node_ix_.at(g.node.value);
    CORRAL_CHECK(owner_[node][g.index] == job);
    owner_[node][g.index] = -1;
    if (nodes_[node].gpus[g.index].healthy) ++free_by_type_[node_type_[node]];
  }
  allocated_ -= static_cast<std::int32_t>(gpus);
  j.gpus.clear();
  touch(job);
  running_.erase(job);
  placeable_change_ = true;
}

AttemptSplit Engine::split_running(std::int32_t job) const {
  const ModelJob& j = jobs_[job];
  return split_attempt(now_ms_ - j.run_start_ms, j.restore_ms, to_ms(j.request.checkpoint_interval),
                       checkpoints_.cost_ms);
}

void Engine::account_kept(std::int32_t job) {
  const AttemptSplit s = split_running(job);
  JobResult& out = result_.jobs[job];
  out.productive_ms += s.saved + s.partial;
  out.checkpoint_ms += s.checkpoint;
  out.restart_ms += s.restart;
}

void Engine::record_run(std::int32_t job) {
  const auto key = std::make_pair(jobs_[job].request.tenant, jobs_[job].name);
  const auto others = same_name_.find(key);
  if (others == same_name_.end()) return;  // no other job could use the estimate
  runs_.add_latest(key.first, key.second, core::Duration(result_.jobs[job].run_ms));
  for (const std::int32_t other : others->second) {
    const JobState s = jobs_[other].state;
    if (s == JobState::kPending || s == JobState::kRunning) touch(other);
  }
}

// What the scheduler left idle while work waited that could have used it: after a cycle
// (run or skipped), per GPU type and region, the free healthy GPUs, up to the GPUs of the
// pending jobs that would fit them: the type is acceptable, the region theirs, their
// tenant's quota admits them, and a fixed split (gpus_per_node) finds enough nodes with
// that many free. Topology beyond the split is not asked (trace jobs only prefer it), so
// this is an upper bound on what placement could have used. GPUs a planned start holds
// count: that is the promise's cost. Held until the next cycle: GPUs freed between
// cycles count from the cycle that sees them.
std::int32_t Engine::idle_while_waiting() const {
  if (pending_.empty() ||
      *pending_sizes_.begin() > *std::max_element(free_by_type_.begin(), free_by_type_.end())) {
    return 0;
  }
  // Free GPUs per node, and per (type, region) with a histogram of nodes by free count.
  struct Pool {
    std::int32_t free = 0;
    std::map<std::int32_t, std::int32_t> nodes_by_free;
    std::int64_t wanted = 0;  // GPUs of fitting pending jobs
  };
  std::map<std::pair<std::int32_t, std::string>, Pool> pools;
  for (std::size_t n = 0; n < nodes_.size(); ++n) {
    std::int32_t free = 0;
    for (std::size_t g = 0; g < owner_[n].size(); ++g) {
      free += owner_[n][g] < 0 && nodes_[n].gpus[g].healthy ? 1 : 0;
    }
    if (free == 0) continue;
    Pool& pool = pools[{node_type_[n], nodes_[n].labels.region}];
    pool.free += free;
    ++pool.nodes_by_free[free];
  }
  // What each tenant holds of each type, for its quota.
  std::map<std::pair<std::int32_t, core::GpuTypeId>, std::int64_t> held;
  for (const std::int32_t job : running_) {
    held[{jobs_[job].tenant, jobs_[job].type}] += static_cast<std::int64_t>(jobs_[job].gpus.size());
  }
  for (const std::int32_t job : pending_) {
    if (job < static_cast<std::int32_t>(held_.size()) && held_[job]) continue;
    const ModelJob& j = jobs_[job];
    const std::int32_t gpus = least_gpus(j);
    const core::Tenant& tenant = result_.tenants[j.tenant];
    for (auto& [key, pool] : pools) {
      const core::GpuTypeId& type = fleet_.gpu_types[key.first].id;
      if (pool.wanted >= pool.free || pool.free < gpus) continue;
      if (!j.request.region.empty() && j.request.region != key.second) continue;
      if (!j.request.gpu_types.empty() &&
          std::find(j.request.gpu_types.begin(), j.request.gpu_types.end(), type) ==
              j.request.gpu_types.end()) {
        continue;
      }
      const auto it = held.find({j.tenant, type});
      if (1000 * ((it == held.end() ? 0 : it->second) + gpus) >
          tenant.quota_for(type).max_total_milli()) {
        continue;
      }
      if (const std::int32_t per_node = j.request.gpus_per_node; per_node > 0) {
        std::int32_t nodes = 0;
        for (auto n = pool.nodes_by_free.lower_bound(per_node); n != pool.nodes_by_free.end();
             ++n) {
          nodes += n->second;
        }
        if (nodes < gpus / per_node) continue;
      }
      pool.wanted += gpus;
      break;
    }
  }
  std::int64_t idle = 0;
  for (const auto& [key, pool] : pools) idle += std::min<std::int64_t>(pool.free, pool.wanted);
  return static_cast<std::int32_t>(idle);
}

void Engine::record_sample() {
  idle_waiting_ = idle_while_waiting();
  result_.timeline.push_back({.t_ms = now_ms_,
                              .allocated_gpus = allocated_,
                              .usable_gpus = usable_gpus_,
                              .running_jobs = static_cast<std::int32_t>(running_.size()),
                              .pending_jobs = static_cast<std::int32_t>(pending_.size()),
                              .pending_gpus = pending_gpus_});
}

}  // namespace corral::sim::detail
