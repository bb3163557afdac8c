// A due promise lends its GPUs until it is due (docs/scheduling.md, part 5, "Lending the
// promised GPUs"). Holding them idle is the promise's whole cost: on the 64-GPU Philly pool
// with checkpoints it was 1.8% of all GPU-time. A job that checkpoints loses little when it
// is stopped, so it may run on them; when the rest of the head's GPUs are free, the head
// stops it as it may stop any job that went ahead of it (preempt.cc, kStarved). A job that
// does not checkpoint still may not: stopped at the promise, it would lose all its work.
//
// Thread safety: a pure function.
#pragma once

#include "sched/config.h"
#include "sched/snapshot.h"

namespace corral::sched::detail {

// Whether `job` may run on GPUs promised to the due head `head` from `at` though it would
// still run then: it checkpoints, the head may stop it (its tier or lower, under the
// preemption cap), and by `at` it will have run its minimum runtime and written a
// checkpoint that pays for its restore. Never under EASY backfill (config.backfill),
// whose promises keep Slurm's rule.
bool may_borrow_promise(const PendingJob& job, const PendingJob& head, core::Time at,
                        const SchedulerConfig& config, core::Time now);

}  // namespace corral::sched::detail
