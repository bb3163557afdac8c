// Named scheduling policies for the simulator. Each is a setting of the production
// scheduler's knobs (sched::SchedulerConfig) plus the engine's own, never a second
// scheduler: the point of corral-sim is that every policy runs the same decide().
//
//   fifo      tier then submit time; first fit, no topology scoring, no backfill, no
//             preemption (greedy: a job that fits starts even if an earlier one waits)
//   slurm     the same order with EASY backfill (the first blocked job gets a planned
//             start that later jobs may not delay); no topology scoring, no preemption
//   tiresias  attained-service order (2D-LAS: discrete levels of GPU-seconds received),
//             jobs preemptible, preemption on, topology scoring, no backfill
//   corral    the defaults: weighted fair share over the tenant tree and least attained
//             service inside a tenant, topology scoring, greedy placement with a promised
//             start for one starved job at a time, preemption to reclaim guarantees and to
//             pause a tenant's more-served jobs through their checkpoints; a job whose
//             profile knows its speed on each GPU type declares it (Sia workloads)
//   corral-elastic
//             the defaults, with each job submitted elastic over the range its run-time
//             profile gives (Pollux workloads: traces/pollux.h); decide() starts it at the
//             largest size that fits, grows it into idle GPUs and shrinks it to its
//             minimum for a blocked job. A workload without profiles is refused: nothing
//             would say how a job's run time changes with its size.
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
  bool jobs_preemptible = false;  // trace jobs say nothing; the policy decides
  bool jobs_elastic = false;      // submit jobs that have an elastic profile as elastic
  bool corral = false;            // Corral's own config, which --scheduler-config replaces
  // Jobs with per-type run-time profiles declare their speed by GPU type (Corral's
  // policies; the baselines are not heterogeneity-aware).
  bool gpu_speed = false;
};

// The policies this build can run, in a stable order.
std::vector<std::string> policy_names();

// InvalidArgument for an unknown name, or one this build's scheduler cannot express.
core::Result<Policy> policy_by_name(std::string_view name);

}  // namespace corral::sim
