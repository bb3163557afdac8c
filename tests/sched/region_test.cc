// Region-bound jobs (resources.region) on hand-drawn two-region fleets: every GPU they
// get is in their region, at every stage (placement, preemption, backfill, elastic
// growth), and their pending reasons count only their region's nodes.
#include <gtest/gtest.h>

#include "testing/decide_helpers.h"
#include "testing/fleet_builder.h"

namespace corral::sched {
namespace {

using testing::decide_checked;
using testing::FleetBuilder;
using testing::JobBuilder;
using testing::kHour;
using testing::kNoBackfill;
using testing::kNow;
using testing::nodes_of;
using testing::pending_of;
using testing::placement_of;
using testing::Where;
using testing::whole;
using Nodes = std::set<std::string>;

const Where kUs{.region = "us-east"};
const Where kEu{.region = "eu-west"};

// n1 (first by id, so the first choice of a job that may go anywhere) is in us-east, n2
// in eu-west. Two eu-west jobs of 8: the first gets n2, the second waits though n1 is
// free, and says it counts eu-west only; a job with no region takes n1.
TEST(Region, ABoundJobLandsOnlyInItsRegion) {
  const auto s = FleetBuilder()
                     .dgx("n1", "H100", kUs)
                     .dgx("n2", "H100", kEu)
                     .pending(JobBuilder(1).gpus(8).region("eu-west").queued_at(1))
                     .pending(JobBuilder(2).gpus(8).region("eu-west").queued_at(2))
                     .pending(JobBuilder(3).gpus(8).queued_at(3))
                     .build();
  const Decisions d = decide_checked(s, kNoBackfill, kNow);
  ASSERT_NE(placement_of(d, 1), nullptr);
  EXPECT_EQ(nodes_of(*placement_of(d, 1)), Nodes{"n2"});
  ASSERT_NE(pending_of(d, 2), nullptr);
  EXPECT_EQ(pending_of(d, 2)->kind, PendingKind::kCapacity);
  EXPECT_EQ(pending_of(d, 2)->reason, "capacity: 0 of 8 H100 free in region eu-west");
  ASSERT_NE(placement_of(d, 3), nullptr);
  EXPECT_EQ(nodes_of(*placement_of(d, 3)), Nodes{"n1"});
}

// Both regions use the same cluster, spine and leaf names: they are still different
// domains, so a 16-GPU gang of eu-west gets eu-west's two nodes, never a mix.
TEST(Region, AGangStaysInsideItsRegionWhereLabelsRepeat) {
  const auto s = FleetBuilder()
                     .dgx("a1", "H100", kUs)
                     .dgx("a2", "H100", kEu)
                     .dgx("a3", "H100", kUs)
                     .dgx("a4", "H100", kEu)
                     .pending(JobBuilder(1).gpus(16).region("eu-west"))
                     .pending(JobBuilder(2).gpus(12).region("us-east"))
                     .build();
  const Decisions d = decide_checked(s, kNoBackfill, kNow);
  ASSERT_NE(placement_of(d, 1), nullptr);
  EXPECT_EQ(nodes_of(*placement_of(d, 1)), (Nodes{"a2", "a4"}));
  ASSERT_NE(placement_of(d, 2), nullptr);
  EXPECT_EQ(nodes_of(*placement_of(d, 2)), (Nodes{"a1", "a3"}));
}

// A job's region resolves to the fleet's index for it, or says it names none or one no
// node is in.
TEST(Region, TheSnapshotResolvesAJobsRegion) {
  const auto s = FleetBuilder().dgx("n1", "H100", kUs).dgx("n2", "H100", kEu).build();
  ASSERT_EQ(s.region_count(), 2);
  EXPECT_EQ(s.region_of(JobBuilder(1).request()), kAnyRegion);
  EXPECT_EQ(s.region_of(JobBuilder(1).region("mars").request()), kNoSuchRegion);
  const RegionIx eu = s.region_of(JobBuilder(1).region("eu-west").request());
  ASSERT_GE(eu, 0);
  EXPECT_EQ(s.region_name(eu), "eu-west");
  EXPECT_EQ(s.topo()[*s.find_node(core::NodeId("n2"))].region, eu);
}

// The same NVLink rack name in two regions is two racks, never one NVLink domain across
// regions: 16 GPUs in one domain never fit, 8 of eu-west do, on eu-west's trays.
TEST(Region, AnNvlinkRackNeverSpansRegions) {
  FleetBuilder f;
  for (const char* tray : {"u1", "u2"}) {
    f.node(tray, "GB200", 4, 4, {.rack = "nvl", .nvl_rack = "nvl", .region = "us-east"});
  }
  for (const char* tray : {"e1", "e2"}) {
    f.node(tray, "GB200", 4, 4, {.rack = "nvl", .nvl_rack = "nvl", .region = "eu-west"});
  }
  f.pending(JobBuilder(1).gpus(16).pack(core::PackLevel::kNvlink));
  f.pending(JobBuilder(2).gpus(8).pack(core::PackLevel::kNvlink).region("eu-west"));
  const Decisions d = decide_checked(f.build(), kNoBackfill, kNow);
  ASSERT_NE(pending_of(d, 1), nullptr);
  EXPECT_EQ(pending_of(d, 1)->reason,
            "unschedulable: needs 16 GB200 in one NVLink domain; the largest has 8");
  ASSERT_NE(placement_of(d, 2), nullptr);
  EXPECT_EQ(nodes_of(*placement_of(d, 2)), (Nodes{"e1", "e2"}));
}

// What the fleet could never give a region-bound job is judged on its region alone.
TEST(Region, NeverFitsIsJudgedOnTheRegion) {
  const auto s =
      FleetBuilder()
          .dgx("h1", "H100", kUs)
          .dgx("h2", "H100", kUs)
          .dgx("x1", "A100-80GB", kEu)
          .dgx("x2", "A100-80GB", kEu)
          .pending(JobBuilder(1).gpus(8).types({"H100"}).region("eu-west"))
          .pending(JobBuilder(2).gpus(8).types({"H100", "L40S"}).region("eu-west"))
          .pending(JobBuilder(3).gpus(24).types({"A100-80GB"}).region("eu-west"))
          .pending(JobBuilder(4).gpus(4).region("mars"))
          .pending(
              JobBuilder(5).gpus(16).types({"H100"}).pack(core::PackLevel::kNode).region("us-east"))
          .pending(JobBuilder(6).gpus(8).region("eu-west"))  // any type: A100
          .build();
  const Decisions d = decide_checked(s, kNoBackfill, kNow);
  const auto reason = [&](std::int64_t job) {
    const Pending* p = pending_of(d, job);
    EXPECT_NE(p, nullptr) << "job " << job;
    if (p == nullptr) return std::string();
    EXPECT_EQ(p->kind, PendingKind::kUnschedulable) << "job " << job;
    return p->reason;
  };
  EXPECT_EQ(reason(1), "unschedulable: no node in region eu-west has H100");
  EXPECT_EQ(reason(2), "unschedulable: no node in region eu-west has H100");  // no L40S anywhere
  EXPECT_EQ(reason(3), "unschedulable: asks for 24 A100-80GB but region eu-west has 16");
  EXPECT_EQ(reason(4), "unschedulable: no node is in region mars");
  EXPECT_EQ(reason(5),
            "unschedulable: requires one node but the largest H100 node in region us-east has 8 "
            "GPUs");
  ASSERT_NE(placement_of(d, 6), nullptr);
  EXPECT_EQ(placement_of(d, 6)->gpu_type, core::GpuTypeId("A100-80GB"));
}

// Two acceptable types, neither in the region: the reason names both.
TEST(Region, NoAcceptableTypeInTheRegionNamesThemAll) {
  const auto s = FleetBuilder()
                     .dgx("h1", "H100", kUs)
                     .pcie_pairs("l1", "L40S", kUs)
                     .dgx("x1", "A100-80GB", kEu)
                     .pending(JobBuilder(1).gpus(8).types({"H100", "L40S"}).region("eu-west"))
                     .build();
  const Decisions d = decide_checked(s, kNoBackfill, kNow);
  ASSERT_NE(pending_of(d, 1), nullptr);
  EXPECT_EQ(pending_of(d, 1)->reason, "unschedulable: no node in region eu-west has H100 or L40S");
}

// A production job of eu-west preempts the preemptible job in eu-west, never the one in
// us-east, even though both would make room by count; with eu-west's only job protected,
// it preempts no one and waits.
TEST(Region, PreemptsOnlyInsideItsRegion) {
  const auto fleet = [] {
    return FleetBuilder()
        .dgx("n1", "H100", kUs)
        .dgx("n2", "H100", kEu)
        .running(JobBuilder(10).tier(0).gpus(8).preemptible(), whole("n1"));
  };
  const auto s = fleet()
                     .running(JobBuilder(11).tier(0).gpus(8).preemptible(), whole("n2"))
                     .pending(JobBuilder(1).tier(2).gpus(8).region("eu-west"))
                     .build();
  const Decisions d = decide_checked(s, kNoBackfill, kNow);
  ASSERT_EQ(d.preemptions.size(), 1u);
  EXPECT_EQ(d.preemptions[0].victim, core::JobId(11));
  ASSERT_NE(placement_of(d, 1), nullptr);
  EXPECT_EQ(nodes_of(*placement_of(d, 1)), Nodes{"n2"});

  const auto protected_eu = fleet()
                                .running(JobBuilder(11).tier(2).gpus(8), whole("n2"))
                                .pending(JobBuilder(1).tier(2).gpus(8).region("eu-west"))
                                .build();
  const Decisions d2 = decide_checked(protected_eu, kNoBackfill, kNow);
  EXPECT_TRUE(d2.preemptions.empty());
  ASSERT_NE(pending_of(d2, 1), nullptr);
  EXPECT_EQ(pending_of(d2, 1)->reason, "capacity: 0 of 8 H100 free in region eu-west");
}

// The head's planned start rests on the end of a job in its own region: us-east frees
// a node at 11h, but the eu-west job waits for eu-west's, at 14h.
TEST(Region, BackfillPlansFromTheRegionsOwnJobs) {
  const auto s =
      FleetBuilder()
          .dgx("n1", "H100", kUs)
          .dgx("n2", "H100", kEu)
          .running(JobBuilder(10).gpus(8).max_runtime(core::Duration(11 * kHour)), whole("n1"))
          .running(JobBuilder(11).gpus(8).max_runtime(core::Duration(14 * kHour)), whole("n2"))
          .pending(JobBuilder(1).gpus(8).region("eu-west"))
          .build();
  const Decisions d = decide_checked(s, SchedulerConfig{.backfill = true}, kNow);
  ASSERT_EQ(d.planned_starts.size(), 1u);
  EXPECT_EQ(d.planned_starts[0].job, core::JobId(1));
  EXPECT_EQ(d.planned_starts[0].at, core::time_from_ms(14 * kHour));
  for (const GpuRef& g : d.planned_starts[0].gpus) EXPECT_EQ(g.node.value, "n2");
}

// Idle GPUs in us-east that a waiting eu-west job could never use are no reason to keep a
// us-east elastic job from growing into them. Nor for a job that may go anywhere: it
// grows in the region it runs in (a gang stays in one), so it cannot take what the
// waiting job needs.
TEST(Region, ElasticGrowthIsNotHeldBackByAnotherRegionsQueue) {
  const auto fleet = [](const JobBuilder& elastic) {
    return FleetBuilder()
        .dgx("n1", "H100", kUs)
        .dgx("n2", "H100", kEu)
        .running(elastic, {{"n1", 0}, {"n1", 1}, {"n1", 2}, {"n1", 3}})
        .running(JobBuilder(11).tier(2).gpus(8), whole("n2"))
        .pending(JobBuilder(1).gpus(8).region("eu-west"))
        .build();
  };
  const JobBuilder grower = JobBuilder(10).gpus(4).elastic(4, 8, 4).region("us-east");
  const Decisions d = decide_checked(fleet(grower), kNoBackfill, kNow);
  ASSERT_EQ(d.resizes.size(), 1u);
  EXPECT_EQ(d.resizes[0].to_gpus, 8);

  const JobBuilder anywhere = JobBuilder(10).gpus(4).elastic(4, 8, 4);
  const Decisions any = decide_checked(fleet(anywhere), kNoBackfill, kNow);
  ASSERT_EQ(any.resizes.size(), 1u);
  EXPECT_EQ(any.resizes[0].to_gpus, 8);
  for (const GpuRef& g : any.resizes[0].gpus) EXPECT_EQ(g.node.value, "n1");
}

}  // namespace
}  // namespace corral::sched
