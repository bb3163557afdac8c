// What a run did with its sweeps (TraceJob::trial; docs/evaluation.md, "Sweeps"): the
// GPU-hours their trials held, how many early stopping cut, and whether each sweep's best
// trial, the best final value among its trials that ran to their end, is the best the
// sweep had (the best final value of all its trials, the stopped ones' included, as their
// curves would have ended).
//
// Thread safety: a pure function.
#pragma once

#include <cstdint>

#include "sim/engine.h"
#include "sim/traces/workload.h"

namespace corral::sim {

struct SweepMetrics {
  std::int64_t sweeps = 0;
  std::int64_t trials = 0;
  std::int64_t stopped_early = 0;
  double trial_gpu_hours = 0;  // held by every trial, every attempt
  std::int64_t finished = 0;   // sweeps whose trials all ended
  // Of the finished sweeps: those whose best trial is the best they had; the mean of the
  // best trial's final value less the best one's (0 when found); the mean hours from the
  // sweep's submission to its last trial's end.
  std::int64_t best_found = 0;
  double mean_regret = 0;
  double mean_sweep_hours = 0;
  // The jobs that are no trial, finished: their mean JCT, what sharing the fleet with the
  // sweeps cost them.
  double others_mean_jct_hours = 0;
};

SweepMetrics sweep_metrics(const Workload& workload, const RunResult& run);

}  // namespace corral::sim
