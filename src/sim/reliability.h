// The reliability study at LLM scale (docs/evaluation.md#reliability-at-llm-scale): one
// gang of `nodes` whole nodes trains for `days` on a fleet of those nodes plus `spares`,
// while nodes fail at a rate that gives the job `interruptions` in `days` on average.
//
// It is an ordinary simulate() run, not a model of its own: failures are the engine's
// (each GPU fails exponentially, so the fleet's failures are a Poisson process), a failed
// GPU stops the job, which loses the work since its last written checkpoint, goes back
// to the queue and is placed again by the production decide() on whole healthy nodes
// (spares included) as soon as there are enough; it then pays the restart latency.
// Nodes of a failed GPU come back after `repair`.
//
// Thread safety: free functions over values; reentrant.
#pragma once

#include <cstdint>

#include "core/result.h"
#include "core/time.h"
#include "sim/fleet.h"

namespace corral::sim {

struct LlmReliabilitySetup {
  std::int32_t nodes = 2048;  // the job's size, in whole nodes
  std::int32_t gpus_per_node = 8;
  std::int32_t spares = 0;  // extra nodes in the fleet
  double days = 54;         // the horizon
  // Expected job interruptions over `days` (Llama 3: 419 in 54 days). Every GPU of the
  // fleet, spares included, gets MTBF = days x job GPUs / interruptions.
  double interruptions = 419;
  core::Duration checkpoint_interval = core::seconds(30 * 60);  // of work between writes
  core::Duration checkpoint_cost = core::seconds(60);           // stall to write one checkpoint
  core::Duration restart = core::seconds(10 * 60);              // paid on every restart
  core::Duration repair = core::seconds(4 * 3600);              // a failed GPU's node is back after
  core::Duration cycle_interval = core::seconds(10);            // corrald's scheduling period
  std::int32_t check_every = 1;                                 // sched::check() every Nth cycle
  std::uint64_t seed = 1;
};

// Where the job's wall time went; the five parts add up to `wall_s` exactly (in ms).
struct LlmReliabilityResult {
  double wall_s = 0;
  double productive_s = 0;         // training whose result was kept
  double lost_s = 0;               // training since the last checkpoint, lost to a failure
  double checkpoint_s = 0;         // stalled writing checkpoints
  double restart_s = 0;            // restart latency paid
  double waiting_s = 0;            // queued: scheduling, or waiting for enough healthy nodes
  std::int64_t interruptions = 0;  // failures that stopped the job
  std::int64_t gpu_failures = 0;   // in the whole fleet
  double effective() const { return wall_s > 0 ? productive_s / wall_s : 0; }
};

// The fleet of the study: nodes + spares of H100 x gpus_per_node, 32 nodes per leaf.
core::Result<Fleet> llm_fleet(const LlmReliabilitySetup& setup);

// Runs the study. InvalidArgument names the field for a setup out of range.
core::Result<LlmReliabilityResult> run_llm_reliability(const LlmReliabilitySetup& setup);

// Young (1974) / Daly (2006) first-order estimates, in seconds: with checkpoint cost
// `delta`, mean time between interruptions `mtbi` and restart latency `restart`, the
// best interval is sqrt(2 delta mtbi), and an interval `tau` keeps a fraction
// 1 - delta/tau - (tau/2 + restart)/mtbi of wall time productive.
double young_daly_interval_s(double delta_s, double mtbi_s);
double young_daly_efficiency(double tau_s, double delta_s, double restart_s, double mtbi_s);

}  // namespace corral::sim
