// Gang placement on small hand-drawn clusters whose right answer can be seen.
#include <gtest/gtest.h>

#include "testing/decide_helpers.h"
#include "testing/fleet_builder.h"

namespace corral::sched {
namespace {

using core::PackLevel;
using core::TopologyMode;
using testing::decide_checked;
using testing::FleetBuilder;
using testing::indices_on;
using testing::JobBuilder;
using testing::kNoBackfill;
using testing::nodes_of;
using testing::pending_of;
using testing::placement_of;

// These tests look at placement and its reasons alone; backfill would turn the first
// blocked job's reason into its planned start.

// Two DGX nodes, one with a failed GPU: an 8-GPU job can only go to the healthy one.
TEST(Place, EightGpuJobAvoidsNodeWithFailedGpu) {
  const auto s = FleetBuilder()
                     .dgx("dgx1")
                     .dgx("dgx2")
                     .unhealthy("dgx1", 3)
                     .pending(JobBuilder(1).gpus(8))
                     .build();
  const Decisions d = decide_checked(s);
  const Placement* p = placement_of(d, 1);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(nodes_of(*p), std::set<std::string>{"dgx2"});
  EXPECT_EQ(p->packed, PackLevel::kNvlink);
}

// The 7 healthy GPUs of dgx1 are the best fit for a 7-GPU job; the whole node stays free.
TEST(Place, BestFitKeepsWholeNodesFree) {
  const auto s = FleetBuilder()
                     .dgx("dgx1")
                     .dgx("dgx2")
                     .unhealthy("dgx1", 0)
                     .pending(JobBuilder(1).gpus(7))
                     .pending(JobBuilder(2).gpus(8))
                     .build();
  const Decisions d = decide_checked(s);
  ASSERT_NE(placement_of(d, 1), nullptr);
  ASSERT_NE(placement_of(d, 2), nullptr);
  EXPECT_EQ(nodes_of(*placement_of(d, 1)), std::set<std::string>{"dgx1"});
  EXPECT_EQ(nodes_of(*placement_of(d, 2)), std::set<std::string>{"dgx2"});
}

// Small jobs fill the fullest node first rather than cutting into an empty one.
TEST(Place, SingleGpuGoesToTheFullestNode) {
  const auto s = FleetBuilder()
                     .dgx("a")
                     .dgx("b")
                     .running(JobBuilder(1).gpus(6),
                              {{"b", 0}, {"b", 1}, {"b", 2}, {"b", 3}, {"b", 4}, {"b", 5}})
                     .pending(JobBuilder(2).gpus(1))
                     .build();
  const Decisions d = decide_checked(s);
  ASSERT_NE(placement_of(d, 2), nullptr);
  EXPECT_EQ(nodes_of(*placement_of(d, 2)), std::set<std::string>{"b"});
}

// An 8-GPU PCIe box with NVLink pairs (0-1, 2-3, ...): a 2-GPU job gets a bridged pair,
// and a second one the best-fit pair, never one GPU from each of two pairs.
TEST(Place, PcieBoxGivesNvlinkPairs) {
  const auto s = FleetBuilder()
                     .pcie_pairs("box")
                     .running(JobBuilder(1).gpus(1).types({"L40S"}), {{"box", 0}})
                     .pending(JobBuilder(2).gpus(2).queued_at(1))
                     .pending(JobBuilder(3).gpus(1).queued_at(2))
                     .build();
  const Decisions d = decide_checked(s);
  ASSERT_NE(placement_of(d, 2), nullptr);
  const auto pair = indices_on(*placement_of(d, 2), "box");
  ASSERT_EQ(pair.size(), 2u);
  EXPECT_EQ(*pair.begin() / 2, *pair.rbegin() / 2) << "GPUs of one NVLink pair";
  EXPECT_EQ(placement_of(d, 2)->packed, PackLevel::kNvlink);
  // The 1-GPU job takes GPU 1, the other half of the broken pair (best fit).
  ASSERT_NE(placement_of(d, 3), nullptr);
  EXPECT_EQ(indices_on(*placement_of(d, 3), "box"), std::set<std::int32_t>{1});
}

// With pairs 0-1 and 2-3 half used, a job requiring one NVLink domain for 2 GPUs waits
// for a whole pair; preferred takes two loose GPUs.
TEST(Place, RequiredNvlinkWaitsPreferredSpreads) {
  FleetBuilder f;
  f.node("box", "L40S", 4, 2)
      .running(JobBuilder(1).types({"L40S"}), {{"box", 0}})
      .running(JobBuilder(2).types({"L40S"}), {{"box", 2}});
  const auto required =
      FleetBuilder(f).pending(JobBuilder(3).gpus(2).pack(PackLevel::kNvlink)).build();
  const Decisions d1 = decide_checked(required, kNoBackfill);
  ASSERT_NE(pending_of(d1, 3), nullptr);
  EXPECT_EQ(pending_of(d1, 3)->kind, PendingKind::kTopology);
  EXPECT_EQ(pending_of(d1, 3)->reason,
            "topology: no NVLink domain has 2 free L40S (most on one node: 2)");

  const auto preferred =
      FleetBuilder(f)
          .pending(JobBuilder(3).gpus(2).pack(PackLevel::kNvlink, TopologyMode::kPreferred))
          .build();
  const Decisions d2 = decide_checked(preferred);
  ASSERT_NE(placement_of(d2, 3), nullptr);
  EXPECT_EQ(placement_of(d2, 3)->packed, PackLevel::kNode);
}

// A 2-GPU job goes to the fullest NVLink domain that fits anywhere in the fleet: a free
// pair of a PCIe server, not two GPUs of an 8-GPU NVSwitch domain, whether that domain
// is whole (and first by index) or partly used (on the fuller node).
TEST(Place, SmallJobTakesTheFullestNvlinkDomainInTheFleet) {
  for (const std::int32_t busy : {0, 2}) {
    SCOPED_TRACE(busy);
    FleetBuilder f;
    f.dgx("a").node("b", "H100", 8, 2);
    std::vector<std::pair<std::string, std::int32_t>> held;
    for (std::int32_t i = 0; i < busy; ++i) held.push_back({"a", i});
    if (busy > 0) f.running(JobBuilder(1).gpus(busy), held);
    const Decisions d = decide_checked(FleetBuilder(f).pending(JobBuilder(2).gpus(2)).build());
    ASSERT_NE(placement_of(d, 2), nullptr);
    EXPECT_EQ(indices_on(*placement_of(d, 2), "b"), (std::set<std::int32_t>{0, 1}));
  }
  // On the PCIe server with pair 0-1 broken, pair 2-3 fits exactly; a whole pair on a
  // later server does not beat it, and of two equal pairs the first by index wins.
  const auto s = FleetBuilder()
                     .node("b", "H100", 8, 2)
                     .node("c", "H100", 8, 2)
                     .running(JobBuilder(1).gpus(1), {{"b", 0}})
                     .pending(JobBuilder(2).gpus(2))
                     .build();
  const Decisions d = decide_checked(s);
  ASSERT_NE(placement_of(d, 2), nullptr);
  EXPECT_EQ(indices_on(*placement_of(d, 2), "b"), (std::set<std::int32_t>{2, 3}));
}

// A GB200 NVL72-style rack: 18 trays of 4 GPUs in one rack-wide NVLink domain. A 16-GPU
// job requiring NVLink gets 4 whole trays of that rack, not a spread over two racks.
TEST(Place, Nvl72RackIsOneNvlinkDomain) {
  const auto s = FleetBuilder()
                     .nvl_rack("nvl-a", 18, {.leaf = "l1"})
                     .nvl_rack("nvl-b", 18, {.leaf = "l2"})
                     .pending(JobBuilder(1).gpus(16).pack(PackLevel::kNvlink))
                     .build();
  const Decisions d = decide_checked(s);
  const Placement* p = placement_of(d, 1);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(nodes_of(*p).size(), 4u);
  const std::string rack = nodes_of(*p).begin()->substr(0, 5);
  for (const auto& n : nodes_of(*p)) EXPECT_EQ(n.substr(0, 5), rack);
  EXPECT_EQ(p->packed, PackLevel::kNvlink);
}

// 16 GPUs needing one NVLink domain on DGX nodes (8 per NVSwitch) can never fit.
TEST(Place, NvlinkGangLargerThanAnyDomainWaitsWithReason) {
  const auto s = FleetBuilder()
                     .dgx("a")
                     .dgx("b")
                     .pending(JobBuilder(1).gpus(16).pack(PackLevel::kNode))
                     .build();
  const Decisions d = decide_checked(s);
  ASSERT_NE(pending_of(d, 1), nullptr);
  EXPECT_EQ(pending_of(d, 1)->kind, PendingKind::kUnschedulable);
  EXPECT_EQ(pending_of(d, 1)->reason,
            "unschedulable: requires one node but the largest H100 node has 8 GPUs");
}

// A 32-GPU gang with 8 per node, required on one leaf: leaf l1 has 3 free whole nodes,
// leaf l2 has 4, so it goes to l2, whole nodes only.
TEST(Place, MultiNodeGangOnOneLeafUsesWholeNodes) {
  FleetBuilder f;
  for (int i = 0; i < 4; ++i) f.dgx("l1n" + std::to_string(i), "H100", {.leaf = "l1"});
  for (int i = 0; i < 5; ++i) f.dgx("l2n" + std::to_string(i), "H100", {.leaf = "l2"});
  f.running(JobBuilder(1), {{"l1n0", 0}})
      .running(JobBuilder(2), {{"l2n0", 0}})
      .pending(JobBuilder(3).gpus(32).per_node(8).pack(PackLevel::kLeaf));
  const Decisions d = decide_checked(f.build());
  const Placement* p = placement_of(d, 3);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(nodes_of(*p), (std::set<std::string>{"l2n1", "l2n2", "l2n3", "l2n4"}));
  EXPECT_EQ(p->packed, PackLevel::kLeaf);
}

// Best fit across leaves: a 16-GPU gang goes to the leaf with the least free capacity
// that holds it, keeping the big leaf whole for bigger gangs.
TEST(Place, GangPicksTheSmallestLeafThatFits) {
  FleetBuilder f;
  for (int i = 0; i < 2; ++i) f.dgx("small" + std::to_string(i), "H100", {.leaf = "l-small"});
  for (int i = 0; i < 8; ++i) f.dgx("big" + std::to_string(i), "H100", {.leaf = "l-big"});
  f.pending(JobBuilder(1).gpus(16).per_node(8).pack(PackLevel::kLeaf));
  const Decisions d = decide_checked(f.build());
  ASSERT_NE(placement_of(d, 1), nullptr);
  EXPECT_EQ(nodes_of(*placement_of(d, 1)), (std::set<std::string>{"small0", "small1"}));
}

// No leaf can ever hold the gang: required is unschedulable (it would wait forever);
// preferred spreads over the spine.
TEST(Place, RequiredLeafNeverFitsPreferredWidensToSpine) {
  FleetBuilder f;
  for (int i = 0; i < 2; ++i) f.dgx("a" + std::to_string(i), "H100", {.leaf = "la"});
  for (int i = 0; i < 2; ++i) f.dgx("b" + std::to_string(i), "H100", {.leaf = "lb"});
  const auto required =
      FleetBuilder(f).pending(JobBuilder(1).gpus(32).per_node(8).pack(PackLevel::kLeaf)).build();
  const Decisions d1 = decide_checked(required);
  ASSERT_NE(pending_of(d1, 1), nullptr);
  EXPECT_EQ(pending_of(d1, 1)->kind, PendingKind::kUnschedulable);
  EXPECT_EQ(pending_of(d1, 1)->reason,
            "unschedulable: needs 4 nodes with 8 H100 on one leaf switch; the largest leaf has 2");

  const auto preferred = FleetBuilder(f)
                             .pending(JobBuilder(1).gpus(32).per_node(8).pack(
                                 PackLevel::kLeaf, TopologyMode::kPreferred))
                             .build();
  const Decisions d2 = decide_checked(preferred);
  ASSERT_NE(placement_of(d2, 1), nullptr);
  EXPECT_EQ(placement_of(d2, 1)->packed, PackLevel::kSpine);
}

// Any split: whole nodes first, then the remainder on the fullest node that takes it.
TEST(Place, AnySplitUsesWholeNodesThenBestFitRemainder) {
  const auto s =
      FleetBuilder()
          .dgx("a")
          .dgx("b")
          .dgx("c")
          .running(JobBuilder(1).gpus(5), {{"c", 0}, {"c", 1}, {"c", 2}, {"c", 3}, {"c", 4}})
          .pending(JobBuilder(2).gpus(11))
          .build();
  const Decisions d = decide_checked(s);
  const Placement* p = placement_of(d, 2);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(nodes_of(*p).size(), 2u);
  EXPECT_EQ(indices_on(*p, "c").size(), 3u);  // the remainder of 3 fills c exactly
}

TEST(Place, SkipsCordonedAndDrainingNodes) {
  const auto s = FleetBuilder()
                     .dgx("a")
                     .dgx("b")
                     .dgx("c")
                     .admin("a", core::NodeAdminState::kCordoned)
                     .admin("b", core::NodeAdminState::kDraining)
                     .pending(JobBuilder(1).gpus(8))
                     .pending(JobBuilder(2).gpus(1))
                     .build();
  const Decisions d = decide_checked(s);
  ASSERT_NE(placement_of(d, 1), nullptr);
  EXPECT_EQ(nodes_of(*placement_of(d, 1)), std::set<std::string>{"c"});
  ASSERT_NE(pending_of(d, 2), nullptr);
  EXPECT_EQ(pending_of(d, 2)->reason, "capacity: 0 of 1 H100 free (16 on cordoned/draining nodes)");
}

// Rack r1 is capped at 6,000 W: with 8 H100 (700 W each) running, a ninth GPU in r1
// would pass it, so the job goes to rack r2.
TEST(Place, RackPowerCapIsRespected) {
  const auto s =
      FleetBuilder()
          .dgx("a", "H100", {.rack = "r1"})
          .dgx("b", "H100", {.rack = "r1"})
          .dgx("c", "H100", {.rack = "r2"})
          .rack_cap("r1", 6'000)
          .running(JobBuilder(1).gpus(8),
                   {{"a", 0}, {"a", 1}, {"a", 2}, {"a", 3}, {"a", 4}, {"a", 5}, {"a", 6}, {"a", 7}})
          .pending(JobBuilder(2).gpus(1))
          .build();
  // The running job already exceeds the cap (it was placed before the cap was set);
  // nothing new may go to r1.
  const Decisions d = decide_checked(s);
  ASSERT_NE(placement_of(d, 2), nullptr);
  EXPECT_EQ(nodes_of(*placement_of(d, 2)), std::set<std::string>{"c"});
}

TEST(Place, PowerCapReasonWhenNothingElseFits) {
  const auto s = FleetBuilder()
                     .dgx("a", "H100", {.rack = "r1"})
                     .rack_cap("r1", 2'000)
                     .pending(JobBuilder(1).gpus(4))
                     .build();
  const Decisions d = decide_checked(s);
  ASSERT_NE(pending_of(d, 1), nullptr);
  EXPECT_EQ(pending_of(d, 1)->kind, PendingKind::kPower);
  EXPECT_EQ(pending_of(d, 1)->reason,
            "power: rack r1 has 0 of 2000 W in use; 4 H100 would pass its cap");
}

// Issue 38, item 6: a rack counts each GPU at the power limit its node reports. A 4 x 300 W
// PCIe A100 job fits a 1,500 W rack (at the catalog's 400 W it would need 1,600 W); a
// node that reports nothing counts at the catalog TDP, and the reason says so in watts.
TEST(Place, RackPowerCountsEachNodesReportedPowerLimit) {
  const auto s = FleetBuilder()
                     .node("a", "A100-80GB", 4, 2, {.rack = "r1"})
                     .power_limit("a", 300)
                     .node("b", "A100-80GB", 4, 2, {.rack = "r2"})
                     .rack_cap("r1", 1'500)
                     .rack_cap("r2", 1'500)
                     .pending(JobBuilder(1).gpus(4).types({"A100-80GB"}).queued_at(1))
                     .pending(JobBuilder(2).gpus(4).types({"A100-80GB"}).queued_at(2))
                     .build();
  const Decisions d = decide_checked(s);
  ASSERT_NE(placement_of(d, 1), nullptr);
  EXPECT_EQ(nodes_of(*placement_of(d, 1)), std::set<std::string>{"a"});
  ASSERT_NE(pending_of(d, 2), nullptr);
  EXPECT_EQ(pending_of(d, 2)->kind, PendingKind::kPower);
  EXPECT_EQ(pending_of(d, 2)->reason,
            "power: rack r2 has 0 of 1500 W in use; 4 A100-80GB would pass its cap");
}

TEST(Place, NodeCpusAndMemoryAreRespected) {
  const auto s = FleetBuilder()
                     .dgx("a")
                     .cpus("a", 16, 1'000'000)
                     .pending(JobBuilder(1).gpus(2).cpus_per_gpu(6).queued_at(1))
                     .pending(JobBuilder(2).gpus(1).cpus_per_gpu(6).queued_at(2))
                     .build();
  const Decisions d = decide_checked(s);
  EXPECT_NE(placement_of(d, 1), nullptr);
  ASSERT_NE(pending_of(d, 2), nullptr);  // 12 of 16 CPUs taken; 6 more do not fit
  EXPECT_EQ(pending_of(d, 2)->kind, PendingKind::kCapacity);
}

// A node whose CPUs hold fewer GPUs than it has free still gives what they hold. Node a
// has 4 free GPUs and CPUs for 2 of the job's (5 each); b has 2 free: 2 + 2. (Found by
// SchedProperty.NeverPendingWhenAPlacementExists, seed 90186: the node used to be passed
// over whole.)
TEST(Place, ANodeShortOfCpusGivesTheGpusItsCpusHold) {
  const auto s = FleetBuilder()
                     .node("a", "H100", 4, 4)
                     .node("b", "H100", 4, 4)
                     .cpus("a", 10, 1'000'000)
                     .running(JobBuilder(9).gpus(2), {{"b", 0}, {"b", 1}})
                     .pending(JobBuilder(1).gpus(4).cpus_per_gpu(5))
                     .build();
  const Decisions d = decide_checked(s, kNoBackfill);
  const Placement* p = placement_of(d, 1);
  ASSERT_NE(p, nullptr) << (pending_of(d, 1) ? pending_of(d, 1)->reason : "");
  EXPECT_EQ(indices_on(*p, "a").size(), 2u);
  EXPECT_EQ(indices_on(*p, "b").size(), 2u);
}

// Any of the acceptable types, in the user's order of preference.
TEST(Place, AcceptsAnyListedTypeInPreferenceOrder) {
  const auto s =
      FleetBuilder()
          .dgx("h", "H100")
          .dgx("a", "A100-80GB")
          .running(JobBuilder(1).gpus(8).types({"H100"}),
                   {{"h", 0}, {"h", 1}, {"h", 2}, {"h", 3}, {"h", 4}, {"h", 5}, {"h", 6}, {"h", 7}})
          .pending(JobBuilder(2).gpus(4).types({"H100", "A100-80GB"}).queued_at(1))
          .pending(JobBuilder(3).gpus(4).types({"T4"}).queued_at(2))
          .build();
  const Decisions d = decide_checked(s);
  ASSERT_NE(placement_of(d, 2), nullptr);
  EXPECT_EQ(placement_of(d, 2)->gpu_type.value, "A100-80GB");
  ASSERT_NE(pending_of(d, 3), nullptr);
  EXPECT_EQ(pending_of(d, 3)->kind, PendingKind::kUnschedulable);
}

TEST(Place, TooBigForTheFleetIsUnschedulable) {
  const auto s = FleetBuilder().dgx("a").pending(JobBuilder(1).gpus(16)).build();
  const Decisions d = decide_checked(s);
  ASSERT_NE(pending_of(d, 1), nullptr);
  EXPECT_EQ(pending_of(d, 1)->reason, "unschedulable: asks for 16 H100 but the fleet has 8");
}

// Issue 38 item 8: a job that can never run was first in the queue. It has no position
// (0), and the runnable jobs behind it are numbered from 1.
TEST(Place, AJobThatCanNeverRunHoldsNoPlaceInTheQueue) {
  const auto s =
      FleetBuilder()
          .dgx("a")
          .running(JobBuilder(9).gpus(8),
                   {{"a", 0}, {"a", 1}, {"a", 2}, {"a", 3}, {"a", 4}, {"a", 5}, {"a", 6}, {"a", 7}})
          .pending(JobBuilder(1).gpus(16).queued_at(1))
          .pending(JobBuilder(2).gpus(4).queued_at(2))
          .pending(JobBuilder(3).gpus(4).queued_at(3))
          .build();
  const Decisions d = decide_checked(s);
  ASSERT_NE(pending_of(d, 1), nullptr);
  EXPECT_EQ(pending_of(d, 1)->kind, PendingKind::kUnschedulable);
  EXPECT_EQ(pending_of(d, 1)->position, 0);
  ASSERT_NE(pending_of(d, 2), nullptr);
  EXPECT_EQ(pending_of(d, 2)->position, 1);
  ASSERT_NE(pending_of(d, 3), nullptr);
  EXPECT_EQ(pending_of(d, 3)->position, 2);
}

// Gangs are all or nothing: 12 free GPUs do not give a 16-GPU job 12.
TEST(Place, GangIsAllOrNothing) {
  const auto s = FleetBuilder()
                     .dgx("a")
                     .dgx("b")
                     .running(JobBuilder(1).gpus(4), {{"a", 0}, {"a", 1}, {"a", 2}, {"a", 3}})
                     .pending(JobBuilder(2).gpus(16))
                     .build();
  const Decisions d = decide_checked(s, kNoBackfill);
  EXPECT_TRUE(d.placements.empty());
  ASSERT_NE(pending_of(d, 2), nullptr);
  EXPECT_EQ(pending_of(d, 2)->reason, "capacity: 12 of 16 H100 free");
}

}  // namespace
}  // namespace corral::sched
