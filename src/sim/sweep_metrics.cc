#include "sim/sweep_metrics.h"

#include <algorithm>
#include <limits>

namespace corral::sim {

SweepMetrics sweep_metrics(const Workload& workload, const RunResult& run) {
  SweepMetrics m;
  double regret = 0, hours = 0, others_jct = 0;
  std::int64_t others = 0;
  const auto& jobs = workload.jobs;
  // An array's tasks are consecutive, index 0 first (workload.h).
  for (std::size_t first = 0; first < jobs.size();) {
    std::size_t end = first + 1;
    while (end < jobs.size() && jobs[end].array_index > 0) ++end;
    if (jobs[first].trial == nullptr) {
      for (std::size_t i = first; i < end; ++i) {
        if (run.jobs[i].finish_ms < 0) continue;
        ++others;
        others_jct += static_cast<double>(run.jobs[i].finish_ms - jobs[i].submit_ms) / 3600e3;
      }
      first = end;
      continue;
    }
    ++m.sweeps;
    constexpr double kNone = std::numeric_limits<double>::infinity();
    double best = kNone, found = kNone;
    std::int64_t last_end = 0;
    bool all_ended = true;
    for (std::size_t i = first; i < end; ++i) {
      const JobResult& r = run.jobs[i];
      const double value = jobs[i].trial->final_value;
      ++m.trials;
      m.trial_gpu_hours += static_cast<double>(r.gpu_ms) / 3600e3;
      best = std::min(best, value);
      if (r.stopped_early) ++m.stopped_early;
      if (r.finish_ms < 0) {
        all_ended = false;
      } else {
        last_end = std::max(last_end, r.finish_ms);
        if (!r.stopped_early) found = std::min(found, value);
      }
    }
    if (all_ended && found < kNone) {
      ++m.finished;
      if (found == best) ++m.best_found;
      regret += found - best;
      hours += static_cast<double>(last_end - jobs[first].submit_ms) / 3600e3;
    }
    first = end;
  }
  if (others > 0) m.others_mean_jct_hours = others_jct / static_cast<double>(others);
  if (m.finished > 0) {
    m.mean_regret = regret / static_cast<double>(m.finished);
    m.mean_sweep_hours = hours / static_cast<double>(m.finished);
  }
  return m;
}

}  // namespace corral::sim
