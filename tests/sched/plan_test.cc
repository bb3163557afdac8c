// Plan (sched/internal/plan.h): the working state of one decide() call. Its starting
// state from a snapshot, every aggregate that take / give_back / block move, and that
// rollback() returns exactly to a mark.
#include "sched/internal/plan.h"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "testing/fleet_builder.h"

namespace corral::sched::detail {
namespace {

using testing::FleetBuilder;
using testing::JobBuilder;

std::vector<NodeIx> nodes_in(const NodeSet& set) {
  std::vector<NodeIx> out;
  for (const NodeIx n : set) out.push_back(n);
  return out;
}

// Everything a Plan shows, for one type, so two states can be compared whole.
struct Seen {
  std::vector<std::uint64_t> masks;
  std::vector<std::int32_t> counts, cpus;
  std::vector<std::int64_t> memory, rack_watts, tenant_used, weighted;
  std::int32_t type_free = 0;
  std::vector<std::int32_t> leaf_free;
  std::vector<std::vector<NodeIx>> buckets;
  friend bool operator==(const Seen&, const Seen&) = default;
};

Seen seen(const Plan& plan, TypeIx type) {
  const ClusterSnapshot& s = plan.snapshot();
  Seen out;
  for (NodeIx n = 0; n < static_cast<NodeIx>(s.nodes().size()); ++n) {
    out.masks.push_back(plan.free_mask(n));
    out.counts.push_back(plan.free_count(n));
    out.cpus.push_back(plan.free_cpus(n));
    out.memory.push_back(plan.free_memory_mib(n));
  }
  for (RackIx r = 0; r < 2; ++r) out.rack_watts.push_back(plan.rack_power_used(r));
  for (TenantIx t = 0; t < static_cast<TenantIx>(s.tenants().size()); ++t) {
    out.tenant_used.push_back(plan.tenant_used_milli(t, type));
    out.weighted.push_back(plan.tenant_weighted_held_milli(t));
  }
  out.type_free = plan.type_free(type);
  for (std::int32_t d = 0; d < plan.domain_count(Level::kLeaf); ++d) {
    out.leaf_free.push_back(plan.stats(Level::kLeaf, d, type).free);
  }
  for (std::int32_t c = 0; c <= kMaxGpusPerNode; ++c) {
    out.buckets.push_back(nodes_in(plan.nodes_with_free(type, c)));
  }
  return out;
}

// n1 (leaf l1, rack r1): GPU 3 failed, job 1 of t1 holds GPUs 0 and 1 with 2 CPUs and
// 1 GiB each. n2 (leaf l2, rack r2): empty. n3 (leaf l2, rack r2): cordoned.
ClusterSnapshot fleet() {
  return FleetBuilder()
      .dgx("n1", "H100", {.leaf = "l1", .rack = "r1"})
      .dgx("n2", "H100", {.leaf = "l2", .rack = "r2"})
      .dgx("n3", "H100", {.leaf = "l2", .rack = "r2"})
      .unhealthy("n1", 3)
      .admin("n3", core::NodeAdminState::kCordoned)
      .cpus("n1", 64, 65536)
      .cpus("n2", 64, 65536)
      .running(JobBuilder(1).tenant("t1").gpus(2).cpus_per_gpu(2).memory_per_gpu_mib(1024),
               {{"n1", 0}, {"n1", 1}})
      .tenant("t2")
      .build();
}

struct Ix {
  NodeIx n1, n2, n3;
  TypeIx h100;
  TenantIx t1, t2;
  std::int32_t l1, l2;
  RackIx r1, r2;
};

Ix ix(const ClusterSnapshot& s) {
  Ix out{.n1 = *s.find_node(core::NodeId("n1")),
         .n2 = *s.find_node(core::NodeId("n2")),
         .n3 = *s.find_node(core::NodeId("n3")),
         .h100 = *s.find_type(core::GpuTypeId("H100")),
         .t1 = *s.find_tenant(core::TenantId("t1")),
         .t2 = *s.find_tenant(core::TenantId("t2"))};
  out.l1 = s.topo()[out.n1].leaf;
  out.l2 = s.topo()[out.n2].leaf;
  out.r1 = s.topo()[out.n1].rack;
  out.r2 = s.topo()[out.n2].rack;
  return out;
}

TEST(Plan, StartsWithUsableGpusNotHeldByRunningJobs) {
  const auto s = fleet();
  const Ix i = ix(s);
  const Plan plan(s);
  EXPECT_EQ(plan.free_mask(i.n1), 0b1111'0100u) << "GPUs 0, 1 held; 3 unhealthy";
  EXPECT_EQ(plan.free_count(i.n1), 5);
  EXPECT_EQ(plan.free_mask(i.n2), 0xFFu);
  EXPECT_EQ(plan.free_mask(i.n3), 0u) << "cordoned";
  EXPECT_EQ(plan.type_free(i.h100), 13);
  EXPECT_EQ(plan.free_cpus(i.n1), 60);
  EXPECT_EQ(plan.free_memory_mib(i.n1), 65536 - 2048);
  EXPECT_EQ(plan.rack_power_used(i.r1), 2 * 700);
  EXPECT_EQ(plan.rack_power_used(i.r2), 0);
  EXPECT_EQ(plan.tenant_used_milli(i.t1, i.h100), 2000);
  EXPECT_EQ(plan.tenant_used_milli(i.t2, i.h100), 0);
  EXPECT_EQ(plan.tenant_weighted_held_milli(i.t1), 2 * 2000) << "H100 weighs 2.0";
  EXPECT_EQ(plan.stats(Level::kLeaf, i.l1, i.h100).free, 5);
  EXPECT_EQ(plan.stats(Level::kLeaf, i.l2, i.h100).free, 8);
  EXPECT_EQ(plan.stats(Level::kLeaf, i.l2, i.h100).nodes_by_free[0], 1);  // n3
  EXPECT_EQ(plan.stats(Level::kLeaf, i.l2, i.h100).nodes_by_free[8], 1);  // n2
  EXPECT_EQ(plan.stats(Level::kCluster, s.topo()[i.n1].cluster, i.h100).free, 13);
  EXPECT_EQ(plan.domain_nodes(Level::kLeaf, i.l2, i.h100), (std::vector<NodeIx>{i.n2, i.n3}));
  EXPECT_EQ(nodes_in(plan.nodes_with_free(i.h100, 5)), std::vector<NodeIx>{i.n1});
  EXPECT_EQ(nodes_in(plan.nodes_with_free(i.h100, 8)), std::vector<NodeIx>{i.n2});
  EXPECT_EQ(nodes_in(plan.nodes_with_free(i.h100, 0)), std::vector<NodeIx>{i.n3});
  EXPECT_FALSE(plan.type_has_split_nodes(i.h100));
}

TEST(Plan, TakeMovesEveryAggregateAndGiveBackReturnsThem) {
  const auto s = fleet();
  const Ix i = ix(s);
  Plan plan(s);
  const Seen start = seen(plan, i.h100);
  plan.take({{.node = i.n2, .mask = 0x0F}, {.node = i.n1, .mask = 0b0100}}, i.t2, 4, 100);
  EXPECT_EQ(plan.free_mask(i.n2), 0xF0u);
  EXPECT_EQ(plan.free_count(i.n2), 4);
  EXPECT_EQ(plan.free_mask(i.n1), 0b1111'0000u);
  EXPECT_EQ(plan.type_free(i.h100), 8);
  EXPECT_EQ(plan.free_cpus(i.n2), 64 - 16);
  EXPECT_EQ(plan.free_memory_mib(i.n2), 65536 - 400);
  EXPECT_EQ(plan.tenant_used_milli(i.t2, i.h100), 5000);
  EXPECT_EQ(plan.tenant_used_milli(i.t1, i.h100), 2000) << "t1 untouched";
  EXPECT_EQ(plan.tenant_weighted_held_milli(i.t2), 5 * 2000);
  EXPECT_EQ(plan.rack_power_used(i.r2), 4 * 700);
  EXPECT_EQ(plan.rack_power_used(i.r1), 3 * 700);
  EXPECT_EQ(plan.stats(Level::kLeaf, i.l2, i.h100).free, 4);
  EXPECT_EQ(plan.stats(Level::kLeaf, i.l2, i.h100).nodes_by_free[8], 0);
  EXPECT_EQ(plan.stats(Level::kLeaf, i.l2, i.h100).nodes_by_free[4], 1);
  EXPECT_EQ(nodes_in(plan.nodes_with_free(i.h100, 4)), (std::vector<NodeIx>{i.n1, i.n2}));
  EXPECT_TRUE(plan.nodes_with_free(i.h100, 8).empty());
  plan.give_back({{.node = i.n2, .mask = 0x0F}, {.node = i.n1, .mask = 0b0100}}, i.t2, 4, 100);
  EXPECT_EQ(seen(plan, i.h100), start);
}

// A block hides GPUs from placement and charges nobody: no tenant, CPU or rack power.
TEST(Plan, BlockHidesGpusWithoutChargingAnyone) {
  const auto s = fleet();
  const Ix i = ix(s);
  Plan plan(s);
  const Seen start = seen(plan, i.h100);
  plan.block({{.node = i.n2, .mask = 0xFF}});
  EXPECT_EQ(plan.free_mask(i.n2), 0u);
  EXPECT_EQ(plan.type_free(i.h100), 5);
  EXPECT_EQ(plan.stats(Level::kLeaf, i.l2, i.h100).free, 0);
  EXPECT_EQ(plan.free_cpus(i.n2), 64);
  EXPECT_EQ(plan.rack_power_used(i.r2), 0);
  EXPECT_EQ(plan.tenant_used_milli(i.t1, i.h100), 2000);
  EXPECT_EQ(plan.tenant_used_milli(i.t2, i.h100), 0);
  plan.unblock({{.node = i.n2, .mask = 0xFF}});
  EXPECT_EQ(seen(plan, i.h100), start);
}

// A running job's GPU that has failed since it was placed was never free: giving the
// job's GPUs back frees only the healthy ones, but uncharges the tenant for all.
TEST(Plan, GiveBackOfAFailedGpuDoesNotMakeItFree) {
  const auto s = FleetBuilder()
                     .dgx("n1")
                     .unhealthy("n1", 1)
                     .running(JobBuilder(1).gpus(2), {{"n1", 0}, {"n1", 1}})
                     .build();
  const NodeIx n1 = *s.find_node(core::NodeId("n1"));
  const TypeIx h100 = *s.find_type(core::GpuTypeId("H100"));
  const TenantIx t1 = *s.find_tenant(core::TenantId("t1"));
  Plan plan(s);
  EXPECT_EQ(plan.free_mask(n1), 0b1111'1100u);
  EXPECT_EQ(plan.tenant_used_milli(t1, h100), 2000);
  plan.give_back({{.node = n1, .mask = 0b11}}, t1, 0, 0);
  EXPECT_EQ(plan.free_mask(n1), 0b1111'1101u);
  EXPECT_EQ(plan.type_free(h100), 7);
  EXPECT_EQ(plan.tenant_used_milli(t1, h100), 0);
  EXPECT_EQ(plan.tenant_weighted_held_milli(t1), 0);
}

// Nested what-ifs: rollback to the inner mark keeps the outer changes; rollback to the
// outer mark returns to the start exactly.
TEST(Plan, RollbackReturnsExactlyToTheMark) {
  const auto s = fleet();
  const Ix i = ix(s);
  Plan plan(s);
  const Seen start = seen(plan, i.h100);
  EXPECT_EQ(plan.mark(), 0u) << "the starting state is not journaled";
  const Plan::Mark outer = plan.mark();
  plan.take({{.node = i.n2, .mask = 0x03}}, i.t2, 1, 1);
  const Seen after_first = seen(plan, i.h100);
  const Plan::Mark inner = plan.mark();
  plan.block({{.node = i.n2, .mask = 0x0C}});
  plan.give_back({{.node = i.n1, .mask = 0x03}}, i.t1, 2, 1024);  // preempt job 1
  plan.take({{.node = i.n1, .mask = 0x03}}, i.t2, 1, 1);
  EXPECT_NE(seen(plan, i.h100), after_first);
  plan.rollback(inner);
  EXPECT_EQ(seen(plan, i.h100), after_first);
  EXPECT_EQ(plan.mark(), inner);
  plan.rollback(outer);
  EXPECT_EQ(seen(plan, i.h100), start);
}

// Shares of one GPU: it leaves the free pool (and draws its rack's watts) with the first
// and stays out until the last is rolled back; CPUs, memory and the tenant's thousandths
// move with each; rollback returns exactly to the mark.
TEST(Plan, SharesTakeAGpuTogetherAndRollBackExactly) {
  const auto s = fleet();
  const Ix i = ix(s);
  Plan plan(s);
  const Seen start = seen(plan, i.h100);
  const auto quarter = JobBuilder(7).tenant("t2").share(250, 1024).cpus_per_gpu(4).request();
  plan.take_share(i.n2, 5, i.t2, quarter);
  const Seen one = seen(plan, i.h100);
  EXPECT_EQ(plan.free_count(i.n2), 7);
  EXPECT_EQ(plan.share_room(i.n2, 5).milli, 750);
  EXPECT_EQ(plan.tenant_used_milli(i.t2, i.h100), 250);
  EXPECT_EQ(plan.free_cpus(i.n2), 60);
  const Plan::Mark second = plan.mark();
  plan.take_share(i.n2, 5, i.t2, quarter);
  EXPECT_EQ(plan.free_count(i.n2), 7);  // still one GPU out of the pool
  EXPECT_EQ(plan.share_room(i.n2, 5).milli, 500);
  EXPECT_EQ(plan.tenant_used_milli(i.t2, i.h100), 500);
  EXPECT_EQ(plan.rack_power_used(i.r2), one.rack_watts[static_cast<std::size_t>(i.r2)]);  // once
  EXPECT_EQ(plan.share_room(i.n1, 0).milli, 0);  // held whole by job 1
  EXPECT_EQ(plan.share_room(i.n1, 3).milli, 0);  // failed
  plan.rollback(second);
  EXPECT_EQ(seen(plan, i.h100), one);
  plan.rollback(0);
  EXPECT_EQ(seen(plan, i.h100), start);
  EXPECT_EQ(plan.share_room(i.n2, 5).milli, 1000);
}

TEST(Plan, SplitNodesAreThoseWithMoreThanOneNvlinkDomain) {
  const auto s = FleetBuilder().dgx("n1").pcie_pairs("p1").build();
  const Plan plan(s);
  EXPECT_FALSE(plan.type_has_split_nodes(*s.find_type(core::GpuTypeId("H100"))));
  EXPECT_TRUE(plan.type_has_split_nodes(*s.find_type(core::GpuTypeId("L40S"))));
}

TEST(Plan, TakingAGpuThatIsNotFreeIsABug) {
  const auto s = fleet();
  const Ix i = ix(s);
  Plan plan(s);
  EXPECT_DEATH(plan.take({{.node = i.n1, .mask = 0b0001}}, i.t2, 0, 0), "");       // held by job 1
  EXPECT_DEATH(plan.give_back({{.node = i.n2, .mask = 0b0001}}, i.t2, 0, 0), "");  // free
}

TEST(DomainStats, NodesWithAtLeastCountsTheHistogramTail) {
  DomainStats st;
  st.nodes_by_free[0] = 2;
  st.nodes_by_free[3] = 1;
  st.nodes_by_free[8] = 4;
  EXPECT_EQ(st.nodes_with_at_least(0), 7);
  EXPECT_EQ(st.nodes_with_at_least(-1), 7);
  EXPECT_EQ(st.nodes_with_at_least(1), 5);
  EXPECT_EQ(st.nodes_with_at_least(4), 4);
  EXPECT_EQ(st.nodes_with_at_least(9), 0);
}

TEST(UsageMilli, IsTheUsageFactorInThousandthsRounded) {
  EXPECT_EQ(usage_milli({.usage_factor = 2.0}), 2000);
  EXPECT_EQ(usage_milli({.usage_factor = 0.9}), 900);
  EXPECT_EQ(usage_milli({.usage_factor = 0.0005}), 1);  // rounded half away from zero
  EXPECT_EQ(usage_milli({.usage_factor = 0.0004}), 0);
}

TEST(NodeSet, IteratesInIndexOrderAcrossWords) {
  NodeSet set;
  set.resize(130);
  EXPECT_TRUE(set.empty());
  for (NodeIx n : {129, 0, 64, 63, 5}) set.insert(n);
  EXPECT_EQ(nodes_in(set), (std::vector<NodeIx>{0, 5, 63, 64, 129}));
  set.erase(63);
  set.erase(0);
  EXPECT_EQ(nodes_in(set), (std::vector<NodeIx>{5, 64, 129}));
  EXPECT_FALSE(set.empty());
}

}  // namespace
}  // namespace corral::sched::detail
