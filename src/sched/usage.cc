#include "sched/usage.h"

#include <cmath>

#include "core/check.h"

namespace corral::sched {

double decay_factor(core::Duration elapsed, core::Duration half_life) {
  if (half_life.count() <= 0) return elapsed.count() > 0 ? 0.0 : 1.0;
  return std::exp2(-static_cast<double>(elapsed.count()) / static_cast<double>(half_life.count()));
}

void DecayedUsage::add(double weighted_gpu_seconds, core::Time at) {
  CORRAL_CHECK(at >= as_of_);
  value_ = value_ * decay_factor(at - as_of_, half_life_) + weighted_gpu_seconds;
  as_of_ = at;
}

double DecayedUsage::value_at(core::Time t) const {
  CORRAL_CHECK(t >= as_of_);
  return value_ * decay_factor(t - as_of_, half_life_);
}

}  // namespace corral::sched
