#include "sched/asha.h"

#include <algorithm>

namespace corral::sched {

RungVerdict judge_rung(const std::vector<double>& earlier, double value, core::MetricGoal goal,
                       std::int32_t reduction_factor) {
  RungVerdict v;
  v.reached = static_cast<std::int32_t>(earlier.size()) + 1;
  v.kept = (v.reached + reduction_factor - 1) / reduction_factor;
  // Ties rank behind the earlier trials: a trial that only matches one is not better.
  v.rank =
      1 + static_cast<std::int32_t>(std::count_if(earlier.begin(), earlier.end(), [&](double e) {
        return !core::better(goal, value, e);
      }));
  std::vector<double> all = earlier;
  all.push_back(value);
  const auto kth = all.begin() + (v.kept - 1);
  std::nth_element(all.begin(), kth, all.end(),
                   [&](double a, double b) { return core::better(goal, a, b); });
  v.cut = *kth;
  v.continues = v.rank <= v.kept;
  return v;
}

}  // namespace corral::sched
