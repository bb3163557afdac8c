// Scheduler core II on hand-drawn clusters: preemption, backfill, reservations, elastic
// jobs, starvation and attained-service order.
#include <gtest/gtest.h>

#include "core/check.h"
#include "testing/decide_helpers.h"
#include "testing/fleet_builder.h"

namespace corral::sched {
namespace {

using core::PackLevel;
using testing::decide_checked;
using testing::FleetBuilder;
using testing::JobBuilder;
using testing::kHour;
using testing::kNow;
using testing::nodes_of;
using testing::pending_of;
using testing::placement_of;
using testing::whole;

// EASY backfill, off by default: the first blocked job is promised its start.
const SchedulerConfig kEasy{.backfill = true};

JobBuilder preemptible(std::int64_t id) {
  return JobBuilder(id).tier(0).preemptible().gpus(8).checkpoint(core::seconds(1800),
                                                                 core::seconds(120));
}

// Job 1 last checkpointed 50 minutes ago, job 2 five minutes ago: a production job takes
// job 2's node, which loses the least work, though job 1 comes first by id.
TEST(Preempt, PicksTheVictimWithLeastLostWork) {
  const auto s = FleetBuilder()
                     .dgx("a")
                     .dgx("b")
                     .running(preemptible(1), whole("a"))
                     .running(preemptible(2), whole("b"))
                     .run_state(1, {.started_ms = 0, .checkpoint_ms = 10 * kHour - 50 * 60'000})
                     .run_state(2, {.started_ms = 0, .checkpoint_ms = 10 * kHour - 5 * 60'000})
                     .pending(JobBuilder(3).tier(2).gpus(8))
                     .build();
  const Decisions d = decide_checked(s, {}, kNow);
  ASSERT_EQ(d.preemptions.size(), 1u);
  EXPECT_EQ(d.preemptions[0].victim.value, 2);
  EXPECT_EQ(d.preemptions[0].for_job.value, 3);
  EXPECT_EQ(d.preemptions[0].grace, core::seconds(120));
  ASSERT_NE(placement_of(d, 3), nullptr);
  EXPECT_EQ(nodes_of(*placement_of(d, 3)), std::set<std::string>{"b"});
  EXPECT_EQ(placement_of(d, 3)->waits_for, std::vector<core::JobId>{core::JobId(2)});
}

// Job 2 was asked to stop for job 4 in an earlier cycle and its agent has not confirmed
// yet: job 4 waits for job 2's GPUs instead of preempting job 1 as well (seen end to end
// when agents were slow: every cycle until the confirmation picked one more victim).
// Job 5, of the same tier and next in line, may not take the GPUs kept for job 4 either.
TEST(Preempt, WaitsForAVictimAlreadyStoppingInsteadOfPreemptingAnother) {
  const auto s = FleetBuilder()
                     .dgx("a")
                     .dgx("b")
                     .dgx("c")
                     .running(preemptible(1), whole("a"))
                     .running(preemptible(2), whole("b"))
                     .running(preemptible(3), whole("c"))
                     .run_state(1, {.started_ms = 0, .checkpoint_ms = 10 * kHour - 5 * 60'000})
                     .run_state(2, {.started_ms = 0, .stopping = true})
                     .run_state(3, {.started_ms = 0, .checkpoint_ms = 10 * kHour - 50 * 60'000})
                     .pending(JobBuilder(4).tier(2).gpus(8))
                     .pending(JobBuilder(5).tier(2).gpus(8))
                     .build();
  const Decisions d = decide_checked(s, {}, kNow);
  ASSERT_NE(pending_of(d, 4), nullptr);
  EXPECT_EQ(pending_of(d, 4)->kind, PendingKind::kWaiting);
  EXPECT_EQ(pending_of(d, 4)->reason,
            "waiting for job 2, already stopping, to free the GPUs this job will use");
  // Job 5 is entitled to a victim of its own, and takes the one that loses the least.
  ASSERT_EQ(d.preemptions.size(), 1u);
  EXPECT_EQ(d.preemptions[0].victim.value, 1);
  EXPECT_EQ(d.preemptions[0].for_job.value, 5);
  ASSERT_NE(placement_of(d, 5), nullptr);
  EXPECT_EQ(nodes_of(*placement_of(d, 5)), std::set<std::string>{"a"});
  // Once job 2 is gone, job 4 is placed on its node without any preemption.
  const auto after = FleetBuilder()
                         .dgx("a")
                         .dgx("b")
                         .running(preemptible(1), whole("a"))
                         .pending(JobBuilder(4).tier(2).gpus(8))
                         .build();
  const Decisions placed = decide_checked(after, {}, kNow);
  EXPECT_TRUE(placed.preemptions.empty());
  ASSERT_NE(placement_of(placed, 4), nullptr);
  EXPECT_EQ(nodes_of(*placement_of(placed, 4)), std::set<std::string>{"b"});
}

// A gang that needs 16 GPUs on one leaf, with the preemptible jobs on two leaves of one
// node each: no preemption can open a leaf, so none is made.
TEST(Preempt, NeverPreemptsWhenNoPlacementWouldOpen) {
  const auto s = FleetBuilder()
                     .dgx("a", "H100", {.leaf = "l1"})
                     .dgx("b", "H100", {.leaf = "l2"})
                     .running(preemptible(1), whole("a"))
                     .running(preemptible(2), whole("b"))
                     .pending(JobBuilder(3).tier(2).gpus(16).per_node(8).pack(PackLevel::kLeaf))
                     .build();
  const Decisions d = decide_checked(s, {}, kNow);
  EXPECT_TRUE(d.preemptions.empty());
  EXPECT_NE(pending_of(d, 3), nullptr);
}

// Tenant nlp is below its guarantee; tenant cv's job borrowed beyond its own. The borrowed
// job is reclaimed, even though the preemptible lower-tier job would lose less work.
TEST(Preempt, ReclaimsBorrowedCapacityFirst) {
  const auto s =
      FleetBuilder()
          .dgx("a")
          .dgx("b")
          .quota("nlp", "H100", 8, 0)
          .quota("cv", "H100", 0, 16)
          .quota("ops", "H100", 8, 0)
          .running(JobBuilder(1).tenant("cv").tier(1).gpus(8), whole("a"), /*borrowed=*/true)
          .running(preemptible(2).tenant("ops"), whole("b"))
          .run_state(1, {.started_ms = 0, .checkpoint_ms = 10 * kHour - 50 * 60'000})
          .run_state(2, {.started_ms = 0, .checkpoint_ms = 10 * kHour - 1 * 60'000})
          .pending(JobBuilder(3).tenant("nlp").tier(1).gpus(8))
          .build();
  const Decisions d = decide_checked(s, {}, kNow);
  ASSERT_EQ(d.preemptions.size(), 1u);
  EXPECT_EQ(d.preemptions[0].victim.value, 1);
  EXPECT_NE(d.preemptions[0].reason.find("reclaimed"), std::string::npos);
}

// Issue 38 item 7: a tenant inside its guarantee waited ten minutes behind a borrower's
// minimum runtime while its reason said only `capacity`. It says what it reclaims, and when.
TEST(Preempt, AReclaimBlockedByMinimumRuntimeSaysWhenItComes) {
  const auto s =
      FleetBuilder()
          .dgx("a")
          .quota("nlp", "H100", 8, 0)
          .running(JobBuilder(13).tenant("cv").tier(1).gpus(8), whole("a"), /*borrowed=*/true)
          .run_state(13, {.started_ms = 10 * kHour - 3 * 60'000})  // 3 of its 10 minutes
          .pending(JobBuilder(3).tenant("nlp").tier(1).gpus(8))
          .build();
  const Decisions d = decide_checked(s, {}, kNow);
  EXPECT_TRUE(d.preemptions.empty());
  ASSERT_NE(pending_of(d, 3), nullptr);
  EXPECT_NE(pending_of(d, 3)->reason.find("reclaims 8 H100 from job 13 at " +
                                          std::to_string(10 * kHour + 7 * 60'000) +
                                          " (ms since epoch), when its minimum runtime ends"),
            std::string::npos)
      << pending_of(d, 3)->reason;
}

// A borrower is not reclaimed by a tenant that would itself be borrowing.
TEST(Preempt, BorrowersDoNotReclaimFromBorrowers) {
  const auto s =
      FleetBuilder()
          .dgx("a")
          .quota("nlp", "H100", 0, 8)
          .running(JobBuilder(1).tenant("cv").tier(1).gpus(8), whole("a"), /*borrowed=*/true)
          .pending(JobBuilder(3).tenant("nlp").tier(1).gpus(8))
          .build();
  const Decisions d = decide_checked(s, {}, kNow);
  EXPECT_TRUE(d.preemptions.empty());
}

// Job 1 hit the preemption cap, job 2 started 5 minutes ago (minimum runtime 10): both
// protected, so the production job waits.
// Two nodes of preemptible work: job 1 at the preemption cap, job 2 five minutes old.
ClusterSnapshot capped_and_young() {
  return FleetBuilder()
      .dgx("a")
      .dgx("b")
      .running(preemptible(1), whole("a"))
      .running(preemptible(2), whole("b"))
      .run_state(1, {.started_ms = 0, .preemptions = 3})
      .run_state(2, {.started_ms = 10 * kHour - 5 * 60'000})
      .pending(JobBuilder(3).tier(2).gpus(8))
      .build();
}

// Where the preemptible tier is protected for 10 minutes, neither may be taken.
TEST(Preempt, ProtectedJobsAreNeverChosen) {
  SchedulerConfig protect_all;
  protect_all.preemption.min_runtime_by_tier.clear();
  const Decisions d = decide_checked(capped_and_young(), protect_all, kNow);
  EXPECT_TRUE(d.preemptions.empty());
  EXPECT_NE(pending_of(d, 3), nullptr);
}

// By default the preemptible tier has no minimum runtime: the job that started 5 minutes
// ago yields to the production job at once; the one at its preemption cap still may not.
TEST(Preempt, APreemptibleJobHasNoMinimumRuntimeByDefault) {
  const Decisions d = decide_checked(capped_and_young(), {}, kNow);
  ASSERT_EQ(d.preemptions.size(), 1u);
  EXPECT_EQ(d.preemptions[0].victim.value, 2);
  EXPECT_EQ(d.preemptions[0].grace, core::seconds(120));
  ASSERT_NE(placement_of(d, 3), nullptr);
  EXPECT_EQ(placement_of(d, 3)->waits_for, std::vector<core::JobId>{core::JobId(2)});
  // A standard job keeps its 10 minutes, whatever tier asks.
  const auto standard = FleetBuilder()
                            .dgx("a")
                            .running(JobBuilder(1).tier(1).preemptible().gpus(8), whole("a"))
                            .run_state(1, {.started_ms = 10 * kHour - 5 * 60'000})
                            .pending(JobBuilder(2).tier(2).gpus(8))
                            .build();
  EXPECT_TRUE(decide_checked(standard, {}, kNow).preemptions.empty());
}

// Same tier, or not preemptible: never a victim.
TEST(Preempt, OnlyLowerTierPreemptibleWork) {
  const auto s = FleetBuilder()
                     .dgx("a")
                     .dgx("b")
                     .running(JobBuilder(1).tier(2).preemptible().gpus(8), whole("a"))
                     .running(JobBuilder(2).tier(0).gpus(8), whole("b"))
                     .pending(JobBuilder(3).tier(2).gpus(8))
                     .build();
  EXPECT_TRUE(decide_checked(s, {}, kNow).preemptions.empty());
}

// An elastic job at 16 GPUs (min 8) shrinks to 8 before the preemptible job is touched.
TEST(Preempt, ElasticJobShrinksBeforeAnyonePreempted) {
  auto gpus = whole("a");
  for (auto& g : whole("b")) gpus.push_back(g);
  const auto s = FleetBuilder()
                     .dgx("a")
                     .dgx("b")
                     .dgx("c")
                     .running(JobBuilder(1).tier(1).gpus(16).elastic(8, 16, 8).checkpoint(
                                  core::seconds(600), core::seconds(60)),
                              gpus)
                     .running(preemptible(2), whole("c"))
                     .pending(JobBuilder(3).tier(2).gpus(8))
                     .build();
  const Decisions d = decide_checked(s, {}, kNow);
  EXPECT_TRUE(d.preemptions.empty());
  ASSERT_EQ(d.resizes.size(), 1u);
  EXPECT_EQ(d.resizes[0].job.value, 1);
  EXPECT_EQ(d.resizes[0].to_gpus, 8);
  EXPECT_EQ(d.resizes[0].for_job, core::JobId(3));
  ASSERT_NE(placement_of(d, 3), nullptr);
  EXPECT_EQ(nodes_of(*placement_of(d, 3)), std::set<std::string>{"b"});
}

// Making room for 8 GPUs, an elastic job on four nodes (32 GPUs, min 8, step 8) gives up
// one node and keeps 24: shrinking to its minimum would restart it at 8 only for it to
// grow back to 24 in the next cycle, a second checkpoint-restart for nothing.
TEST(Preempt, AShrinkGivesUpOnlyWhatThePlacementNeeds) {
  std::vector<std::pair<std::string, std::int32_t>> gpus;
  for (const char* n : {"a", "b", "c", "d"}) {
    for (auto& g : whole(n)) gpus.push_back(g);
  }
  // All four nodes are in rack r1; `cap` watts on it (0: none).
  const auto fleet = [&](std::int64_t cap) {
    FleetBuilder b;
    for (const char* n : {"a", "b", "c", "d"}) b.dgx(n);
    if (cap > 0) b.rack_cap("r1", cap);
    return b
        .running(JobBuilder(1).tier(1).gpus(32).elastic(8, 32, 8).checkpoint(core::seconds(600),
                                                                             core::seconds(60)),
                 gpus)
        .pending(JobBuilder(2).tier(2).gpus(8))
        .build();
  };
  const Decisions d = decide_checked(fleet(0), {}, kNow);
  EXPECT_TRUE(d.preemptions.empty());
  ASSERT_EQ(d.resizes.size(), 1u);
  EXPECT_EQ(d.resizes[0].from_gpus, 32);
  EXPECT_EQ(d.resizes[0].to_gpus, 24);
  ASSERT_NE(placement_of(d, 2), nullptr);
  const std::set<std::string> placed = nodes_of(*placement_of(d, 2));
  ASSERT_EQ(placed.size(), 1u);
  std::set<std::string> kept;
  for (const GpuRef& g : d.resizes[0].gpus) kept.insert(g.node.value);
  EXPECT_EQ(kept.size(), 3u);
  EXPECT_EQ(kept.count(*placed.begin()), 0u);
  // A rack power cap with room for the 32 GPUs already there and no more: the placement
  // takes the watts of 8 the shrink gave up, so the job keeps only 24 of its 32 (of H100s'
  // 700 W each), and with a cap that leaves room for 16 in all it goes to its minimum of 8.
  const Decisions roomy = decide_checked(fleet(32 * 700), {}, kNow);
  ASSERT_EQ(roomy.resizes.size(), 1u);
  EXPECT_EQ(roomy.resizes[0].to_gpus, 24);
  const Decisions tight = decide_checked(fleet(16 * 700), {}, kNow);
  ASSERT_EQ(tight.resizes.size(), 1u);
  EXPECT_EQ(tight.resizes[0].to_gpus, 8);
}

// Room for 4 GPUs on one node whose other 4 the elastic job keeps: it goes from 8 to 4
// (min 2, step 2), not to 2 and back.
TEST(Preempt, AShrinkKeepsWhatThePlacementLeavesOnItsNode) {
  const auto s = FleetBuilder()
                     .dgx("a")
                     .running(JobBuilder(1).tier(1).gpus(8).elastic(2, 8, 2).checkpoint(
                                  core::seconds(600), core::seconds(60)),
                              whole("a"))
                     .pending(JobBuilder(2).tier(2).gpus(4))
                     .build();
  const Decisions d = decide_checked(s, {}, kNow);
  ASSERT_EQ(d.resizes.size(), 1u);
  EXPECT_EQ(d.resizes[0].to_gpus, 4);
  ASSERT_NE(placement_of(d, 2), nullptr);
  EXPECT_EQ(placement_of(d, 2)->gpus.size(), 4u);
}

// An elastic job starts at what fits (12 free: 8, on its step of 8), and an elastic job
// below its max grows when nothing pending could use the idle GPUs.
TEST(Elastic, StartsAtWhatFitsAndGrowsIntoIdleCapacity) {
  const auto start = FleetBuilder()
                         .dgx("a")
                         .dgx("b")
                         .running(JobBuilder(1).gpus(4), {{"a", 0}, {"a", 1}, {"a", 2}, {"a", 3}})
                         .pending(JobBuilder(2).gpus(16).elastic(8, 16, 8))
                         .build();
  const Decisions d1 = decide_checked(start, {}, kNow);
  ASSERT_NE(placement_of(d1, 2), nullptr);
  EXPECT_EQ(placement_of(d1, 2)->gpus.size(), 8u);

  const auto grow = FleetBuilder()
                        .dgx("a")
                        .dgx("b")
                        .running(JobBuilder(2).gpus(8).elastic(8, 16, 8), whole("b"))
                        .build();
  const Decisions d2 = decide_checked(grow, {}, kNow);
  ASSERT_EQ(d2.resizes.size(), 1u);
  EXPECT_EQ(d2.resizes[0].from_gpus, 8);
  EXPECT_EQ(d2.resizes[0].to_gpus, 16);
}

// EASY backfill: the 16-GPU head waits for job 1 (ends in 2h); a 1-hour job may use the
// free GPUs now, a 3-hour one may not since it would delay the head.
TEST(Backfill, ShortJobsRunWithoutDelayingTheHead) {
  const auto s =
      FleetBuilder()
          .dgx("a")
          .dgx("b")
          .running(JobBuilder(1).gpus(4).max_runtime(core::seconds(3 * 3600)),
                   {{"a", 0}, {"a", 1}, {"a", 2}, {"a", 3}})
          .run_state(1, {.started_ms = 9 * kHour})
          .pending(JobBuilder(2).gpus(16).queued_at(1))
          .pending(JobBuilder(3).gpus(4).max_runtime(core::seconds(3 * 3600)).queued_at(2))
          .pending(JobBuilder(4).gpus(4).max_runtime(core::seconds(3600)).queued_at(3))
          .build();
  const Decisions d = decide_checked(s, kEasy, kNow);
  ASSERT_EQ(d.planned_starts.size(), 1u);
  EXPECT_EQ(d.planned_starts[0].job.value, 2);
  EXPECT_EQ(d.planned_starts[0].at, core::time_from_ms(12 * kHour));
  ASSERT_NE(pending_of(d, 2), nullptr);
  EXPECT_EQ(pending_of(d, 2)->kind, PendingKind::kWaiting);
  // The start is a bound (job 1's max runtime): no estimate is known.
  EXPECT_EQ(d.planned_starts[0].expected, d.planned_starts[0].at);
  EXPECT_EQ(pending_of(d, 2)->reason,
            "waiting: first in line for 16 H100 (capacity: 12 of 16 H100 free); start by "
            "43200000 (ms since epoch) at the latest (running jobs' max runtimes)");
  EXPECT_NE(placement_of(d, 4), nullptr) << "ends before the head starts";
  ASSERT_NE(pending_of(d, 3), nullptr) << "would delay the head";
  EXPECT_NE(
      pending_of(d, 3)->reason.find("behind job 2 (planned start by 43200000 (ms since epoch))"),
      std::string::npos);
}

// The same head, with job 1's run time estimated: the forecast uses the estimate, the
// promise (and what backfill protects) stays at job 1's max runtime, and the reason says
// what the forecast rests on.
TEST(Backfill, PlannedStartForecastsFromEstimatesAndKeepsTheBound) {
  const auto with = [](const JobBuilder& one) {
    return FleetBuilder()
        .dgx("a")
        .dgx("b")
        .running(one, {{"a", 0}, {"a", 1}, {"a", 2}, {"a", 3}})
        .run_state(1, {.started_ms = 9 * kHour})
        .pending(JobBuilder(2).gpus(16).queued_at(1))
        .pending(JobBuilder(3).gpus(4).max_runtime(core::seconds(5400)).queued_at(2))
        .build();
  };
  const JobBuilder one = JobBuilder(1).gpus(4).max_runtime(core::seconds(3 * 3600));
  const Decisions history = decide_checked(
      with(JobBuilder(one).estimate(core::seconds(2 * 3600), sched::EstimateBasis::kHistory, 12)),
      kEasy, kNow);
  ASSERT_EQ(history.planned_starts.size(), 1u);
  EXPECT_EQ(history.planned_starts[0].at, core::time_from_ms(12 * kHour));
  EXPECT_EQ(history.planned_starts[0].expected, core::time_from_ms(11 * kHour));
  EXPECT_EQ(pending_of(history, 2)->reason,
            "waiting: first in line for 16 H100 (capacity: 12 of 16 H100 free); planned start "
            "~39600000 (ms since epoch) (estimate from 12 earlier runs), by 43200000 (ms since "
            "epoch) at the latest");
  // Backfill still protects the bound, not the forecast: a 90-minute job runs past the
  // 11:00 forecast but ends (11:30) before the 12:00 promise, so it may start now.
  EXPECT_NE(placement_of(history, 3), nullptr);

  const Decisions spec = decide_checked(
      with(JobBuilder(one).estimate(core::seconds(3600 + 1800), sched::EstimateBasis::kSpec)),
      kEasy, kNow);
  EXPECT_EQ(spec.planned_starts[0].expected, core::time_from_ms(10 * kHour + 30 * 60'000));
  EXPECT_NE(
      pending_of(spec, 2)->reason.find("~37800000 (ms since epoch) (job 1's expectedRuntime)"),
      std::string::npos)
      << pending_of(spec, 2)->reason;
}

TEST(Backfill, OffMeansGreedy) {
  const auto s = FleetBuilder()
                     .dgx("a")
                     .dgx("b")
                     .running(JobBuilder(1).gpus(4), {{"a", 0}, {"a", 1}, {"a", 2}, {"a", 3}})
                     .pending(JobBuilder(2).gpus(16).queued_at(1))
                     .pending(JobBuilder(3).gpus(4).queued_at(2))
                     .build();
  const Decisions d = decide_checked(s, SchedulerConfig{.backfill = false}, kNow);
  EXPECT_TRUE(d.planned_starts.empty());
  EXPECT_NE(placement_of(d, 3), nullptr);
}

// Reservation "launch" holds node b from 12h to 14h for tenant nlp. At 10h a 1-hour job
// may use b, a 3-hour job may not, a preemptible one may; nlp's own job waits for the
// window.
TEST(Reservation, BeforeTheWindowOnlyWorkThatEndsInTimeOrIsPreemptible) {
  FleetBuilder f;
  f.dgx("a").dgx("b").running(JobBuilder(1).gpus(8), whole("a"));
  f.reservation_nodes("launch", "nlp", {"b"}, 12 * kHour, 14 * kHour);
  const auto long_job =
      FleetBuilder(f).pending(JobBuilder(2).gpus(8).max_runtime(core::seconds(3 * 3600))).build();
  EXPECT_NE(pending_of(decide_checked(long_job, {}, kNow), 2), nullptr);

  const auto short_job =
      FleetBuilder(f).pending(JobBuilder(2).gpus(8).max_runtime(core::seconds(3600))).build();
  EXPECT_NE(placement_of(decide_checked(short_job, {}, kNow), 2), nullptr);

  const auto spot = FleetBuilder(f).pending(JobBuilder(2).gpus(8).tier(0).preemptible()).build();
  EXPECT_NE(placement_of(decide_checked(spot, {}, kNow), 2), nullptr);

  const auto own =
      FleetBuilder(f).pending(JobBuilder(2).tenant("nlp").gpus(8).reservation("launch")).build();
  const Decisions d = decide_checked(own, {}, kNow);
  ASSERT_NE(pending_of(d, 2), nullptr);
  EXPECT_EQ(pending_of(d, 2)->kind, PendingKind::kReservation);
  EXPECT_EQ(pending_of(d, 2)->reason, "reservation: launch opens at 43200000 (ms since epoch)");
}

// Inside the window nlp's job takes the reservation back from a preemptible stranger.
TEST(Reservation, InsideTheWindowItsJobsPreemptPreemptibleStrangers) {
  const auto s = FleetBuilder()
                     .dgx("a")
                     .dgx("b")
                     .reservation_nodes("launch", "nlp", {"b"}, 9 * kHour, 14 * kHour)
                     .running(JobBuilder(1).gpus(8), whole("a"))
                     .running(preemptible(2).tenant("ops"), whole("b"))
                     .pending(JobBuilder(3).tenant("nlp").gpus(8).reservation("launch"))
                     .pending(JobBuilder(4).tenant("cv").gpus(8).tier(2))
                     .build();
  const Decisions d = decide_checked(s, {}, kNow);
  ASSERT_EQ(d.preemptions.size(), 1u);
  EXPECT_EQ(d.preemptions[0].victim.value, 2);
  EXPECT_EQ(d.preemptions[0].for_job.value, 3);
  ASSERT_NE(placement_of(d, 3), nullptr);
  EXPECT_EQ(nodes_of(*placement_of(d, 3)), std::set<std::string>{"b"});
  EXPECT_EQ(placement_of(d, 3)->reservation, core::ReservationId("launch"));
}

TEST(Reservation, CountReservationsHoldWholeNodesInIdOrder) {
  const auto s = FleetBuilder()
                     .dgx("a")
                     .dgx("b")
                     .reservation("r", "nlp", "H100", 8, 9 * kHour, 14 * kHour)
                     .pending(JobBuilder(2).gpus(16))
                     .pending(JobBuilder(3).tenant("nlp").gpus(8).reservation("r"))
                     .build();
  const Decisions d = decide_checked(s, {}, kNow);
  ASSERT_NE(placement_of(d, 3), nullptr);
  EXPECT_EQ(nodes_of(*placement_of(d, 3)), std::set<std::string>{"a"});
  EXPECT_NE(pending_of(d, 2), nullptr);
}

// A job that waited past starvation_age (here 2 h) goes first while its tenant is under
// its share.
TEST(Starvation, OldJobOfAnUnderservedTenantGoesFirst) {
  FleetBuilder f;
  f.node("n", "H100", 1, 1).tenant("a").tenant("b").usage("a", 1e9);
  f.pending(JobBuilder(1).tenant("a").queued_at(0));                    // waited 10h
  f.pending(JobBuilder(2).tenant("b").queued_at(10 * kHour - 60'000));  // waited 1m
  const Decisions d =
      decide_checked(f.build(), SchedulerConfig{.starvation_age = core::seconds(2 * 3600)}, kNow);
  EXPECT_NE(placement_of(d, 1), nullptr);

  const Decisions off = decide_checked(f.build(), SchedulerConfig{.starvation_age = {}}, kNow);
  EXPECT_NE(placement_of(off, 2), nullptr) << "without aging, fair share alone decides";
}

// Attained-service order: the job with less service goes first, and (preemptible) work
// with more attained service is preempted for it.
TEST(AttainedService, LeastServiceFirstAndPreemptsTheLongRunning) {
  const SchedulerConfig las{.order = QueueOrder::kAttainedService,
                            .las_thresholds_gpu_seconds = {3600}};
  FleetBuilder f;
  f.dgx("a").running(preemptible(1).tier(1), whole("a"));
  auto in = f.pending(JobBuilder(2).tier(1).gpus(8).preemptible()).input();
  in.running[0].attained_gpu_seconds = 8 * 3600 * 5;
  const auto s = build_snapshot(in);
  ASSERT_TRUE(s.ok());
  const Decisions d = decide_checked(*s, las, kNow);
  ASSERT_EQ(d.preemptions.size(), 1u);
  EXPECT_EQ(d.preemptions[0].victim.value, 1);
}

// Fair-share order, inside one tenant: the job with less attained service goes first,
// then age; a job that waited past starvation_age goes before both.
TEST(AttainedService, InsideATenantLeastServiceFirstThenAge) {
  FleetBuilder f;
  f.node("n", "H100", 8, 1);
  f.pending(JobBuilder(1).gpus(8).queued_at(9 * kHour));           // older, 20 GPU-h attained
  f.pending(JobBuilder(2).gpus(8).queued_at(9 * kHour + 60'000));  // newer, none attained
  auto in = f.input();
  in.pending[0].attained_gpu_seconds = 20 * 3600;
  const auto s = build_snapshot(in);
  ASSERT_TRUE(s.ok());
  EXPECT_NE(placement_of(decide_checked(*s, {}, kNow), 2), nullptr);
  // One level for all (no thresholds): age alone decides.
  const Decisions by_age =
      decide_checked(*s, SchedulerConfig{.las_thresholds_gpu_seconds = {}}, kNow);
  EXPECT_NE(placement_of(by_age, 1), nullptr);

  // Waiting 3 h, past a 2-h starvation age, puts job 1 first again.
  in.pending[0].queued_at = core::time_from_ms(7 * kHour);
  const auto starved = build_snapshot(in);
  ASSERT_TRUE(starved.ok());
  const SchedulerConfig two_hours{.starvation_age = core::seconds(2 * 3600)};
  EXPECT_NE(placement_of(decide_checked(*starved, two_hours, kNow), 1), nullptr);
}

// Fair-share order: a new job of tenant a pauses a's long-running job (level 2 of the
// default thresholds, 40 GPU-h) through its checkpoint, but only when stopping it loses at
// most attained_service_max_loss (10 min) of work per GPU, and never another tenant's.
TEST(AttainedService, ANewJobPausesItsTenantsLongJobThroughACheckpoint) {
  const auto with = [](std::int64_t checkpoint_ago_ms, const char* victim_tenant) {
    FleetBuilder f;
    f.dgx("a").tenant("a").tenant("b");
    f.running(JobBuilder(1)
                  .tenant(victim_tenant)
                  .gpus(8)
                  .checkpoint(core::seconds(600), core::seconds(60)),
              whole("a"));
    f.run_state(1, {.started_ms = 5 * kHour, .checkpoint_ms = 10 * kHour - checkpoint_ago_ms});
    f.pending(JobBuilder(2).tenant("a").gpus(8).queued_at(10 * kHour - 60'000));
    auto in = f.input();
    in.running[0].attained_gpu_seconds = 8 * 5 * 3600;
    auto s = build_snapshot(in);
    CORRAL_CHECK(s.ok());
    return std::move(*s);
  };
  // Stopping now loses 5 min since the checkpoint + 1 min of restore per GPU: paused.
  const Decisions d = decide_checked(with(5 * 60'000, "a"), {}, kNow);
  ASSERT_EQ(d.preemptions.size(), 1u);
  EXPECT_EQ(d.preemptions[0].victim.value, 1);
  EXPECT_EQ(d.preemptions[0].for_job.value, 2);
  EXPECT_EQ(d.preemptions[0].reason, "preempted for job 2 (less attained service)");
  ASSERT_NE(placement_of(d, 2), nullptr);

  // 30 min since the checkpoint: stopping would throw away 31 min per GPU.
  EXPECT_TRUE(decide_checked(with(30 * 60'000, "a"), {}, kNow).preemptions.empty());
  // Another tenant's job is never paused for attained service (fair share decides there).
  EXPECT_TRUE(decide_checked(with(5 * 60'000, "b"), {}, kNow).preemptions.empty());
  // Switched off.
  SchedulerConfig off;
  off.preemption.attained_service_max_loss = core::Duration(0);
  EXPECT_TRUE(decide_checked(with(5 * 60'000, "a"), off, kNow).preemptions.empty());
  // A job of a lower tier never pauses a higher one.
  FleetBuilder f;
  f.dgx("a");
  f.running(JobBuilder(1).tier(2).gpus(8).checkpoint(core::seconds(600), core::seconds(60)),
            whole("a"));
  f.run_state(1, {.started_ms = 5 * kHour, .checkpoint_ms = 10 * kHour - 60'000});
  f.pending(JobBuilder(2).tier(1).gpus(8));
  auto in = f.input();
  in.running[0].attained_gpu_seconds = 8 * 5 * 3600;
  const auto higher = build_snapshot(in);
  ASSERT_TRUE(higher.ok());
  EXPECT_TRUE(decide_checked(*higher, {}, kNow).preemptions.empty());
}

}  // namespace
}  // namespace corral::sched
