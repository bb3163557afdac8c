// ASHA's stopping rule (core::AshaRule; docs/jobspec.md#sweeps): when a trial of a sweep
// reaches a rung, it goes on only if its metric there ranks within the best
// ceil(n / reduction_factor) of the n trials that have reached that rung so far, itself
// included. The first trial at a rung always goes on; with a reduction factor of 3, the
// fourth goes on if it is among the best two of four. A trial is judged once per rung,
// when it gets there (asynchronous: later trials never overturn an earlier verdict), so
// the order in which trials reach a rung is part of the facts. corrald judges a trial
// when its report crosses a rung (server/controllers/sweeps.cc), corral-sim when its
// model reaches one: the same verdict from the same values in the same order.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "core/sweep.h"

namespace corral::sched {

struct RungVerdict {
  bool continues = true;
  std::int32_t rank = 1;     // 1: the best at this rung so far
  std::int32_t reached = 1;  // trials at this rung, this one included
  std::int32_t kept = 1;     // how many of them go on: ceil(reached / reduction_factor)
  double cut = 0;            // the kept-th best value: a value must be at least as good
};

// `earlier`: the values of the trials that reached the rung before this one. Ties go to
// the earlier trials (a trial must beat the cut, not match it, to displace one).
RungVerdict judge_rung(const std::vector<double>& earlier, double value, core::MetricGoal goal,
                       std::int32_t reduction_factor);

}  // namespace corral::sched
