// check(): the scheduler's invariants as code. It lists every way `decisions` would break
// the rules when applied to `snapshot`; an empty list means none. Property tests call
// it on every case, the simulator at every step, corrald in debug builds before it
// applies a decision. (The store's unique constraint stays the last line of defence.)
//
//   - every pending job is placed or given a reason, exactly once, and nothing else is
//   - a gang gets exactly the GPUs it asked for, on one acceptable type (all or nothing)
//   - no GPU is given twice, or given while a running job holds it
//   - no GPU that is unhealthy or on a cordoned/draining node is given
//   - a job bound to a region gets GPUs in that region only
//   - gpusPerNode, a required topology, node CPUs/memory and rack power caps hold
//   - no tenant passes guarantee + borrow limit on a type it was given more of, and an
//     allocation beyond the guarantee is marked borrowed (a session never goes beyond it)
//   - no session is preempted
//   - a preemption or shrink frees GPUs that the job it was made for uses in this same
//     decision (no useless preemption); its victim was entitled to be one (preemptible
//     or borrowed, of a lower tier or being reclaimed), ran at least min_runtime and is
//     under its preemption cap; a job is touched at most once
//   - resizes stay inside the elastic range, keep (shrink) or extend (grow) the GPUs held
//   - no placement takes reserved GPUs it may not use (a reservation's GPUs go to its
//     own jobs inside the window; to others only when preemptible or ending before it)
//   - nothing started now that runs past the backfill head's planned start takes a GPU
//     promised to it
#pragma once

#include <string>
#include <vector>

#include "core/time.h"
#include "sched/config.h"
#include "sched/decisions.h"
#include "sched/snapshot.h"

namespace corral::sched {

std::vector<std::string> check(const ClusterSnapshot& snapshot, const Decisions& decisions,
                               const SchedulerConfig& config, core::Time now);

}  // namespace corral::sched
