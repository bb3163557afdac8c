// SchedulerConfig: the policy knobs of decide(). Defaults are Corral's default policy;
// the simulator's baselines (FIFO, Slurm-like, ...) are other settings of the same knobs.
#pragma once

#include <cstdint>

#include "core/time.h"

namespace corral::sched {

enum class QueueOrder {
  kFairShare,  // tier, then weighted fair share over the tenant tree, then age
  kFifo,       // tier, then age only
};

struct SchedulerConfig {
  QueueOrder order = QueueOrder::kFairShare;
  // Half-life of decayed fair-share usage (usage.h).
  core::Duration usage_half_life = core::seconds(7 * 24 * 3600);
  // Score placements by topology (tight packing, best fit). Off: first fit in node order.
  bool topology_scoring = true;
  // Seed for any randomized tie-breaking; decide() draws nothing else.
  std::uint64_t seed = 0;
};

}  // namespace corral::sched
