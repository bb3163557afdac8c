// Decayed fair-share usage.
//
// A tenant's usage is the GPU-seconds it consumed, each weighted by its GPU type's usage
// factor and halved every `half_life`:
//     U(t) = sum over intervals i of  w_i * g_i * dt_i * 2^(-(t - t_i) / half_life)
// Keeping one number and decaying it when read is exact for that formula, so the server
// and the simulator keep a DecayedUsage per tenant and put value_at(now) in the snapshot.
//
// Thread safety: a value type; needs external synchronization.
#pragma once

#include "core/time.h"

namespace corral::sched {

// The factor by which usage shrinks over `elapsed`: 2^(-elapsed / half_life).
double decay_factor(core::Duration elapsed, core::Duration half_life);

class DecayedUsage {
 public:
  explicit DecayedUsage(core::Duration half_life) : half_life_(half_life) {}

  // Adds `weighted_gpu_seconds` accrued at time `at`. REQUIRES: `at` >= the last `at`.
  void add(double weighted_gpu_seconds, core::Time at);
  // The usage decayed to `t`. REQUIRES: `t` >= the last `at`.
  double value_at(core::Time t) const;

 private:
  core::Duration half_life_;
  double value_ = 0;
  core::Time as_of_{};
};

}  // namespace corral::sched
