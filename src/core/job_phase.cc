#include "core/job_phase.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

namespace corral::core {
namespace {

using P = JobPhase;
using E = JobEvent;

// The one transition table. Cancel edges are listed for every non-terminal phase.
constexpr std::array<JobTransition, 21> kTransitions = {{
    {P::kPending, E::kAdmit, P::kAdmitted},
    {P::kPending, E::kCancel, P::kCancelled},
    {P::kAdmitted, E::kAllocate, P::kLaunching},
    {P::kAdmitted, E::kRequeue, P::kPending},  // admission withdrawn before placement
    {P::kAdmitted, E::kCancel, P::kCancelled},
    {P::kLaunching, E::kStarted, P::kRunning},
    {P::kLaunching, E::kPreempt, P::kPreempting},
    {P::kLaunching, E::kLost, P::kRequeued},
    {P::kLaunching, E::kFail, P::kFailed},
    {P::kLaunching, E::kCancel, P::kCancelled},
    {P::kRunning, E::kPreempt, P::kPreempting},
    {P::kRunning, E::kLost, P::kRequeued},
    {P::kRunning, E::kSucceed, P::kSucceeded},
    {P::kRunning, E::kFail, P::kFailed},
    {P::kRunning, E::kCancel, P::kCancelled},
    {P::kPreempting, E::kStopped, P::kRequeued},
    {P::kPreempting, E::kSucceed, P::kSucceeded},  // finished within its grace period
    {P::kPreempting, E::kLost, P::kRequeued},
    {P::kPreempting, E::kFail, P::kFailed},
    {P::kPreempting, E::kCancel, P::kCancelled},
    {P::kRequeued, E::kRequeue, P::kPending},
}};

constexpr std::array<std::string_view, 9> kPhaseNames = {"pending",   "admitted",   "launching",
                                                         "running",   "preempting", "requeued",
                                                         "succeeded", "failed",     "cancelled"};

}  // namespace

std::string_view to_string(JobPhase phase) { return kPhaseNames.at(static_cast<size_t>(phase)); }

std::string_view to_string(JobEvent event) {
  static constexpr std::array<std::string_view, 10> kNames = {
      "admit", "allocate", "started", "preempt", "stopped",
      "lost",  "requeue",  "succeed", "fail",    "cancel"};
  return kNames.at(static_cast<size_t>(event));
}

std::optional<JobPhase> job_phase_from_string(std::string_view name) {
  const auto it = std::find(kPhaseNames.begin(), kPhaseNames.end(), name);
  if (it == kPhaseNames.end()) return std::nullopt;
  return static_cast<JobPhase>(it - kPhaseNames.begin());
}

std::vector<JobPhase> unfinished_phases() {
  return {JobPhase::kPending, JobPhase::kAdmitted,   JobPhase::kLaunching,
          JobPhase::kRunning, JobPhase::kPreempting, JobPhase::kRequeued};
}

bool is_terminal(JobPhase phase) {
  return phase == P::kSucceeded || phase == P::kFailed || phase == P::kCancelled;
}

bool holds_gpus(JobPhase phase) {
  return phase == P::kLaunching || phase == P::kRunning || phase == P::kPreempting;
}

std::span<const JobTransition> job_transitions() { return kTransitions; }

Result<JobPhase> next_phase(JobPhase phase, JobEvent event) {
  for (const JobTransition& t : kTransitions) {
    if (t.from == phase && t.event == event) return t.to;
  }
  return failed_precondition(
      fmt::format("job in phase {} cannot take event {}", to_string(phase), to_string(event)));
}

}  // namespace corral::core
