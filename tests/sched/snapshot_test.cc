// The snapshot builder refuses inconsistent input with a reason naming the problem.
#include <gtest/gtest.h>

#include "sched/decisions.h"
#include "sched/usage.h"
#include "testing/fleet_builder.h"

namespace corral::sched {
namespace {

using testing::FleetBuilder;
using testing::JobBuilder;

std::string build_error(const SnapshotInput& in) {
  const auto s = build_snapshot(in);
  return s.ok() ? "ok" : s.status().to_string();
}

TEST(Snapshot, RefusesAGpuHeldByTwoJobs) {
  const auto in = FleetBuilder()
                      .dgx("a")
                      .running(JobBuilder(1), {{"a", 0}})
                      .running(JobBuilder(2), {{"a", 0}})
                      .input();
  EXPECT_EQ(build_error(in), "running[2]: GPU a/0 is held by two jobs");
}

TEST(Snapshot, RefusesUnknownGpusTypesAndTenants) {
  auto in = FleetBuilder().dgx("a").running(JobBuilder(1), {{"a", 9}}).input();
  EXPECT_EQ(build_error(in), "running[1]: holds unknown GPU a/9");

  in = FleetBuilder().dgx("a").pending(JobBuilder(1).types({"H100"})).input();
  in.pending[0].request.gpu_types = {core::GpuTypeId("Z9")};
  EXPECT_EQ(build_error(in), "pending[1].gpu_types: unknown GPU type Z9");

  in = FleetBuilder().dgx("a").pending(JobBuilder(1)).input();
  in.pending[0].request.tenant = core::TenantId("ghost");
  EXPECT_EQ(build_error(in), "pending[1].tenant: unknown tenant ghost");
}

TEST(Snapshot, RefusesMixedNodesAndDuplicates) {
  auto in = FleetBuilder().dgx("a").dgx("b", "A100-80GB").input();
  in.nodes[0].gpus[3].type = core::GpuTypeId("A100-80GB");
  EXPECT_EQ(build_error(in), "nodes[a]: all GPUs on a node must be one type");

  in = FleetBuilder().dgx("a").dgx("a").input();
  EXPECT_EQ(build_error(in), "nodes: duplicate id a");
}

TEST(Snapshot, RefusesTenantCyclesAndJobsOnParents) {
  auto in = FleetBuilder().dgx("a").tenant("x", 1, "y").tenant("y", 1, "x").input();
  EXPECT_EQ(build_error(in).substr(0, 8), "tenants:");

  in =
      FleetBuilder().dgx("a").tenant("leaf", 1, "org").pending(JobBuilder(1).tenant("org")).input();
  EXPECT_EQ(build_error(in),
            "pending[1].tenant: tenant org has sub-tenants; jobs belong to a leaf tenant");
}

TEST(Snapshot, DerivesTopology) {
  const auto s = FleetBuilder()
                     .dgx("a", "H100", {.leaf = "l1", .spine = "s1"})
                     .dgx("b", "H100", {.leaf = "l2", .spine = "s1"})
                     .pcie_pairs("c", "L40S", {.leaf = "l3", .spine = "s2"})
                     .unhealthy("a", 2)
                     .build();
  EXPECT_EQ(s.leaf_count(), 3);
  EXPECT_EQ(s.spine_count(), 2);
  EXPECT_EQ(s.spine_of_leaf(s.topo()[1].leaf), s.topo()[0].spine);
  EXPECT_EQ(s.topo()[0].usable_mask, 0xFBu);
  EXPECT_EQ(s.topo()[2].domain_masks.size(), 4u);
  EXPECT_EQ(s.max_node_gpus(*s.find_type(core::GpuTypeId("L40S"))), 8);
}

TEST(DecayedUsage, HalvesEveryHalfLife) {
  DecayedUsage u(core::seconds(100));
  u.add(1000, core::time_from_ms(0));
  EXPECT_DOUBLE_EQ(u.value_at(core::time_from_ms(100'000)), 500);
  u.add(500, core::time_from_ms(100'000));
  EXPECT_DOUBLE_EQ(u.value_at(core::time_from_ms(200'000)), 500);
}

TEST(Decisions, JsonIsStableAndEscaped) {
  Decisions d;
  d.placements.push_back({.job = core::JobId(7),
                          .gpu_type = core::GpuTypeId("H100"),
                          .gpus = {{core::NodeId("n1"), 0}},
                          .borrowed = true,
                          .packed = core::PackLevel::kNvlink});
  d.pending.push_back({.job = core::JobId(8),
                       .position = 1,
                       .kind = PendingKind::kQuota,
                       .reason = "quota: \"x\""});
  d.queue.push_back({core::JobId(7), 0.5});
  EXPECT_EQ(to_json(d),
            "{\"placements\":[{\"job\":7,\"gpuType\":\"H100\",\"gpus\":[{\"node\":\"n1\","
            "\"index\":0}],\"borrowed\":true,\"packed\":\"nvlink\"}],\"preemptions\":[],"
            "\"resizes\":[],\"plannedStarts\":[],\"pending\":[{\"job\":8,"
            "\"position\":1,\"kind\":\"quota\",\"reason\":\"quota: \\\"x\\\"\"}],\"queue\":[{"
            "\"job\":7,\"standing\":0.5}]}");
}

}  // namespace
}  // namespace corral::sched
