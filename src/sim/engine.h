// The simulation engine: the production scheduler in virtual time over a simulated fleet.
//
// A discrete-event loop over arrivals, completions, GPU failures and repairs. Events
// request a scheduling cycle; cycles are coalesced to at most one per `cycle_interval`
// of virtual time. A cycle builds a ClusterSnapshot from the fleet model (as corrald
// builds one from its store), calls sched::decide(), checks the decisions with
// sched::check() and applies them as corrald would: placements become running jobs
// holding their GPUs, pending jobs keep their reasons. Fair-share usage is a
// sched::DecayedUsage per tenant, weighted by the GPU type's usage factor.
//
// Runtime model (docs/evaluation.md): a job runs for its trace duration when placed as
// tightly as it wants (its ideal level: one NVLink domain if it fits one, else one node,
// else one leaf, else one spine). Each level it is placed wider multiplies its run time
// by that level's factor. A job stopped by a GPU failure loses the work since its last
// checkpoint (all of it when it does not checkpoint) and pays the restore time when it
// starts again. A preempted job does the same: decide()'s Preemption is applied as the
// scheduler's MiniCluster applies it, the victim stopping at once and going back to the
// queue, and the job it made room for starting in the same cycle. An elastic job that
// decide() resizes stops the same way (keeping what its checkpoints saved) and restarts
// at once on its new GPUs, paying the start time again; from then on its remaining work
// runs at the new placement's rate from the trace's elastic profile.
//
// Thread safety: simulate() is reentrant; it shares nothing between calls.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/job_spec.h"
#include "core/result.h"
#include "core/tenant.h"
#include "core/time.h"
#include "ledger/accrual.h"
#include "sched/decisions.h"
#include "sim/fleet.h"
#include "sim/policies.h"
#include "sim/traces/workload.h"

namespace corral::sim {

struct RuntimeModel {
  // Run-time factor for each level a gang is placed wider than its ideal level.
  double beyond_nvlink = 1.10;  // spread over NVLink domains of one node (PCIe between them)
  double beyond_node = 1.25;    // spread over nodes under one leaf switch
  double beyond_leaf = 1.15;    // spread over leaves under one spine
  double beyond_spine = 1.10;   // spread over spines
  core::Duration checkpoint_interval{0};  // 0: jobs do not checkpoint (restart from scratch)
  // Wall time a job stalls to write each periodic checkpoint: it works
  // `checkpoint_interval`, stalls this long, works again. A checkpoint counts once
  // written; a stop during the write loses the interval before it.
  core::Duration checkpoint_cost{0};
  core::Duration restore_time{0};  // paid on every restart from a checkpoint
  // Paid on every start, the first included (the Pollux artifact's 30-s re-scale delay).
  core::Duration start_time{0};
  // A stopped job keeps all its work, as if it checkpointed on the way out (the Pollux
  // artifact's jobs do); otherwise it keeps only what its periodic checkpoints saved.
  bool checkpoint_on_stop = false;
  // The run-time estimate the scheduler sees (JobRequest::max_runtime), as a multiple of
  // the trace duration: 1 is a perfect estimate.
  double estimate_factor = 1.0;
};

// A GPU failure at a chosen time (from the first submission), for tests and what-ifs.
struct InjectedFailure {
  std::string node;
  std::int32_t gpu = 0;
  core::Duration at{0};
};

struct EngineOptions {
  core::Duration cycle_interval = core::seconds(10);
  // Run sched::check() on every Nth cycle (1: every cycle; 0: never).
  std::int32_t check_every = 1;
  bool failures = true;  // draw GPU failures from the fleet's failure model
  // Skip decide() on cycles where it provably cannot place anything (engine.cc says
  // when). Off only to test that the skip changes nothing.
  bool skip_futile_cycles = true;
  std::vector<InjectedFailure> injected_failures;  // repaired after the fleet's repair time
  // Locality as Philly enforced it (Jeon et al., ATC'19): a rigid job asking more than
  // this many GPUs, in a multiple of it, asks for exactly this many on each node it spans
  // (JobRequest::gpus_per_node), i.e. whole nodes on a fleet of such nodes. Other jobs
  // (fewer GPUs, a count that is not a multiple such as 12 of 8, elastic, or a trace that
  // fixes its own split) keep the scheduler's split. 0: off. At most the largest node.
  std::int32_t whole_nodes_above = 0;
  // Also a rigid job of exactly `whole_nodes_above` GPUs takes one whole node (Philly
  // kept such jobs on one server); off: it may split when no node has that many free.
  bool whole_nodes_including = false;
  // Stop the run this long after the first submission (0: when every job is done). Jobs
  // still running are accounted up to then, their unsaved work as productive (nothing
  // lost it); they and pending jobs keep finish_ms -1.
  core::Duration horizon{0};
  std::uint64_t seed = 1;
  RuntimeModel runtime;
  // Sweeps stop trials by their early-stopping rule; off: every trial runs to its end
  // (what ASHA saves is measured against this).
  bool early_stopping = true;
};

// What happened to one job.
struct JobResult {
  std::string name;
  core::TenantId tenant;
  std::int32_t gpus = 0;
  std::int64_t submit_ms = 0;
  std::int64_t start_ms = -1;    // first start; -1: never started
  std::int64_t finish_ms = -1;   // -1: never finished
  std::int64_t duration_ms = 0;  // the trace's run time
  std::int64_t run_ms = 0;       // wall time holding GPUs, over every attempt
  std::int64_t gpu_ms = 0;       // GPU-milliseconds held, over every attempt
  std::int64_t lost_gpu_ms = 0;  // GPU-milliseconds whose work was lost to stops
  // run_ms split by what the time went to (each over every attempt); they add up to
  // run_ms, and with the time queued, to the job's wall time (reliability.h).
  std::int64_t productive_ms = 0;  // work kept: saved by checkpoints, finished, or at the horizon
  std::int64_t lost_ms = 0;        // work since the last checkpoint, lost to a stop
  std::int64_t checkpoint_ms = 0;  // stalled writing checkpoints (an interrupted write too)
  std::int64_t restart_ms = 0;     // start-up and restore time paid
  std::int32_t attempts = 0;
  std::int32_t preemptions = 0;
  std::int32_t resizes = 0;                // elastic restarts at a new size (not preemptions)
  std::int64_t resize_restart_gpu_ms = 0;  // GPU-ms of start-up and restore paid by resizes
  std::int32_t failures = 0;               // stops caused by a GPU failure
  std::string gpu_type;                    // of the last attempt
  std::string region;                      // the region it had to run in (empty: any)
  core::PackLevel wanted = core::PackLevel::kNvlink;
  core::PackLevel packed = core::PackLevel::kNone;  // of the last attempt
  double slowdown = 1.0;                            // of the last attempt
  std::string last_reason;                          // the last pending reason it was given, if any
  bool stopped_early = false;  // a sweep's trial stopped by its early-stopping rule
};

// The fleet after a scheduling cycle.
struct Sample {
  std::int64_t t_ms = 0;
  std::int32_t allocated_gpus = 0;
  std::int32_t usable_gpus = 0;
  std::int32_t running_jobs = 0;
  std::int32_t pending_jobs = 0;
  std::int64_t pending_gpus = 0;
};

// A tenant's service while it had pending work (the backlog fairness metric, metrics.h).
struct TenantBacklog {
  std::int64_t backlogged_ms = 0;  // time with at least one pending job
  double held_gpu_ms = 0;          // GPU-time it held meanwhile
  double fair_gpu_ms = 0;  // its weighted share of the fleet among active tenants, meanwhile
};

struct RunResult {
  std::string policy;
  std::int64_t total_gpus = 0;
  std::vector<JobResult> jobs;  // in workload order
  std::vector<Sample> timeline;
  std::vector<core::Tenant> tenants;
  // GPU-milliseconds by tenant and GPU type, over every attempt.
  std::map<core::TenantId, std::map<core::GpuTypeId, std::int64_t>> tenant_gpu_ms;
  std::map<core::TenantId, TenantBacklog> backlog;
  std::int64_t start_ms = 0;          // the first submission
  std::int64_t end_ms = 0;            // the last event
  std::int64_t allocated_gpu_ms = 0;  // integral of allocated GPUs over time
  std::int64_t usable_gpu_ms = 0;     // integral of usable GPUs over [start_ms, end_ms]
  // Integral of the GPUs left free after a cycle that a pending job could have used
  // (work conservation; engine.cc, Engine::idle_while_waiting).
  std::int64_t idle_waiting_gpu_ms = 0;
  std::int64_t cycles = 0;          // cycles run (decide() calls)
  std::int64_t cycles_skipped = 0;  // cycles with nothing decide() could place
  std::int64_t checks = 0;          // sched::check() calls
  std::int64_t gpu_failures = 0;
  // What the ledger bills (sim/billing.h): every attempt's hold of each GPU and each
  // GPU's unhealthy spans, as corrald's accrual reads them from its store.
  ledger::AccrualInput accrual;
  double decide_seconds = 0;  // wall time in build_snapshot + decide
  double wall_seconds = 0;
};

// Runs `workload` on `fleet` under `policy`. InvalidArgument for input the fleet cannot
// express (an unknown tenant without a trace_tenants rule, an unknown GPU type);
// Internal when the scheduler breaks an invariant (the message lists the violations and
// the virtual time), which is a bug in sched.
core::Result<RunResult> simulate(const Fleet& fleet, const Workload& workload, const Policy& policy,
                                 const EngineOptions& options);

}  // namespace corral::sim
