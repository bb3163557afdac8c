// Pending reasons on hand-drawn clusters: each says what stands in the job's way, and a
// shape the fleet can never hold says so instead of reading like a wait (issue 19).
#include <gtest/gtest.h>

#include "testing/decide_helpers.h"
#include "testing/fleet_builder.h"

namespace corral::sched {
namespace {

using core::PackLevel;
using testing::decide_checked;
using testing::FleetBuilder;
using testing::JobBuilder;
using testing::kHour;
using testing::kNoBackfill;
using testing::kNow;
using testing::pending_of;
using testing::placement_of;
using testing::whole;

// With EASY backfill on, the head of the queue waits for A100; job 2 waits for H100. The
// head's planned start has nothing to do with job 2, so job 2's reason does not name it.
TEST(Explain, BehindNamesOnlyAHeadWaitingForTheSameType) {
  const auto s = FleetBuilder()
                     .dgx("h", "H100")
                     .dgx("x", "A100-80GB")
                     .running(JobBuilder(10).gpus(8).types({"H100"}), whole("h"))
                     .running(JobBuilder(11).gpus(8).types({"A100-80GB"}), whole("x"))
                     .pending(JobBuilder(1).gpus(8).types({"A100-80GB"}).queued_at(1))
                     .pending(JobBuilder(2).gpus(8).types({"H100"}).queued_at(2))
                     .pending(JobBuilder(3).gpus(8).types({"A100-80GB"}).queued_at(3))
                     .build();
  const Decisions d = decide_checked(s, SchedulerConfig{.backfill = true}, kNow);
  ASSERT_NE(pending_of(d, 1), nullptr);
  EXPECT_EQ(pending_of(d, 1)->kind, PendingKind::kWaiting);
  ASSERT_NE(pending_of(d, 2), nullptr);
  EXPECT_EQ(pending_of(d, 2)->reason, "capacity: 0 of 8 H100 free");
  ASSERT_NE(pending_of(d, 3), nullptr);  // the same type as the head: behind it
  EXPECT_NE(pending_of(d, 3)->reason.find("behind job 1"), std::string::npos);
}

// Reservation "big" holds both GB200 trays for another tenant inside its window: a job
// of cv sees idle GPUs it may not use, and the reason says who holds them.
TEST(Explain, CapacityCountsGpusHeldByReservations) {
  const auto s = FleetBuilder()
                     .node("g1", "GB200", 4, 4)
                     .node("g2", "GB200", 4, 4)
                     .reservation("big", "vision", "GB200", 8, 9 * kHour, 14 * kHour)
                     .pending(JobBuilder(1).tenant("cv").gpus(4))
                     .build();
  const Decisions d = decide_checked(s, kNoBackfill, kNow);
  ASSERT_NE(pending_of(d, 1), nullptr);
  EXPECT_EQ(pending_of(d, 1)->kind, PendingKind::kCapacity);
  EXPECT_EQ(pending_of(d, 1)->reason, "capacity: 0 of 4 GB200 free (8 held by reservation big)");
}

TEST(Explain, CapacityCountsGpusOutOfService) {
  const auto s =
      FleetBuilder()
          .dgx("a")
          .dgx("b")
          .dgx("c")
          .admin("a", core::NodeAdminState::kCordoned)
          .unhealthy("b", 0)
          .running(JobBuilder(1).gpus(7),
                   {{"b", 1}, {"b", 2}, {"b", 3}, {"b", 4}, {"b", 5}, {"b", 6}, {"b", 7}})
          .running(JobBuilder(2).gpus(4), {{"c", 0}, {"c", 1}, {"c", 2}, {"c", 3}})
          .pending(JobBuilder(3).gpus(8))
          .build();
  const Decisions d = decide_checked(s, kNoBackfill, kNow);
  ASSERT_NE(pending_of(d, 3), nullptr);
  EXPECT_EQ(pending_of(d, 3)->reason,
            "capacity: 4 of 8 H100 free (8 on cordoned/draining nodes, 1 unhealthy)");
}

// A node whose agent stopped answering is lost, not unhealthy: the reason says which
// (issue 38 item 13: its GPUs read "8 unhealthy"), and nothing is placed on it.
TEST(Explain, ALostNodesGpusAreCountedAsOnALostNodeNotUnhealthy) {
  const auto s = FleetBuilder()
                     .dgx("a")
                     .dgx("b")
                     .lost("a")
                     .unhealthy("b", 0)
                     .running(JobBuilder(1).gpus(4), {{"b", 1}, {"b", 2}, {"b", 3}, {"b", 4}})
                     .pending(JobBuilder(3).gpus(8))
                     .pending(JobBuilder(4).gpus(2))
                     .build();
  const Decisions d = decide_checked(s, kNoBackfill, kNow);
  ASSERT_NE(pending_of(d, 3), nullptr);
  EXPECT_EQ(pending_of(d, 3)->reason, "capacity: 3 of 8 H100 free (8 on lost nodes, 1 unhealthy)");
  ASSERT_NE(placement_of(d, 4), nullptr);
  EXPECT_EQ(testing::nodes_of(*placement_of(d, 4)), std::set<std::string>{"b"});
}

// Two leaves of 16 GPUs: 24 GPUs on one leaf can never be had, busy or not.
TEST(Explain, AShapeTheFleetCanNeverHoldIsUnschedulable) {
  FleetBuilder f;
  f.dgx("a", "H100", {.leaf = "l1"}).dgx("b", "H100", {.leaf = "l1"});
  f.dgx("c", "H100", {.leaf = "l2"}).dgx("d", "H100", {.leaf = "l2"});
  f.pending(JobBuilder(1).gpus(24).pack(PackLevel::kLeaf));
  const Decisions idle = decide_checked(f.build(), {}, kNow);
  ASSERT_NE(pending_of(idle, 1), nullptr);
  EXPECT_EQ(pending_of(idle, 1)->kind, PendingKind::kUnschedulable);
  EXPECT_EQ(pending_of(idle, 1)->reason,
            "unschedulable: needs 24 H100 on one leaf switch; the largest leaf has 16");
  EXPECT_TRUE(idle.planned_starts.empty());

  const Decisions busy =
      decide_checked(FleetBuilder(f).running(JobBuilder(2).gpus(8), whole("a")).build(), {}, kNow);
  ASSERT_NE(pending_of(busy, 1), nullptr);
  EXPECT_EQ(pending_of(busy, 1)->kind, PendingKind::kUnschedulable);

  // Whole nodes of 8 on one leaf: 3 such nodes are needed, each leaf has 2.
  const Decisions split = decide_checked(
      FleetBuilder(f).pending(JobBuilder(3).gpus(24).per_node(8).pack(PackLevel::kLeaf)).build(),
      {}, kNow);
  ASSERT_NE(pending_of(split, 3), nullptr);
  EXPECT_EQ(pending_of(split, 3)->reason,
            "unschedulable: needs 3 nodes with 8 H100 on one leaf switch; the largest leaf has 2");
}

// 40 GPUs of any type when no type has 40: never, though quota would also refuse it.
TEST(Explain, NoAcceptableTypeCanEverHoldIt) {
  const auto s = FleetBuilder()
                     .dgx("h1", "H100")
                     .dgx("h2", "H100")
                     .dgx("a1", "A100-80GB")
                     .default_quota("nlp", 8, 0)
                     .pending(JobBuilder(1).tenant("nlp").gpus(40))
                     .build();
  const Decisions d = decide_checked(s, {}, kNow);
  ASSERT_NE(pending_of(d, 1), nullptr);
  EXPECT_EQ(pending_of(d, 1)->kind, PendingKind::kUnschedulable);
  EXPECT_EQ(pending_of(d, 1)->reason,
            "unschedulable: no acceptable GPU type can ever hold it (closest: asks for 40 H100 "
            "but the fleet has 16)");
}

// The preferred type can never hold 16 GPUs, the second can once a preemptible job
// leaves: the job is not unschedulable, and it preempts on the second type.
TEST(Explain, ATypeThatNeverFitsDoesNotHideOneThatWill) {
  const auto s =
      FleetBuilder()
          .dgx("h1", "H100")
          .dgx("a1", "A100-80GB")
          .dgx("a2", "A100-80GB")
          .running(JobBuilder(1).tier(0).preemptible().gpus(8).types({"A100-80GB"}), whole("a1"))
          .running(JobBuilder(2).tier(0).preemptible().gpus(8).types({"A100-80GB"}), whole("a2"))
          .pending(JobBuilder(3).tier(2).gpus(16).types({"H100", "A100-80GB"}))
          .build();
  const Decisions d = decide_checked(s, {}, kNow);
  EXPECT_EQ(d.preemptions.size(), 2u);
  ASSERT_NE(placement_of(d, 3), nullptr);
  EXPECT_EQ(placement_of(d, 3)->gpu_type.value, "A100-80GB");
}

}  // namespace
}  // namespace corral::sched
