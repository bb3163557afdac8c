// Shares of a GPU (JobRequest::gpu_milli): side by side on one GPU, never on a GPU a
// whole-GPU job holds, counted exactly against quota, placed against fragmentation.
#include <gtest/gtest.h>

#include "sched/decide.h"
#include "testing/decide_helpers.h"
#include "testing/fleet_builder.h"

namespace corral::sched {
namespace {

using testing::decide_checked;
using testing::FleetBuilder;
using testing::JobBuilder;
using testing::pending_of;
using testing::placement_of;

SchedulerConfig with_rule(SharePlacement rule) {
  SchedulerConfig c;
  c.share_placement = rule;
  return c;
}

TEST(Share, TwoHalvesShareOneGpuAndAWholeGangCannotHaveIt) {
  const auto s = FleetBuilder()
                     .dgx("n1")
                     .pending(JobBuilder(1).share(500).queued_at(0))
                     .pending(JobBuilder(2).share(500).queued_at(1))
                     .pending(JobBuilder(3).gpus(8).queued_at(2))
                     .build();
  const Decisions d = decide_checked(s);
  ASSERT_NE(placement_of(d, 1), nullptr);
  ASSERT_NE(placement_of(d, 2), nullptr);
  EXPECT_EQ(placement_of(d, 1)->gpus, placement_of(d, 2)->gpus);
  ASSERT_EQ(placement_of(d, 1)->gpus.size(), 1u);
  ASSERT_NE(pending_of(d, 3), nullptr);
  EXPECT_EQ(pending_of(d, 3)->kind, PendingKind::kCapacity);
}

TEST(Share, AWholeJobNeverTakesAGpuSharesHoldAndAShareNeverTakesAHeldOne) {
  // n1 has one GPU held whole and one a share holds; a 1-GPU job gets neither.
  const auto s = FleetBuilder()
                     .node("n1", "H100", 2, 2)
                     .running(JobBuilder(1).gpus(1), {{"n1", 0}})
                     .running(JobBuilder(2).share(300), {{"n1", 1}})
                     .pending(JobBuilder(3).gpus(1))
                     .pending(JobBuilder(4).share(700))
                     .pending(JobBuilder(5).share(100))
                     .build();
  const Decisions d = decide_checked(s);
  EXPECT_EQ(placement_of(d, 3), nullptr);
  ASSERT_NE(placement_of(d, 4), nullptr);
  EXPECT_EQ(placement_of(d, 4)->gpus.front().index, 1);
  ASSERT_NE(pending_of(d, 5), nullptr);  // 300 + 700 fill GPU 1
  EXPECT_EQ(pending_of(d, 5)->kind, PendingKind::kCapacity);
  EXPECT_NE(pending_of(d, 5)->reason.find("0.1 of a GPU"), std::string::npos)
      << pending_of(d, 5)->reason;
}

TEST(Share, QuotaCountsSharesExactly) {
  const auto s = FleetBuilder()
                     .dgx("n1")
                     .quota("t1", "H100", 1, 0)
                     .running(JobBuilder(1).share(500), {{"n1", 0}})
                     .pending(JobBuilder(2).share(500).queued_at(0))
                     .pending(JobBuilder(3).share(250).queued_at(1))
                     .build();
  const Decisions d = decide_checked(s);
  ASSERT_NE(placement_of(d, 2), nullptr);
  EXPECT_FALSE(placement_of(d, 2)->borrowed);
  ASSERT_NE(pending_of(d, 3), nullptr);
  EXPECT_EQ(pending_of(d, 3)->kind, PendingKind::kQuota);
  EXPECT_EQ(pending_of(d, 3)->reason,
            "quota: tenant t1 holds 1/1 guaranteed H100, may not borrow, and needs 0.25 more");
}

// A guarantee of 1.5 GPUs with 0.5 to borrow: three halves fill the guarantee, a quarter
// more borrows, and a half past that waits at the borrow limit, each counted exactly.
TEST(Share, AGuaranteeWithAFractionIsFilledExactly) {
  const auto s = FleetBuilder()
                     .dgx("n1")
                     .quota_milli("t1", "H100", 1'500, 500)
                     .running(JobBuilder(1).share(500), {{"n1", 0}})
                     .running(JobBuilder(2).share(500), {{"n1", 1}})
                     .pending(JobBuilder(3).share(500).queued_at(0))
                     .pending(JobBuilder(4).share(250).queued_at(1))
                     .pending(JobBuilder(5).share(500).queued_at(2))
                     .build();
  const Decisions d = decide_checked(s);
  ASSERT_NE(placement_of(d, 3), nullptr);
  EXPECT_FALSE(placement_of(d, 3)->borrowed);
  ASSERT_NE(placement_of(d, 4), nullptr);
  EXPECT_TRUE(placement_of(d, 4)->borrowed);
  ASSERT_NE(pending_of(d, 5), nullptr);
  EXPECT_EQ(pending_of(d, 5)->reason,
            "quota: tenant t1 holds 1.75 H100 (1.5 guaranteed + 0.25/0.5 borrowed) and is at its "
            "borrow limit for 0.5 more");
}

TEST(Share, GpuMemoryIsNeverPromisedTwice) {
  // An H100 has 80 GiB: 60 GiB are promised, so 30 more do not fit and 20 do.
  const auto s = FleetBuilder()
                     .node("n1", "H100", 1, 1)
                     .running(JobBuilder(1).share(250, 60 * 1024), {{"n1", 0}})
                     .pending(JobBuilder(2).share(250, 30 * 1024).queued_at(0))
                     .pending(JobBuilder(3).share(250, 20 * 1024).queued_at(1))
                     .pending(JobBuilder(4).share(250, 100 * 1024).queued_at(2))
                     .build();
  const Decisions d = decide_checked(s);
  EXPECT_EQ(placement_of(d, 2), nullptr);
  ASSERT_NE(placement_of(d, 3), nullptr);
  ASSERT_NE(pending_of(d, 4), nullptr);
  EXPECT_EQ(pending_of(d, 4)->kind, PendingKind::kUnschedulable);
}

TEST(Share, IsNeverAPreemptionVictim) {
  // A preemptible share holds n1's only GPU; a higher tier's 1-GPU job waits rather than
  // stop it.
  const auto s = FleetBuilder()
                     .node("n1", "H100", 1, 1)
                     .running(JobBuilder(1).share(500).tier(0).preemptible(), {{"n1", 0}})
                     .run_state(1, {.started_ms = 0})
                     .pending(JobBuilder(2).gpus(1).tier(2))
                     .build();
  const Decisions d = decide_checked(s, {}, testing::kNow);
  EXPECT_TRUE(d.preemptions.empty());
  EXPECT_EQ(placement_of(d, 2), nullptr);
}

// n1 has one GPU left free and n2 is idle; an 8-GPU job waits behind the share.
FleetBuilder one_gpu_left_and_an_idle_node() {
  return FleetBuilder()
      .dgx("n1")
      .dgx("n2")
      .running(JobBuilder(1).gpus(7),
               {{"n1", 0}, {"n1", 1}, {"n1", 2}, {"n1", 3}, {"n1", 4}, {"n1", 5}, {"n1", 6}})
      .pending(JobBuilder(2).share(400).queued_at(0))
      .pending(JobBuilder(3).gpus(8).queued_at(1));
}

TEST(Share, FragmentationKeepsTheIdleNodeWholeForTheGang) {
  const auto s = one_gpu_left_and_an_idle_node().build();
  for (SharePlacement rule :
       {SharePlacement::kFragmentation, SharePlacement::kBestFit, SharePlacement::kPacking}) {
    const Decisions d = decide_checked(s, with_rule(rule));
    ASSERT_NE(placement_of(d, 2), nullptr);
    EXPECT_EQ(placement_of(d, 2)->gpus.front(), (GpuRef{core::NodeId("n1"), 7}));
    ASSERT_NE(placement_of(d, 3), nullptr) << static_cast<int>(rule);
    EXPECT_EQ(testing::nodes_of(*placement_of(d, 3)), std::set<std::string>{"n2"});
  }
}

TEST(Share, FragmentationLeavesRoomWhereTheWorkloadCanUseIt) {
  // GPU 0 has 0.3 left, GPU 1 has 0.6; the workload asks 0.7, 0.4, 0.3 and 0.6. A 0.3 on
  // GPU 1 would leave two 0.3s that no 0.4 or 0.6 fits; on GPU 0 it fills that GPU and
  // GPU 1 keeps room for the 0.6 behind it.
  const auto s = FleetBuilder()
                     .node("n1", "H100", 2, 2)
                     .running(JobBuilder(1).share(700), {{"n1", 0}})
                     .running(JobBuilder(2).share(400), {{"n1", 1}})
                     .pending(JobBuilder(4).share(300).queued_at(0))
                     .pending(JobBuilder(5).share(600).queued_at(1))
                     .build();
  const Decisions d = decide_checked(s);
  ASSERT_NE(placement_of(d, 4), nullptr);
  EXPECT_EQ(placement_of(d, 4)->gpus.front().index, 0);
  ASSERT_NE(placement_of(d, 5), nullptr);
  EXPECT_EQ(placement_of(d, 5)->gpus.front().index, 1);
}

TEST(Share, RandomPicksSomeGpuItFits) {
  const auto s = one_gpu_left_and_an_idle_node().build();
  const Decisions d = decide_checked(s, with_rule(SharePlacement::kRandom));
  ASSERT_NE(placement_of(d, 2), nullptr);
  EXPECT_EQ(to_json(d),
            to_json(decide_checked(s, with_rule(SharePlacement::kRandom))));  // by job id
}

TEST(Share, AGangOfSharesGetsAGpuEachAllOrNothing) {
  // Three halves: n1's GPU 0 has room for one, GPU 1 is held whole, GPU 2 is free; n2 has
  // one free GPU. Each half gets a GPU of its own, and quota counts 1.5 GPUs.
  const auto s = FleetBuilder()
                     .node("n1", "H100", 3, 3)
                     .node("n2", "H100", 1, 1)
                     .quota("t1", "H100", 2, 0)
                     .running(JobBuilder(1).share(500), {{"n1", 0}})
                     .running(JobBuilder(2).gpus(1).tenant("t2"), {{"n1", 1}})
                     .pending(JobBuilder(3).share(500).gpus(3).queued_at(0))
                     .build();
  const Decisions d = decide_checked(s);
  ASSERT_NE(placement_of(d, 3), nullptr) << to_json(d);
  EXPECT_EQ(placement_of(d, 3)->gpus,
            (std::vector<GpuRef>{
                {core::NodeId("n1"), 0}, {core::NodeId("n1"), 2}, {core::NodeId("n2"), 0}}));
  EXPECT_FALSE(placement_of(d, 3)->borrowed);  // 0.5 + 1.5 = its guarantee of 2

  // Four halves find only three GPUs with room: none is placed.
  const auto four = FleetBuilder()
                        .node("n1", "H100", 3, 3)
                        .node("n2", "H100", 1, 1)
                        .running(JobBuilder(1).share(500), {{"n1", 0}})
                        .running(JobBuilder(2).gpus(1).tenant("t2"), {{"n1", 1}})
                        .pending(JobBuilder(3).share(500).gpus(4))
                        .build();
  const Decisions none = decide_checked(four);
  EXPECT_TRUE(none.placements.empty());
  ASSERT_NE(pending_of(none, 3), nullptr);
  EXPECT_EQ(pending_of(none, 3)->reason,
            "capacity: fewer than 4 GPUs of one acceptable type have 0.5 of a GPU free on a node "
            "with room for its CPUs and memory");
}

// A reservation of b opens at 11h; a share of the reservation's tenant runs on b's GPU 0, whose
// last quarter the fragmentation rule would fill first.
// A share that would still run then stays off b, shared GPU or not (the gate blocks only
// free GPUs; share placement skips what the job's view forbids), and goes to a.
TEST(Share, StaysOffAReservedGpuThatSharesAlreadyHold) {
  const auto s =
      FleetBuilder()
          .dgx("a")
          .dgx("b")
          .reservation_nodes("launch", "nlp", {"b"}, 11 * testing::kHour, 14 * testing::kHour)
          .running(JobBuilder(1).tenant("nlp").share(750), {{"b", 0}})
          .pending(JobBuilder(2).tenant("cv").share(250).max_runtime(core::seconds(4 * 3600)))
          .build();
  const Decisions d = decide_checked(s, {}, testing::kNow);
  ASSERT_NE(placement_of(d, 2), nullptr) << to_json(d);
  EXPECT_EQ(placement_of(d, 2)->gpus.front().node.value, "a");
}

TEST(ShareSnapshot, RefusesSharesThatDoNotFitTheirGpuOrTheRules) {
  const auto refused = [](const FleetBuilder& b) { return build_snapshot(b.input()).status(); };
  FleetBuilder over = FleetBuilder()
                          .node("n1", "H100", 1, 1)
                          .running(JobBuilder(1).share(600), {{"n1", 0}})
                          .running(JobBuilder(2).share(500), {{"n1", 0}});
  EXPECT_NE(refused(over).message().find("add up to 1100/1000"), std::string::npos)
      << refused(over).to_string();
  FleetBuilder whole = FleetBuilder()
                           .node("n1", "H100", 1, 1)
                           .running(JobBuilder(1).gpus(1), {{"n1", 0}})
                           .running(JobBuilder(2).share(500), {{"n1", 0}});
  EXPECT_NE(refused(whole).message().find("held by a whole-GPU job"), std::string::npos)
      << refused(whole).to_string();
  FleetBuilder whole_after = FleetBuilder()
                                 .node("n1", "H100", 1, 1)
                                 .running(JobBuilder(1).share(500), {{"n1", 0}})
                                 .running(JobBuilder(2).gpus(1), {{"n1", 0}});
  EXPECT_NE(refused(whole_after).message().find("held by two jobs"), std::string::npos);
  FleetBuilder per_node =
      FleetBuilder().dgx("n1").pending(JobBuilder(1).share(500).gpus(2).per_node(2));
  EXPECT_EQ(refused(per_node).field(), "pending[1].gpu_milli");
  FleetBuilder twice =
      FleetBuilder().dgx("n1").running(JobBuilder(1).share(500).gpus(2), {{"n1", 3}, {"n1", 3}});
  EXPECT_NE(refused(twice).message().find("holds one GPU twice"), std::string::npos)
      << refused(twice).to_string();
  FleetBuilder thousand = FleetBuilder().dgx("n1").pending(JobBuilder(1).share(1000));
  EXPECT_EQ(refused(thousand).field(), "pending[1].gpu_milli");
}

TEST(ShareSnapshot, AGpuStaysSharedUntilItsLastShareStops) {
  const auto base = FleetBuilder()
                        .node("n1", "H100", 1, 1)
                        .running(JobBuilder(1).share(500), {{"n1", 0}})
                        .running(JobBuilder(2).share(500), {{"n1", 0}})
                        .build();
  const RunningJob whole{.request = JobBuilder(3).gpus(1).request(),
                         .gpus = {{core::NodeId("n1"), 0}}};
  // One share stops: the GPU is still theirs, so a whole job may not start on it.
  JobsDelta one{.stopped = {core::JobId(1)}, .started = {whole}, .progress = {{core::JobId(2)}}};
  ClusterSnapshot copy = base;
  EXPECT_FALSE(rebuild_snapshot(std::move(copy), one).ok());
  // Both stop: it is free.
  JobsDelta both{.stopped = {core::JobId(1), core::JobId(2)}, .started = {whole}};
  ClusterSnapshot copy2 = base;
  EXPECT_TRUE(rebuild_snapshot(std::move(copy2), both).ok());
}

}  // namespace
}  // namespace corral::sched
