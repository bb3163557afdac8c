// Metrics of one simulated run: allocation, job completion and queueing times (overall
// and by job size), makespan, per-tenant share against entitlement with Jain's index,
// work lost to stops, and cost from the fleet's price book. Formulas are in
// docs/evaluation.md.
//
// Thread safety: value types; compute_metrics() is a pure function.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ids.h"
#include "sim/billing.h"
#include "sim/engine.h"
#include "sim/fleet.h"
#include "sim/sweep_metrics.h"

namespace corral::sim {

struct Distribution {
  std::int64_t count = 0;
  double mean = 0;
  double median = 0;
  double p99 = 0;
};

// Percentiles by nearest rank over `values` (sorted in place). Empty: all zero.
Distribution distribution(std::vector<double>& values);

struct SizeBucket {
  std::string label;  // "1", "2-4", "5-8", "9-32", "33+"
  std::int32_t min_gpus = 0;
  std::int32_t max_gpus = 0;
  Distribution jct_s;
  Distribution queue_s;
};

struct TenantMetrics {
  core::TenantId id;
  double weight = 0;
  std::int64_t jobs = 0;
  double gpu_hours = 0;
  double share = 0;        // of all GPU-hours used in the run
  double entitlement = 0;  // weighted share among tenants with jobs, down the tenant tree
  double cost_usd = 0;
  double mean_jct_s = 0;
  double mean_queue_s = 0;
  // Its mean JCT alone on its guaranteed share (the same policy, its jobs only, its quota
  // capped there: sharing_incentive.h) over its mean JCT here: >= 1 when sharing the fleet
  // costs it nothing. -1: not computed.
  double sharing_incentive = -1;
  // While it had pending jobs: GPUs held / its weighted share of the fleet among tenants
  // with work. >= 1: it got its share whenever it waited. -1: it never waited.
  double backlog_service = -1;
};

struct Metrics {
  std::string policy;
  std::int64_t jobs = 0;
  std::int64_t finished = 0;
  std::int64_t never_started = 0;
  double gpu_allocation = 0;  // allocated GPU-time / (fleet GPUs x makespan)
  // GPU-time left free after a cycle while a pending job that would fit it waited, as a
  // share of usable GPU-time (work conservation; Engine::idle_while_waiting).
  double idle_waiting_share = 0;
  Distribution jct_s;     // finish - submit, finished jobs
  Distribution queue_s;   // first start - submit, started jobs
  double makespan_s = 0;  // last finish - first submit
  // Jain's index over min(1, backlog_service) of the tenants that ever waited: 1 when
  // each got at least its weighted share whenever it had work queued; towards 1/n as
  // one tenant gets it all. (Shares of total GPU-hours say little on their own: when every
  // job finishes, each tenant's share is its demand whatever the policy.)
  double jain_index = 0;
  std::int64_t preemptions = 0;
  std::int64_t resizes = 0;             // elastic jobs restarted at a new size
  double resize_restart_gpu_hours = 0;  // their start-up and restore, times their GPUs
  std::int64_t failure_stops = 0;
  std::int64_t gpu_failures = 0;
  double lost_gpu_hours = 0;
  double mean_slowdown = 0;  // run-time factor from placement, multi-GPU jobs' last attempt
  double total_cost_usd = 0;
  // The run billed by the ledger's accrual (sim/billing.h): every GPU-hour of the fleet in
  // one bucket. `ledger_error` says why it could not be (a contradiction in the holds).
  LedgerTotals ledger;
  std::string ledger_error;
  std::vector<SizeBucket> by_size;
  std::vector<TenantMetrics> tenants;  // sorted by id
  std::int64_t cycles = 0;
  std::int64_t cycles_skipped = 0;
  std::int64_t checks = 0;
  double wall_seconds = 0;
  double decide_seconds = 0;
  SweepMetrics sweeps;  // set by sweep_metrics() (sweep_metrics.h); zero without sweeps
};

Metrics compute_metrics(const RunResult& run, const Fleet& fleet);

}  // namespace corral::sim
