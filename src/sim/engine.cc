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
#include "sim/profile_facts.h"
#include "sim/rng.h"
#include "sim/snapshot_from_fleet.h"
#include "sim/traces/pollux.h"

namespace corral::sim {
namespace {

// Events at the same instant run in this order: GPUs are freed (completions, repairs)
// and taken away (failures) before new work arrives, and the cycle sees all of it.
enum class EventKind : std::int32_t { kCompletion, kFailure, kRepair, kWakeup, kCycle };

struct Event {
  std::int64_t t_ms;
  EventKind kind;
  std::int64_t seq;  // insertion order: a deterministic tie-break
  std::int32_t a;    // job (completion), node (failure, repair)
  std::int32_t b;    // generation (completion), GPU index (repair)

  bool operator>(const Event& o) const {
    if (t_ms != o.t_ms) return t_ms > o.t_ms;
    if (kind != o.kind) return kind > o.kind;
    return seq > o.seq;
  }
};

using core::to_ms;

core::Time at(std::int64_t ms) { return core::time_from_ms(ms); }

class Engine {
 public:
  Engine(const Fleet& fleet, const Workload& workload, const Policy& policy,
         const EngineOptions& options, std::vector<core::Tenant> tenants)
      : fleet_(fleet),
        workload_(workload),
        policy_(policy),
        options_(options),
        nodes_(fleet.nodes),
        rng_(options.seed) {
    result_.policy = policy.name;
    result_.tenants = std::move(tenants);
    result_.total_gpus = fleet.total_gpus();
    for (std::size_t i = 0; i < result_.tenants.size(); ++i) {
      const core::Tenant& t = result_.tenants[i];
      tenant_ix_[t.id] = static_cast<std::int32_t>(i);
      usage_.emplace_back(policy.config.usage_half_life);
      usage_rate_.push_back(0);
      tenant_live_.push_back({});
    }
    for (const core::GpuType& t : fleet.gpu_types) usage_factor_[t.id] = t.usage_factor;
    for (std::size_t n = 0; n < nodes_.size(); ++n) {
      node_ix_[nodes_[n].id.value] = static_cast<std::int32_t>(n);
      owner_.emplace_back(nodes_[n].gpus.size(), -1);
      usable_gpus_ += static_cast<std::int32_t>(nodes_[n].gpus.size());
    }
    for (const core::Node& n : nodes_) {
      const auto it = std::find_if(
          fleet.gpu_types.begin(), fleet.gpu_types.end(),
          [&](const core::GpuType& t) { return !n.gpus.empty() && t.id == n.gpus[0].type; });
      node_type_.push_back(static_cast<std::int32_t>(it - fleet.gpu_types.begin()));
    }
    free_by_type_.assign(fleet.gpu_types.size() + 1, 0);
    for (std::size_t n = 0; n < nodes_.size(); ++n) {
      free_by_type_[node_type_[n]] += static_cast<std::int32_t>(nodes_[n].gpus.size());
    }
    derive_ideal_levels();
  }

  core::Result<RunResult> run();

 private:
  core::Status prepare_jobs();
  void derive_ideal_levels();
  core::PackLevel ideal_level(std::int32_t gpus) const;
  double slowdown(core::PackLevel wanted, core::PackLevel packed) const;

  void push(std::int64_t t_ms, EventKind kind, std::int32_t a = 0, std::int32_t b = 0) {
    events_.push({t_ms, kind, seq_++, a, b});
    if (kind != EventKind::kFailure) ++live_events_;
  }
  void request_cycle();
  void advance_to(std::int64_t t_ms);
  void accrue_usage();

  // Puts a job in the queue now (on arrival, or back after a stop).
  void enqueue(std::int32_t job);
  void arrive(std::int32_t job);
  void complete(std::int32_t job, std::int32_t generation);
  // Adds a finished job's run time to runs_.
  void record_run(std::int32_t job);
  // `gpu` -1: a random healthy GPU, and the node's next random failure is drawn.
  void fail_gpu(std::int32_t node, std::int32_t gpu);
  void repair_gpu(std::int32_t node, std::int32_t gpu);
  core::Status cycle();
  core::Status start(const sched::Placement& p);
  // Gives `gpus` to `job` and runs it there from its remaining work (a start, or the
  // restart of a resize). The GPUs must be free and healthy.
  core::Status launch(std::int32_t job, const std::vector<sched::GpuRef>& gpus,
                      const core::GpuTypeId& type, bool borrowed, core::PackLevel packed);
  // Restarts an elastic job at its new size, from a checkpoint (decide()'s Resize).
  core::Status resize(const sched::Resize& r);
  // Stops a running job, keeping the work up to its last checkpoint, and requeues it.
  void stop_and_requeue(std::int32_t job);
  // The stop part: keeps the saved work (all of it when the job checkpoints on its way
  // out), accounts the attempt, releases the GPUs.
  void stop(std::int32_t job, bool checkpoints_on_stop);
  // The fewest GPUs the job can start with (its elastic minimum, or its size).
  static std::int32_t least_gpus(const ModelJob& j) {
    return j.request.elastic ? j.request.elastic->min_gpus : j.request.gpus;
  }
  // Whether decide()'s elastic allocator could re-size a running job: one could grow into
  // a free GPU of its type, or two share a type and could trade GPUs.
  bool growable() const;
  // Frees the job's GPUs and records its hold of each for the ledger; `lost_ms`: the work
  // since its last checkpoint that a stop threw away (0 for a completion).
  void release(std::int32_t job, std::int64_t lost_ms = 0);
  // Splits the running attempt's time so far (reliability accounting) into `out`.
  AttemptSplit split_running(std::int32_t job) const;
  // Adds an attempt that kept all its work (finished, or cut by the horizon).
  void account_kept(std::int32_t job);
  void record_sample();
  // Free usable GPUs that a pending job could use now (engine.cc says how they count).
  std::int32_t idle_while_waiting() const;
  // Asks for a cycle when time alone could change decide()'s answer (engine.cc).
  void schedule_wakeup(const sched::ClusterSnapshot& s, const sched::Decisions& d);
  // Whether decide()'s answer depends on the clock beyond what events change.
  bool time_dependent() const {
    const sched::SchedulerConfig& c = policy_.config;
    return c.preemption.enabled || c.backfill || c.starvation_age.count() > 0 ||
           (policy_.jobs_elastic && c.elastic_growth);
  }
  void schedule_failure(std::int32_t node);

  const Fleet& fleet_;
  const Workload& workload_;
  const Policy& policy_;
  const EngineOptions& options_;
  std::vector<core::Node> nodes_;  // health changes with failures
  Rng rng_;

  std::vector<ModelJob> jobs_;
  RunResult result_;
  std::unordered_map<std::string, std::int32_t> node_ix_;
  std::map<core::TenantId, std::int32_t> tenant_ix_;
  std::map<core::GpuTypeId, double> usage_factor_;
  std::vector<std::vector<std::int32_t>> owner_;  // job holding each GPU, -1: free
  std::set<std::int32_t> pending_;  // by job index = JobId - 1, so snapshot order is free
  std::set<std::int32_t> running_;
  // The last snapshot built from the whole fleet; reset when node health changes.
  std::optional<sched::ClusterSnapshot> fleet_base_;
  // The last cycle's snapshot, and what changed since: each job's list in it (0 none, 1
  // pending, 2 running) and the jobs that entered or left a list since. The next snapshot
  // is that one plus the delta (sched::rebuild_snapshot), not a copy of every job.
  std::optional<sched::ClusterSnapshot> last_;
  std::vector<std::int8_t> snap_list_;
  std::vector<bool> touched_;
  std::vector<std::int32_t> touched_jobs_;
  void touch(std::int32_t job) {
    if (!touched_[job]) touched_jobs_.push_back(job);
    touched_[job] = true;
  }
  // The snapshot of the fleet model now (snapshot_from_fleet.h).
  core::Result<sched::ClusterSnapshot> build_snapshot();
  CheckpointModel checkpoints_;
  // Each tenant's successful runs of each job name, latest first (run-time estimates),
  // and the jobs sharing a (tenant, name) with another, which a completion touches so
  // that their estimates in the next snapshot are current.
  RunHistory runs_;
  std::map<std::pair<core::TenantId, std::string>, std::vector<std::int32_t>> same_name_;

  std::vector<sched::DecayedUsage> usage_;
  std::vector<double> usage_rate_;  // weighted GPUs each tenant holds now

  // Per tenant, for the backlog fairness metric (metrics.h): jobs pending and active,
  // GPUs held, and the integrals while it has pending work.
  struct TenantLive {
    std::int32_t pending = 0;
    std::int32_t active = 0;  // pending or running
    std::int64_t held = 0;
    TenantBacklog backlog;
  };
  std::vector<TenantLive> tenant_live_;
  double active_weight_ = 0;     // sum of weights of tenants with active jobs
  std::int32_t backlogged_ = 0;  // tenants with pending jobs
  void pending_delta(std::int32_t tenant, std::int32_t delta);
  void active_delta(std::int32_t tenant, std::int32_t delta);
  std::int64_t usage_as_of_ms_ = 0;

  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::int64_t seq_ = 0;
  std::int64_t live_events_ = 0;  // events other than failures: the run ends when none remain
  std::int64_t now_ms_ = 0;
  std::optional<std::int64_t> cycle_at_ms_;
  std::optional<std::int64_t> last_cycle_ms_;
  std::set<std::int64_t> wakeups_;  // instants with a wake-up event queued
  bool placeable_change_ = false;   // something since the last decide() could let a job start

  std::int32_t allocated_ = 0;
  std::int32_t usable_gpus_ = 0;
  std::int32_t idle_waiting_ = 0;  // idle_while_waiting() after the last cycle
  // Free usable GPUs by the fleet's type index (a node's GPUs are all one type), and the
  // GPU counts of pending jobs: together they tell when no pending job can fit.
  std::vector<std::int32_t> node_type_;
  std::vector<std::int32_t> free_by_type_;
  std::multiset<std::int32_t> pending_sizes_;
  std::int64_t pending_gpus_ = 0;

  std::int32_t max_domain_ = 0, max_node_ = 0, max_leaf_ = 0, max_spine_ = 0;
};

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

void Engine::active_delta(std::int32_t tenant, std::int32_t delta) {
  TenantLive& live = tenant_live_[tenant];
  if (live.active == 0 && delta > 0) active_weight_ += result_.tenants[tenant].weight;
  live.active += delta;
  if (live.active == 0) active_weight_ -= result_.tenants[tenant].weight;
}

void Engine::request_cycle() {
  if (cycle_at_ms_) return;
  std::int64_t t = now_ms_;
  if (last_cycle_ms_) t = std::max(t, *last_cycle_ms_ + to_ms(options_.cycle_interval));
  cycle_at_ms_ = t;
  push(t, EventKind::kCycle);
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

void Engine::complete(std::int32_t job, std::int32_t generation) {
  ModelJob& j = jobs_[job];
  if (j.state != JobState::kRunning || j.generation != generation) return;  // stale
  account_kept(job);
  release(job);
  j.state = JobState::kDone;
  j.remaining_work_ms = 0;
  active_delta(j.tenant, -1);
  result_.jobs[job].finish_ms = now_ms_;
  record_run(job);
  request_cycle();
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

core::Status Engine::start(const sched::Placement& p) {
  const auto job = static_cast<std::int32_t>(p.job.value - 1);
  if (job < 0 || job >= static_cast<std::int32_t>(jobs_.size()) ||
      jobs_[job].state != JobState::kPending) {
    return core::internal_error(
        fmt::format("placement of job {} which is not pending", p.job.value));
  }
  ModelJob& j = jobs_[job];
  pending_.erase(job);
  pending_sizes_.erase(pending_sizes_.find(least_gpus(j)));
  pending_gpus_ -= j.request.gpus;
  pending_delta(j.tenant, -1);
  return launch(job, p.gpus, p.gpu_type, p.borrowed, p.packed);
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
  return core::ok_status();
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
  // GPUs a shrink freed that no placement took were kept from everyone this cycle
  // (decide() blocks them); the next cycle may give them out.
  if (shrank) request_cycle();
  schedule_wakeup(*snapshot, d);
  for (sched::Pending& p : d.pending) {
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
    sched::JobsDelta delta{.usage = std::move(usage)};
    for (const std::int32_t job : touched_jobs_) {
      const core::JobId id = jobs_[job].request.id;
      if (snap_list_[job] == 2) delta.stopped.push_back(id);
      if (snap_list_[job] == 1) delta.dequeued.push_back(id);
      snap_list_[job] = list_of(job);
      if (snap_list_[job] == 2) {
        delta.started.push_back(running_job(jobs_[job], checkpoints_, runs_, now_ms_));
      }
      if (snap_list_[job] == 1) delta.queued.push_back(pending_job(jobs_[job], runs_, now_ms_));
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
    in.pending.push_back(pending_job(jobs_[job], runs_, now_ms_));
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
      if ((it == held.end() ? 0 : it->second) + gpus > tenant.quota_for(type).max_total()) continue;
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
    if (e.kind != EventKind::kFailure && !stale) --live_events_;
    advance_to(e.t_ms);
    switch (e.kind) {
      case EventKind::kCompletion:
        complete(e.a, e.b);
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

}  // namespace

core::Result<RunResult> simulate(const Fleet& fleet, const Workload& workload, const Policy& policy,
                                 const EngineOptions& options) {
  std::vector<core::TenantId> used;
  used.reserve(workload.jobs.size());
  for (const TraceJob& j : workload.jobs) used.push_back(j.tenant);
  CORRAL_ASSIGN_OR_RETURN(std::vector<core::Tenant> tenants, resolve_tenants(fleet, used));
  Engine engine(fleet, workload, policy, options, std::move(tenants));
  return engine.run();
}

}  // namespace corral::sim
