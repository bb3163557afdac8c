// check(): the scheduler's invariants as code. It lists every way `decisions` would break
// the rules when applied to `snapshot`; an empty list means none. Property tests call
// it on every case, the simulator at every step, corrald in debug builds before it
// applies a decision. (The store's unique constraint stays the last line of defence.)
//
//   - every pending job is placed or given a reason, exactly once, and nothing else is
//   - a gang gets exactly the GPUs it asked for, on one acceptable type (all or nothing)
//   - no GPU is given twice, or given while a running job holds it
//   - no GPU that is unhealthy or on a cordoned/draining node is given
//   - gpusPerNode, a required topology, node CPUs/memory and rack power caps hold
//   - no tenant passes guarantee + borrow limit on a type it was given more of, and an
//     allocation beyond the guarantee is marked borrowed
#pragma once

#include <string>
#include <vector>

#include "sched/decisions.h"
#include "sched/snapshot.h"

namespace corral::sched {

std::vector<std::string> check(const ClusterSnapshot& snapshot, const Decisions& decisions);

}  // namespace corral::sched
