// The starvation promise that costs nothing until it is due, and preemptions that must pay
// for themselves (docs/scheduling.md, parts 4 and 5): a reclaim, a pause inside a tenant and
// a due promise stop a job only when the work it loses is less than the waiting it saves.
#include <gtest/gtest.h>

#include "testing/decide_helpers.h"
#include "testing/fleet_builder.h"

namespace corral::sched {
namespace {

using testing::decide_checked;
using testing::FleetBuilder;
using testing::JobBuilder;
using testing::kHour;
using testing::kNow;
using testing::pending_of;
using testing::placement_of;
using testing::whole;

const SchedulerConfig kTwoHours{.starvation_age = core::seconds(2 * 3600)};

// One DGX. Job 1 of tenant a (8 GPUs) has waited since `queued_ms`; job 2 of tenant b
// holds the node since `started_ms`, never checkpoints, and may run `max_runtime_h`.
ClusterSnapshot one_node(std::int64_t queued_ms, std::int64_t started_ms, std::int64_t max_h) {
  return FleetBuilder()
      .dgx("n")
      .tenant("a")
      .tenant("b")
      .running(JobBuilder(2).tenant("b").gpus(8).max_runtime(core::seconds(max_h * 3600)),
               whole("n"))
      .run_state(2, {.started_ms = started_ms})
      .pending(JobBuilder(1).tenant("a").gpus(8).queued_at(queued_ms))
      .build();
}

// Job 1 waited 10 h (its promise is due after 2 h); job 2 started an hour ago, after job 1
// was queued, and may run 72 h: stopping it loses 8 GPU-hours, waiting would cost 8 GPUs for
// 71 h. Job 1 takes the node.
TEST(Promise, ADueJobPreemptsAJobThatWentAheadOfItWhenThatLosesLessThanWaiting) {
  const Decisions d = decide_checked(one_node(0, 9 * kHour, 72), kTwoHours, kNow);
  ASSERT_EQ(d.preemptions.size(), 1u);
  EXPECT_EQ(d.preemptions[0].victim.value, 2);
  EXPECT_EQ(d.preemptions[0].reason, "preempted for job 1, which waited 10h and started after it");
  ASSERT_NE(placement_of(d, 1), nullptr);
  // Not due yet (the default age is 24 h): it waits and preempts no one.
  EXPECT_TRUE(decide_checked(one_node(0, 9 * kHour, 72), {}, kNow).preemptions.empty());
}

// A job that was running before job 1 was queued did not go ahead of it: job 1 is promised
// its start when job 2 ends, and nothing is stopped.
TEST(Promise, ADueJobNeverPreemptsWorkThatStartedBeforeItWasQueued) {
  const Decisions d = decide_checked(one_node(kHour, kHour / 2, 72), kTwoHours, kNow);
  EXPECT_TRUE(d.preemptions.empty());
  ASSERT_EQ(d.planned_starts.size(), 1u);
  EXPECT_EQ(d.planned_starts[0].job.value, 1);
  EXPECT_EQ(core::to_ms(d.planned_starts[0].at), kHour / 2 + 72 * kHour);
}

// Job 2 ends in 30 minutes by its max runtime: waiting costs 4 GPU-hours, stopping it would
// lose 8. Job 1 is promised the node at job 2's end and says why it did not preempt.
TEST(Promise, ADueJobWaitsWhenWaitingCostsLessThanTheWorkAStopLoses) {
  const std::int64_t started = 9 * kHour;
  const Decisions later = decide_checked(
      FleetBuilder()
          .dgx("n")
          .tenant("a")
          .tenant("b")
          .running(JobBuilder(2).tenant("b").gpus(8).max_runtime(core::seconds(5400)), whole("n"))
          .run_state(2, {.started_ms = started})
          .pending(JobBuilder(1).tenant("a").gpus(8).queued_at(0))
          .build(),
      kTwoHours, kNow);
  EXPECT_TRUE(later.preemptions.empty());
  ASSERT_NE(pending_of(later, 1), nullptr);
  EXPECT_NE(pending_of(later, 1)->reason.find(
                "waits for running jobs to end rather than stop job 2 (8.0 GPU-h of work lost "
                "against 4.0 GPU-h of waiting)"),
            std::string::npos)
      << pending_of(later, 1)->reason;
  ASSERT_EQ(later.planned_starts.size(), 1u);
  EXPECT_EQ(core::to_ms(later.planned_starts[0].at), started + 5'400'000);
}

// Reclaiming a guarantee pays for itself too. Tenant nlp, inside its guarantee, wants the
// node that cv borrowed 9 h ago. With a checkpoint 5 minutes old the stop loses little and
// cv's job is reclaimed; without checkpoints it would lose 72 GPU-hours while it ends in
// 30 minutes by its max runtime, so nlp waits for it.
TEST(Promise, ReclaimingWaitsForABorrowerThatEndsBeforeItsLostWorkIsRepaid) {
  const auto with = [](std::optional<std::int64_t> checkpoint_ms) {
    return FleetBuilder()
        .dgx("n")
        .quota("nlp", "H100", 8, 0)
        .quota("cv", "H100", 0, 8)
        .running(JobBuilder(2)
                     .tenant("cv")
                     .gpus(8)
                     .max_runtime(core::seconds(9 * 3600 + 1800))
                     .checkpoint(core::seconds(1800), core::seconds(60)),
                 whole("n"), /*borrowed=*/true)
        .run_state(2, {.started_ms = kHour, .checkpoint_ms = checkpoint_ms})
        .pending(JobBuilder(1).tenant("nlp").gpus(8))
        .build();
  };
  const Decisions recent = decide_checked(with(10 * kHour - 5 * 60'000), {}, kNow);
  ASSERT_EQ(recent.preemptions.size(), 1u);
  EXPECT_NE(recent.preemptions[0].reason.find("reclaimed"), std::string::npos);

  const Decisions never = decide_checked(with(std::nullopt), {}, kNow);
  EXPECT_TRUE(never.preemptions.empty());
  ASSERT_NE(pending_of(never, 1), nullptr);
  EXPECT_NE(pending_of(never, 1)->reason.find("rather than stop job 2"), std::string::npos)
      << pending_of(never, 1)->reason;
}

}  // namespace
}  // namespace corral::sched
