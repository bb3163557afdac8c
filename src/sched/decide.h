// decide(): the scheduler, as one pure function.
//
// Given the cluster as it is (snapshot), the policy (config) and the time, it returns
// what should change. It reads nothing else and writes nothing else: no I/O, no clock,
// no threads, no randomness (every tie is broken by id). The same call runs in corrald and in
// corral-sim, so the simulator's answers are true of production. The same inputs give
// byte-equal decisions.
//
// The stages, in order (each in its own file):
//   1. order    (order.cc)     tiers, then weighted fair share, then age
//   2. admit    (admit.cc)     quota: guaranteed, then borrowable up to the borrow limit
//   3. place    (place.cc)     topology-aware gang placement, all-or-nothing (gate.cc
//                              keeps reserved and promised GPUs out of reach)
//   4. preempt  (preempt.cc)   the cheapest victims that open a placement for an
//                              entitled job; elastic jobs shrink first
//   5. backfill (backfill.cc)  EASY: the first blocked job's planned start is protected
//   6. explain  (explain.cc)   a reason for every job left pending
//   7. elastic  (elastic_allocation.cc) running elastic jobs re-sized where GPUs add most
//   8. forecast (forecast.cc)  when each job left waiting for room is expected to start
// The policy, with the formulas and worked examples, is in docs/scheduling.md.
#pragma once

#include "core/time.h"
#include "sched/config.h"
#include "sched/decisions.h"
#include "sched/snapshot.h"

namespace corral::sched {

// Never fails: a valid snapshot always gets an answer.
Decisions decide(const ClusterSnapshot& snapshot, const SchedulerConfig& config, core::Time now);

}  // namespace corral::sched
