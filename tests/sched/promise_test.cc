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

// Lending the promised GPUs (docs/scheduling.md, part 5). Two DGX nodes: job 1 of tenant a
// (16 GPUs) was queued at 1 h and is due; job 2 of b holds n2 since before that and may run
// until `promise_ms`, so job 1 is promised both nodes then and n1 stands free. Job 3 of c
// (8 GPUs, 10 h max runtime) would still run at the promise.
ClusterSnapshot promised_n1(std::int64_t promise_ms, std::optional<core::Duration> checkpoints) {
  JobBuilder three =
      JobBuilder(3).tenant("c").gpus(8).max_runtime(core::seconds(10 * 3600)).queued_at(9 * kHour);
  if (checkpoints) three.checkpoint(*checkpoints, core::seconds(120));
  return FleetBuilder()
      .dgx("n1")
      .dgx("n2")
      .tenant("a")
      .tenant("b")
      .tenant("c")
      .running(JobBuilder(2).tenant("b").gpus(8).max_runtime(core::seconds(promise_ms / 1000)),
               whole("n2"))
      .run_state(2, {.started_ms = 0})
      .pending(JobBuilder(1).tenant("a").gpus(16).queued_at(kHour))
      .pending(three)
      .build();
}

// A job that checkpoints every 30 minutes runs on n1 until the promise, 3 h away: stopped
// then, it loses at most one interval. One that does not checkpoint stays out (it would
// lose everything), as does one whose first checkpoint would come after the promise.
TEST(Promise, AJobThatCheckpointsRunsOnPromisedGpusUntilTheyAreDue) {
  const std::int64_t promise = 13 * kHour;
  const Decisions lent = decide_checked(promised_n1(promise, core::seconds(1800)), kTwoHours, kNow);
  ASSERT_NE(placement_of(lent, 3), nullptr);
  EXPECT_EQ(placement_of(lent, 3)->gpus.front().node.value, "n1");
  ASSERT_EQ(lent.planned_starts.size(), 1u);
  EXPECT_EQ(core::to_ms(lent.planned_starts[0].at), promise);

  const Decisions kept = decide_checked(promised_n1(promise, std::nullopt), kTwoHours, kNow);
  EXPECT_EQ(placement_of(kept, 3), nullptr);
  ASSERT_NE(pending_of(kept, 3), nullptr);
  EXPECT_NE(pending_of(kept, 3)->reason.find("behind job 1"), std::string::npos)
      << pending_of(kept, 3)->reason;

  const std::int64_t soon = 10 * kHour + 20 * 60'000;
  EXPECT_EQ(
      placement_of(decide_checked(promised_n1(soon, core::seconds(1800)), kTwoHours, kNow), 3),
      nullptr);
  // Under EASY backfill (Slurm's rule) nothing is lent.
  EXPECT_EQ(
      placement_of(decide_checked(promised_n1(promise, core::seconds(1800)),
                                  {.backfill = true, .starvation_age = core::Duration(0)}, kNow),
                   3),
      nullptr);
}

// Job 3 took n1 that way 30 minutes ago. While job 2 runs, job 3 keeps it; once job 2 has
// ended, the due job stops job 3 (it went ahead of it and loses 8 GPUs x 7 minutes) and
// takes both nodes.
TEST(Promise, TheDueJobTakesItsLentGpusBackWhenTheRestAreFree) {
  const auto with = [](bool two_running) {
    FleetBuilder b;
    b.dgx("n1").dgx("n2").tenant("a").tenant("b").tenant("c");
    if (two_running) {
      b.running(JobBuilder(2).tenant("b").gpus(8).max_runtime(core::seconds(13 * 3600)),
                whole("n2"))
          .run_state(2, {.started_ms = 0});
    }
    return b
        .running(JobBuilder(3)
                     .tenant("c")
                     .gpus(8)
                     .max_runtime(core::seconds(10 * 3600))
                     .checkpoint(core::seconds(1800), core::seconds(120)),
                 whole("n1"))
        .run_state(3,
                   {.started_ms = 10 * kHour - kHour / 2, .checkpoint_ms = 10 * kHour - 5 * 60'000})
        .pending(JobBuilder(1).tenant("a").gpus(16).queued_at(kHour))
        .build();
  };
  const Decisions waiting = decide_checked(with(true), kTwoHours, kNow);
  EXPECT_TRUE(waiting.preemptions.empty());
  EXPECT_EQ(placement_of(waiting, 1), nullptr);

  const Decisions due = decide_checked(with(false), kTwoHours, kNow);
  ASSERT_EQ(due.preemptions.size(), 1u);
  EXPECT_EQ(due.preemptions[0].victim.value, 3);
  EXPECT_NE(placement_of(due, 1), nullptr);
}

}  // namespace
}  // namespace corral::sched
