// The reliability accounting: checkpoint cost, the horizon and a spare node worked out
// by hand on two or three 4-GPU nodes, and over seeded random failures that a job's wall
// time splits exactly into productive + lost + checkpoint + restart + waiting.
#include "sim/reliability.h"

#include <cmath>
#include <string>

#include "sim_fixtures.h"
#include <gtest/gtest.h>

#include "sim/engine.h"

namespace corral::sim {
namespace {

Fleet nodes_of_four(int nodes) {
  Fleet f = testing::pool_fleet(nodes, 4, "A100-80GB");
  f.failures.repair = core::seconds(100);
  return f;
}

// Work 60 s, write a checkpoint for 10 s, repeat; 20 s to restart; every cycle at once.
EngineOptions hand_options() {
  EngineOptions o{.cycle_interval = core::Duration(0), .check_every = 1, .failures = false};
  o.runtime.checkpoint_interval = core::seconds(60);
  o.runtime.checkpoint_cost = core::seconds(10);
  o.runtime.restore_time = core::seconds(20);
  return o;
}

RunResult run_ok(const Fleet& f, const Workload& w, const EngineOptions& o) {
  auto p = policy_by_name("corral");
  EXPECT_TRUE(p.ok());
  auto r = simulate(f, w, *p, o);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? std::move(*r) : RunResult{};
}

Workload one_job(int gpus, int gpus_per_node, double duration_s) {
  return {.source = "hand",
          .jobs = {{.name = "j",
                    .tenant = core::TenantId("a"),
                    .gpus = gpus,
                    .gpus_per_node = gpus_per_node,
                    .duration_ms = std::llround(duration_s * 1000)}}};
}

// 130 s of work: checkpoints written at 60-70 and 130-140, none after the last 10 s of
// work, so it ends at 150. 120 s of work ends at 130: no write after the final interval.
TEST(Reliability, CheckpointCostStallsTheJobByHand) {
  const RunResult r = run_ok(nodes_of_four(1), one_job(4, 4, 130), hand_options());
  EXPECT_EQ(r.jobs[0].finish_ms, 150'000);
  EXPECT_EQ(r.jobs[0].productive_ms, 130'000);
  EXPECT_EQ(r.jobs[0].checkpoint_ms, 20'000);
  EXPECT_EQ(r.jobs[0].restart_ms, 0);  // the first start pays no restore
  EXPECT_EQ(r.jobs[0].lost_ms, 0);
  const RunResult exact = run_ok(nodes_of_four(1), one_job(4, 4, 120), hand_options());
  EXPECT_EQ(exact.jobs[0].finish_ms, 130'000);
  EXPECT_EQ(exact.jobs[0].checkpoint_ms, 10'000);
}

// An 8-GPU job on whole 4-GPU nodes, GPU n-00000/0 failing at 150 s, stopped at 300 s.
// Attempt 1, 0-150: work 0-60, write 60-70, work 70-130, write 130-140, work 140-150
// lost: 120 s kept, 20 s writing, 10 s lost.
//   Two nodes: n-00000 has 3 healthy GPUs until its repair at 250, so the job waits
//   100 s, restarts 250-270 and works 270-300: productive 150, waiting 100.
//   Three nodes (one spare): it restarts at once on the other two, 150-170, works
//   170-230, writes 230-240, works 240-300: productive 240, writing 30, waiting 0.
TEST(Reliability, FailureWithAndWithoutASpareNodeByHand) {
  EngineOptions o = hand_options();
  o.injected_failures = {{.node = "n-00000", .gpu = 0, .at = core::seconds(150)}};
  o.horizon = core::seconds(300);
  struct Want {
    int nodes;
    std::int64_t productive, checkpoint, run;
  };
  for (const Want& want : {Want{2, 150'000, 20'000, 200'000}, Want{3, 240'000, 30'000, 300'000}}) {
    SCOPED_TRACE(std::to_string(want.nodes) + " nodes");
    const RunResult r = run_ok(nodes_of_four(want.nodes), one_job(8, 4, 1000), o);
    const JobResult& j = r.jobs[0];
    EXPECT_EQ(r.end_ms, 300'000);
    EXPECT_EQ(j.finish_ms, -1);
    EXPECT_EQ(j.attempts, 2);
    EXPECT_EQ(j.failures, 1);
    EXPECT_EQ(j.productive_ms, want.productive);
    EXPECT_EQ(j.checkpoint_ms, want.checkpoint);
    EXPECT_EQ(j.lost_ms, 10'000);
    EXPECT_EQ(j.restart_ms, 20'000);
    EXPECT_EQ(j.run_ms, want.run);
    EXPECT_EQ(j.lost_gpu_ms, 10'000 * 8);  // the 10 s lost; finished writes are not
    EXPECT_EQ(j.productive_ms + j.checkpoint_ms + j.lost_ms + j.restart_ms, j.run_ms);
    EXPECT_EQ(r.allocated_gpu_ms, want.run * 8);
  }
}

// Over random failures the five parts add up to the wall time, to the millisecond, and
// the job is interrupted about as often as asked.
TEST(Reliability, WallTimeSplitsExactlyUnderRandomFailures) {
  for (const std::int32_t spares : {0, 2}) {
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      SCOPED_TRACE("spares " + std::to_string(spares) + " seed " + std::to_string(seed));
      const LlmReliabilitySetup s{.nodes = 8,
                                  .gpus_per_node = 4,
                                  .spares = spares,
                                  .days = 20,
                                  .interruptions = 200,
                                  .checkpoint_interval = core::seconds(1800),
                                  .checkpoint_cost = core::seconds(90),
                                  .restart = core::seconds(600),
                                  .repair = core::seconds(3 * 3600),
                                  .seed = seed};
      auto r = run_llm_reliability(s);
      ASSERT_TRUE(r.ok()) << r.status().to_string();
      EXPECT_DOUBLE_EQ(r->wall_s, 20 * 86400.0);
      const double parts =
          r->productive_s + r->lost_s + r->checkpoint_s + r->restart_s + r->waiting_s;
      EXPECT_NEAR(parts, r->wall_s, 1e-6);
      EXPECT_GT(r->interruptions, 0);
      EXPECT_LE(r->interruptions, 300);  // a Poisson(<=200) count this high is ~1e-11
      EXPECT_GT(r->effective(), 0.0);
      EXPECT_LT(r->effective(), 1.0);
      // Each restart paid the full latency unless a failure cut it short.
      EXPECT_LE(r->restart_s, static_cast<double>(r->interruptions) * 600.0);
      if (spares > 0) {
        EXPECT_LT(r->waiting_s, r->wall_s / 2);
      }
    }
  }
}

// With spares enough that nobody waits for a repair, the simulated efficiency is the
// Young/Daly estimate give or take the randomness and the estimate's approximations.
TEST(Reliability, PlentifulSparesLandNearYoungDaly) {
  double sum = 0;
  const int seeds = 3;
  LlmReliabilitySetup s{.nodes = 16,
                        .gpus_per_node = 4,
                        .spares = 16,
                        .days = 100,
                        .interruptions = 800,
                        .checkpoint_interval = core::seconds(1200),
                        .checkpoint_cost = core::seconds(60),
                        .restart = core::seconds(300),
                        .repair = core::seconds(3600),
                        .cycle_interval = core::Duration(0)};
  for (int seed = 1; seed <= seeds; ++seed) {
    s.seed = static_cast<std::uint64_t>(seed);
    auto r = run_llm_reliability(s);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    sum += r->effective();
  }
  const double mtbi = 100 * 86400.0 / 800;
  const double estimate = young_daly_efficiency(1200, 60, 300, mtbi);
  EXPECT_NEAR(sum / seeds, estimate, 0.02) << "estimate " << estimate;
}

TEST(Reliability, BadSetupNamesTheField) {
  LlmReliabilitySetup s;
  s.nodes = 0;
  auto r = run_llm_reliability(s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().to_string().find("nodes"), std::string::npos) << r.status().to_string();
  s = {};
  s.interruptions = 0;
  r = run_llm_reliability(s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().to_string().find("interruptions"), std::string::npos);
}

TEST(Reliability, YoungDalyFormulas) {
  EXPECT_DOUBLE_EQ(young_daly_interval_s(50, 10000), 1000);
  EXPECT_DOUBLE_EQ(young_daly_efficiency(1000, 50, 500, 10000), 1 - 0.05 - 0.1);
}

}  // namespace
}  // namespace corral::sim
