// Dependencies between jobs (core::Dependency; docs/scheduling.md, "Arrays and
// dependencies"): a pending job whose dependencies are not met is not queued at all (it
// is out of line, and its tenant is not active on its account); one whose dependency can
// never be met is abandoned (decisions.h). corrald also judges a submission's
// dependencies with these rules, to refuse one that could never run.
//
// Thread safety: pure functions.
#pragma once

#include <string>

#include "sched/snapshot.h"

namespace corral::sched {

enum class DependencyState {
  kMet,      // every dependency is met: the job is queued
  kWaiting,  // some are not met yet
  kNever,    // one can never be met: its job ended in a way the dependency does not accept
};

struct DependencyVerdict {
  DependencyState state = DependencyState::kMet;
  std::string reason;  // waiting or never: which dependency, in words
};

DependencyVerdict judge_dependencies(const std::vector<DependencyFact>& facts);

// A whole array's fact from its tasks' (both adapters sum arrays up with it): started when
// a task started (at the first task's start), ended when every task ended (at the last
// one's end), succeeded when every one succeeded.
DependencyFact summed_fact(core::JobId array, const std::vector<DependencyFact>& tasks);

// judge_dependencies(facts).state == kMet, without building a reason.
bool dependencies_met(const std::vector<DependencyFact>& facts);

// When the job joined the queue for the purposes of age: its queued_at, or when its
// last dependency was met if that is later (a job of a met workflow step is not older
// than the step it waited for; Slurm's eligible time).
core::Time queued_since(const PendingJob& job);

}  // namespace corral::sched
