// Named scheduling policies for the simulator. Each is a setting of the production
// scheduler's knobs (sched::SchedulerConfig) plus the engine's own, never a second
// scheduler: the point of corral-sim is that every policy runs the same decide().
//
//   fifo     tier then submit time; first fit, no topology scoring
//   corral   the defaults: weighted fair share over the tenant tree, topology scoring
//
// `slurm` (priority + EASY backfill) and `tiresias` (attained-service order with
// preemption) need scheduler features that decide() does not have yet; they are
// refused with a message saying so until it does.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "sched/config.h"

namespace corral::sim {

struct Policy {
  std::string name;
  sched::SchedulerConfig config;
};

// The policies this build can run, in a stable order.
std::vector<std::string> policy_names();

// InvalidArgument for an unknown name, or one this build's scheduler cannot express.
core::Result<Policy> policy_by_name(std::string_view name);

}  // namespace corral::sim
