#include "core/job_phase.h"

#include <set>
#include <utility>

#include <gtest/gtest.h>

namespace corral::core {
namespace {

constexpr JobPhase kAllPhases[] = {
    JobPhase::kPending,   JobPhase::kAdmitted,   JobPhase::kLaunching,
    JobPhase::kRunning,   JobPhase::kPreempting, JobPhase::kRequeued,
    JobPhase::kSucceeded, JobPhase::kFailed,     JobPhase::kCancelled};
constexpr JobEvent kAllEvents[] = {JobEvent::kAdmit,   JobEvent::kAllocate, JobEvent::kStarted,
                                   JobEvent::kPreempt, JobEvent::kStopped,  JobEvent::kLost,
                                   JobEvent::kRequeue, JobEvent::kSucceed,  JobEvent::kFail,
                                   JobEvent::kCancel};

// Every (phase, event) pair: listed edges go where the table says, every other pair is
// refused with FailedPrecondition naming both.
TEST(JobPhase, EveryPairFollowsTheTableOrIsRefused) {
  for (JobPhase phase : kAllPhases) {
    for (JobEvent event : kAllEvents) {
      SCOPED_TRACE(std::string(to_string(phase)) + " + " + std::string(to_string(event)));
      std::optional<JobPhase> expected;
      for (const JobTransition& t : job_transitions()) {
        if (t.from == phase && t.event == event) expected = t.to;
      }
      const Result<JobPhase> got = next_phase(phase, event);
      if (expected) {
        ASSERT_TRUE(got.ok()) << got.status().to_string();
        EXPECT_EQ(*got, *expected);
      } else {
        ASSERT_FALSE(got.ok());
        EXPECT_EQ(got.status().code(), StatusCode::kFailedPrecondition);
        EXPECT_NE(got.status().message().find(to_string(phase)), std::string::npos);
        EXPECT_NE(got.status().message().find(to_string(event)), std::string::npos);
      }
    }
  }
}

TEST(JobPhase, TableHasNoDuplicateEdges) {
  std::set<std::pair<JobPhase, JobEvent>> seen;
  for (const JobTransition& t : job_transitions()) {
    EXPECT_TRUE(seen.insert({t.from, t.event}).second)
        << to_string(t.from) << " + " << to_string(t.event) << " listed twice";
  }
}

TEST(JobPhase, TerminalPhasesHaveNoWayOut) {
  for (const JobTransition& t : job_transitions()) {
    EXPECT_FALSE(is_terminal(t.from)) << to_string(t.from) << " is terminal but has an edge";
  }
}

TEST(JobPhase, EveryLivePhaseCanBeCancelled) {
  for (JobPhase phase : kAllPhases) {
    if (is_terminal(phase) || phase == JobPhase::kRequeued) continue;
    const Result<JobPhase> got = next_phase(phase, JobEvent::kCancel);
    ASSERT_TRUE(got.ok()) << to_string(phase);
    EXPECT_EQ(*got, JobPhase::kCancelled);
  }
}

// Every phase is reachable from pending and every non-terminal phase can reach an end.
TEST(JobPhase, AllPhasesReachableAndEveryPhaseCanEnd) {
  std::set<JobPhase> reached = {JobPhase::kPending};
  for (bool grew = true; grew;) {
    grew = false;
    for (const JobTransition& t : job_transitions()) {
      if (reached.count(t.from) && reached.insert(t.to).second) grew = true;
    }
  }
  EXPECT_EQ(reached.size(), std::size(kAllPhases));

  for (JobPhase phase : kAllPhases) {
    std::set<JobPhase> from = {phase};
    for (bool grew = true; grew;) {
      grew = false;
      for (const JobTransition& t : job_transitions()) {
        if (from.count(t.from) && from.insert(t.to).second) grew = true;
      }
    }
    const bool can_end = std::any_of(from.begin(), from.end(), is_terminal);
    EXPECT_TRUE(can_end) << to_string(phase);
  }
}

TEST(JobPhase, PreemptedJobGoesBackToPendingThroughRequeued) {
  JobPhase p = JobPhase::kRunning;
  for (JobEvent e : {JobEvent::kPreempt, JobEvent::kStopped, JobEvent::kRequeue}) {
    auto next = next_phase(p, e);
    ASSERT_TRUE(next.ok());
    p = *next;
  }
  EXPECT_EQ(p, JobPhase::kPending);
}

TEST(JobPhase, NamesRoundTrip) {
  for (JobPhase phase : kAllPhases) {
    EXPECT_EQ(job_phase_from_string(to_string(phase)), phase);
  }
  EXPECT_EQ(job_phase_from_string("sleeping"), std::nullopt);
}

TEST(JobPhase, OnlyPlacedPhasesHoldGpus) {
  EXPECT_TRUE(holds_gpus(JobPhase::kLaunching));
  EXPECT_TRUE(holds_gpus(JobPhase::kRunning));
  EXPECT_TRUE(holds_gpus(JobPhase::kPreempting));
  EXPECT_FALSE(holds_gpus(JobPhase::kPending));
  EXPECT_FALSE(holds_gpus(JobPhase::kRequeued));
  EXPECT_FALSE(holds_gpus(JobPhase::kSucceeded));
}

}  // namespace
}  // namespace corral::core
