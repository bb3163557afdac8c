// The job lifecycle as one transition table.
//
//            submit
//              |
//              v         admit          allocate          started
//          [pending] ---------> [admitted] ------> [launching] ------> [running]
//              ^                                        |  \              |  |
//              |  requeue                       preempt |   \ fail/       |  | succeed
//              |                                        v    \ lost       |  v
//          [requeued] <------ stopped ------ [preempting] <--- preempt ---+ [succeeded]
//              ^                                  |                       |
//              +------------ node lost / retryable failure ---------------+
//
//   fail (non-retryable) from launching, running, preempting -> [failed]
//   cancel from any phase that has not ended                  -> [cancelled]
//
// `attempt` counts launches: it increases on every allocate, so attempt N's workers
// see CORRAL_ATTEMPT=N and its checkpoints are tagged with N.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace corral::core {

enum class JobPhase {
  kPending,     // queued, waiting for admission and placement
  kAdmitted,    // quota granted, placement in progress
  kLaunching,   // GPUs allocated; workers starting
  kRunning,     // every rank started
  kPreempting,  // asked to checkpoint and stop within its grace period
  kRequeued,    // stopped without finishing; will go back to pending
  kSucceeded,   // every rank exited 0
  kFailed,      // a rank failed and the job is out of restarts
  kCancelled,   // a user or admin cancelled it
};

enum class JobEvent {
  kAdmit,     // the scheduler admitted it against quota
  kAllocate,  // the scheduler placed it on GPUs
  kStarted,   // the agents report every rank running
  kPreempt,   // the scheduler or a drain asked it to checkpoint and stop
  kStopped,   // its workers are confirmed gone after a preemption
  kLost,      // its node was lost, or a rank failed with restarts left
  kRequeue,   // back into the queue
  kSucceed,   // every rank exited 0
  kFail,      // a rank failed and no restart is left
  kCancel,    // cancelled by a user or admin
};

std::string_view to_string(JobPhase phase);
std::string_view to_string(JobEvent event);
std::optional<JobPhase> job_phase_from_string(std::string_view name);

// Terminal phases never change again.
bool is_terminal(JobPhase phase);
// Every phase but the terminal ones, in declaration order.
std::vector<JobPhase> unfinished_phases();
// Phases in which the job holds (or may still hold) GPUs.
bool holds_gpus(JobPhase phase);

struct JobTransition {
  JobPhase from;
  JobEvent event;
  JobPhase to;
};

// The whole table, for documentation and exhaustive tests.
std::span<const JobTransition> job_transitions();

// The phase after `event` in `phase`; FailedPrecondition when the table has no such
// edge, naming both.
Result<JobPhase> next_phase(JobPhase phase, JobEvent event);

}  // namespace corral::core
