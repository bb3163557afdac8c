// corral-sim's engine inside: the event queue and the class that runs one policy over a
// fleet and a workload in virtual time (engine.h says what it models). Its work is in
// three files: engine.cc (the event loop, the cycle and the fleet's failures),
// engine_jobs.cc (what starting, resizing, stopping and finishing does to a job) and
// engine_bookkeeping.cc (what the engine counts: packing levels, usage, the ledger's
// holds, attempts, idle GPUs, samples).
//
// Thread safety: an Engine is used by one thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/result.h"
#include "sched/decisions.h"
#include "sched/snapshot.h"
#include "sched/usage.h"
#include "sim/engine.h"
#include "sim/rng.h"
#include "sim/snapshot_from_fleet.h"

namespace corral::sim::detail {

// Events at the same instant run in this order: GPUs are freed (completions, repairs)
// and taken away (failures) before new work arrives, and the cycle sees all of it.
// A rung is a trial of a sweep reaching a rung of its early-stopping rule: right after
// completions, as it may free GPUs too.
enum class EventKind : std::int32_t { kCompletion, kRung, kFailure, kRepair, kWakeup, kCycle };

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

inline core::Time at(std::int64_t ms) { return core::time_from_ms(ms); }

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
    if (counts_as_live(kind)) ++live_events_;
  }
  // Whether an event of `kind` keeps the run going: failures come forever, and a rung
  // never comes without its trial's completion (which does).
  static bool counts_as_live(EventKind kind) {
    return kind != EventKind::kFailure && kind != EventKind::kRung;
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
  // Takes a pending job out of the queue (enqueue's reverse), to start or end it.
  void dequeue(std::int32_t job);
  core::Status start(const sched::Placement& p);
  // A job whose dependency can never be met ends, cancelled, without running.
  core::Status abandon(const sched::Abandoned& a);
  // Marks a pending job held out of line (held_) or not: a held job's tenant is neither
  // backlogged nor active on its account, as decide() does not count it (its fair share
  // in the metrics would otherwise be owed for work the scheduler may not start).
  void set_held(std::int32_t job, bool held);
  // Gives `gpus` to `job` and runs it there from its remaining work (a start, or the
  // restart of a resize). The GPUs must be free and healthy.
  core::Status launch(std::int32_t job, const std::vector<sched::GpuRef>& gpus,
                      const core::GpuTypeId& type, bool borrowed, core::PackLevel packed);
  // A trial of a sweep with early stopping: the event of its reaching its next rung, from
  // where its running attempt stands (none past the last rung).
  void schedule_rung(std::int32_t job);
  // ASHA's verdict on `job` at its next rung (sched/asha.h); a trial below the cut ends
  // there, its work kept, its GPUs freed.
  void judge_rung(std::int32_t job, std::int32_t generation);
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
  // Each sweep's values at each rung, in the order its trials reached it (by array id).
  std::map<std::int64_t, std::vector<std::vector<double>>> rung_values_;
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
  // Per job: left pending by the last cycle out of line for its dependencies or its
  // array's limit (no GPU could have served it: not idle while it waits).
  std::vector<bool> held_;
  std::int64_t pending_gpus_ = 0;

  std::int32_t max_domain_ = 0, max_node_ = 0, max_leaf_ = 0, max_spine_ = 0;
};

}  // namespace corral::sim::detail
