// The snapshot builder refuses inconsistent input with a reason naming the problem.
#include <bit>

#include <gtest/gtest.h>

#include "sched/decide.h"
#include "sched/decisions.h"
#include "sched/usage.h"
#include "testing/fleet_builder.h"
#include "testing/random_fleet.h"

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

TEST(Snapshot, RefusesAScalingCurveDecideCannotUse) {
  auto in = FleetBuilder()
                .dgx("a")
                .pending(JobBuilder(1).gpus(2).elastic(1, 8).scaling({{2, 10.0}, {1, 6.0}}))
                .input();
  const std::string want =
      "pending[1].elastic.scaling: point 1: sizes must be >= 1 and increasing, throughputs "
      "between 1e-9 and 1e15";
  EXPECT_EQ(build_error(in), want);
  in.pending[0].request.elastic->scaling = {{1, 6.0}, {2, 0.0}};
  EXPECT_EQ(build_error(in), want);
  in.pending[0].request.elastic->scaling = {{1, 6.0}, {2, 10.0}};
  EXPECT_EQ(build_error(in), "ok");
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

// rebuild_snapshot() (the simulator's per-cycle path) must be indistinguishable from a
// full build: same derived GPUs per node, same decisions, on random fleets and workloads.
TEST(Snapshot, RebuildOnTheSameFleetEqualsAFullBuild) {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    testing::Rng rng(seed);
    const SnapshotInput fleet = testing::random_fleet(rng, {.reservations = 2});
    const SnapshotInput in = testing::random_workload(rng, fleet, {});
    const auto full = build_snapshot(in);
    ASSERT_TRUE(full.ok()) << full.status().to_string();
    SnapshotInput jobs;
    jobs.usage = in.usage;
    jobs.reservations = in.reservations;
    jobs.running = in.running;
    jobs.pending = in.pending;
    // Another snapshot of the same fleet, with no jobs, is the base.
    SnapshotInput empty = in;
    empty.running.clear();
    empty.pending.clear();
    const auto base = build_snapshot(empty);
    ASSERT_TRUE(base.ok());
    const auto rebuilt = rebuild_snapshot(*base, jobs);
    ASSERT_TRUE(rebuilt.ok()) << rebuilt.status().to_string();
    ASSERT_EQ(rebuilt->running().size(), full->running().size());
    for (std::size_t j = 0; j < full->running().size(); ++j) {
      ASSERT_EQ(rebuilt->running_gpus(j).size(), full->running_gpus(j).size());
      std::int32_t gpus = 0;
      for (std::size_t k = 0; k < full->running_gpus(j).size(); ++k) {
        EXPECT_EQ(rebuilt->running_gpus(j)[k].node, full->running_gpus(j)[k].node);
        EXPECT_EQ(rebuilt->running_gpus(j)[k].mask, full->running_gpus(j)[k].mask);
        gpus += std::popcount(full->running_gpus(j)[k].mask);
      }
      EXPECT_EQ(gpus, static_cast<std::int32_t>(full->running()[j].gpus.size()));
      EXPECT_EQ(rebuilt->running_tenant(j), full->running_tenant(j));
    }
    const core::Time now = core::time_from_ms(3'600'000);
    EXPECT_EQ(to_json(decide(*rebuilt, {}, now)), to_json(decide(*full, {}, now))) << seed;
  }
}

TEST(Snapshot, RebuildRefusesWhatAFullBuildRefusesAndFleetInput) {
  auto in = FleetBuilder()
                .dgx("a")
                .running(JobBuilder(1), {{"a", 0}})
                .running(JobBuilder(2), {{"a", 0}})
                .input();
  SnapshotInput fleet = in;
  fleet.running.clear();
  const auto base = build_snapshot(fleet);
  ASSERT_TRUE(base.ok());
  EXPECT_EQ(rebuild_snapshot(*base, in).status().to_string(),
            "input: rebuild_snapshot takes the fleet from the base snapshot; pass only jobs");
  in.nodes.clear();
  in.gpu_types.clear();
  in.tenants.clear();
  in.racks.clear();
  EXPECT_EQ(rebuild_snapshot(*base, in).status().to_string(),
            "running[2]: GPU a/0 is held by two jobs");
}

// The delta form of rebuild_snapshot() (corral-sim's per-cycle path since it keeps its
// last snapshot): from a previous snapshot whose jobs are a random mix of the final ones
// (kept with stale progress, stopped and started again, started from the queue, queued
// afresh, and pending jobs that since left), the result equals a full build of the final
// lists: same jobs and fields, same derived GPUs, same decisions.
TEST(Snapshot, RebuildFromADeltaEqualsAFullBuild) {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    testing::Rng rng(seed);
    const SnapshotInput fleet = testing::random_fleet(rng, {.reservations = 2});
    SnapshotInput in = testing::random_workload(rng, fleet, {});
    for (RunningJob& r : in.running) {
      r.attained_gpu_seconds = static_cast<double>(rng.uniform(0, 100000));
      r.preemptions = static_cast<std::int32_t>(rng.uniform(0, 2));
    }
    const auto full = build_snapshot(in);
    ASSERT_TRUE(full.ok()) << full.status().to_string();

    SnapshotInput before = in;
    before.running.clear();
    before.pending.clear();
    JobsDelta delta{.usage = in.usage, .reservations = in.reservations};
    std::int64_t next_id = 1;
    for (const auto& j : in.running) next_id = std::max(next_id, j.request.id.value + 1);
    for (const auto& j : in.pending) next_id = std::max(next_id, j.request.id.value + 1);
    for (const RunningJob& r : in.running) {
      const std::int64_t u = rng.uniform(0, 9);
      if (u < 6) {  // kept: its progress moved on
        RunningJob stale = r;
        stale.attained_gpu_seconds = 0;
        stale.preemptions = 0;
        stale.last_checkpoint_at.reset();
        before.running.push_back(stale);
        delta.progress.push_back({.id = r.request.id,
                                  .last_checkpoint_at = r.last_checkpoint_at,
                                  .preemptions = r.preemptions,
                                  .attained_gpu_seconds = r.attained_gpu_seconds});
      } else if (u < 8) {  // stopped and started again on the same GPUs
        before.running.push_back(r);
        delta.stopped.push_back(r.request.id);
        delta.started.push_back(r);
      } else {  // started from the queue
        before.pending.push_back({.request = r.request});
        delta.dequeued.push_back(r.request.id);
        delta.started.push_back(r);
      }
    }
    for (const PendingJob& p : in.pending) {
      if (rng.chance(0.7)) {
        before.pending.push_back(p);
      } else {
        delta.queued.push_back(p);
      }
      if (rng.chance(0.2)) {  // a job that has since left the queue
        PendingJob gone = p;
        gone.request.id = core::JobId(next_id++);
        before.pending.push_back(gone);
        delta.dequeued.push_back(gone.request.id);
      }
    }
    auto previous = build_snapshot(before);
    ASSERT_TRUE(previous.ok()) << previous.status().to_string();
    const auto rebuilt = rebuild_snapshot(std::move(*previous), std::move(delta));
    ASSERT_TRUE(rebuilt.ok()) << rebuilt.status().to_string();

    ASSERT_EQ(rebuilt->running().size(), full->running().size());
    for (std::size_t j = 0; j < full->running().size(); ++j) {
      const RunningJob& a = rebuilt->running()[j];
      const RunningJob& b = full->running()[j];
      EXPECT_EQ(a.request.id, b.request.id);
      EXPECT_EQ(a.gpus, b.gpus);
      EXPECT_EQ(a.attained_gpu_seconds, b.attained_gpu_seconds);
      EXPECT_EQ(a.preemptions, b.preemptions);
      EXPECT_EQ(a.last_checkpoint_at, b.last_checkpoint_at);
      ASSERT_EQ(rebuilt->running_gpus(j).size(), full->running_gpus(j).size());
      for (std::size_t k = 0; k < full->running_gpus(j).size(); ++k) {
        EXPECT_EQ(rebuilt->running_gpus(j)[k].node, full->running_gpus(j)[k].node);
        EXPECT_EQ(rebuilt->running_gpus(j)[k].mask, full->running_gpus(j)[k].mask);
      }
      EXPECT_EQ(rebuilt->running_tenant(j), full->running_tenant(j));
    }
    ASSERT_EQ(rebuilt->pending().size(), full->pending().size());
    for (std::size_t j = 0; j < full->pending().size(); ++j) {
      EXPECT_EQ(rebuilt->pending()[j].request.id, full->pending()[j].request.id);
      EXPECT_EQ(rebuilt->pending_tenant(j), full->pending_tenant(j));
    }
    const core::Time now = core::time_from_ms(3'600'000);
    EXPECT_EQ(to_json(decide(*rebuilt, {}, now)), to_json(decide(*full, {}, now))) << seed;
  }
}

TEST(Snapshot, RebuildFromADeltaRefusesOneThatDoesNotFit) {
  const auto in =
      FleetBuilder().dgx("a").running(JobBuilder(1), {{"a", 0}}).pending(JobBuilder(2)).input();
  const auto error = [&](JobsDelta delta) {
    auto previous = build_snapshot(in);
    EXPECT_TRUE(previous.ok());
    const auto s = rebuild_snapshot(std::move(*previous), std::move(delta));
    return s.ok() ? "ok" : s.status().to_string();
  };
  const RunningProgress one{.id = core::JobId(1)};
  EXPECT_EQ(error({.progress = {one}}), "ok");
  EXPECT_EQ(error({}), "progress: expected running job 1 next");
  EXPECT_EQ(error({.stopped = {core::JobId(3)}, .progress = {one}}),
            "stopped: job 3 was not running");
  EXPECT_EQ(error({.dequeued = {core::JobId(1)}, .progress = {one}}),
            "dequeued: job 1 was not pending");
  RunningJob two{.request = in.pending[0].request, .gpus = {{core::NodeId("a"), 0}}};
  EXPECT_EQ(error({.started = {two}, .dequeued = {core::JobId(2)}, .progress = {one}}),
            "running[2]: GPU a/0 is held by two jobs");
  two.gpus = {{core::NodeId("a"), 1}};
  EXPECT_EQ(error({.started = {two}, .progress = {one}}), "pending[2]: job is also running");
  EXPECT_EQ(error({.started = {two}, .dequeued = {core::JobId(2)}, .progress = {one}}), "ok");
  // A stopped job's GPUs are free for the jobs started in the same delta.
  two.gpus = {{core::NodeId("a"), 0}};
  EXPECT_EQ(error({.stopped = {core::JobId(1)}, .started = {two}, .dequeued = {core::JobId(2)}}),
            "ok");
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
