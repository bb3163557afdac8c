// EngineOptions::whole_nodes_above, Philly's locality rule: a job of more than N GPUs, in
// a multiple of N, takes whole N-GPU nodes. Hand-checked on three 8-GPU nodes.
#include <cmath>
#include <string>

#include "sim_fixtures.h"
#include <gtest/gtest.h>

#include "sim/engine.h"

namespace corral::sim {
namespace {

using testing::pool_fleet;
using testing::trace_job;

// At t=0 three 7-GPU jobs (100 s) take one node each, so the three 1-GPU jobs (1,000,
// 2,000 and 3,000 s) take the last GPU of each node. From t=100 each node has one GPU
// busy and 7 free: 21 free GPUs. `big` (gpus, 50 s) arrives at 200.
Workload one_gpu_busy_on_each_node(int big_gpus) {
  return {.source = "hand",
          .jobs = {trace_job("w1", "a", 0, 7, 100), trace_job("w2", "a", 0, 7, 100),
                   trace_job("w3", "a", 0, 7, 100), trace_job("s1", "a", 0, 1, 1'000),
                   trace_job("s2", "a", 0, 1, 2'000), trace_job("s3", "a", 0, 1, 3'000),
                   trace_job("big", "a", 200, big_gpus, 50)}};
}

RunResult run(const Workload& w, const std::string& policy, std::int32_t whole_nodes_above,
              bool including = false) {
  auto p = policy_by_name(policy);
  EXPECT_TRUE(p.ok());
  const EngineOptions o{.cycle_interval = core::Duration(0),
                        .check_every = 1,
                        .whole_nodes_above = whole_nodes_above,
                        .whole_nodes_including = including};
  auto r = simulate(pool_fleet(3, 8, "A100-80GB"), w, *p, o);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? std::move(*r) : RunResult{};
}

// Without the rule the 16-GPU job starts at 200 on 7 + 7 + 2 free GPUs (one leaf, its
// ideal level: no slowdown) and ends at 250. With it, it needs two idle nodes: s1's node
// frees at 1,000 and s2's at 2,000, so it runs 2,000-2,050.
TEST(WholeNodes, SixteenGpuJobWaitsForTwoIdleNodesByHand) {
  for (const std::string policy : {"fifo", "slurm"}) {
    SCOPED_TRACE(policy);
    const Workload w = one_gpu_busy_on_each_node(16);
    for (int i = 0; i < 6; ++i) ASSERT_EQ(run(w, policy, 0).jobs[i].start_ms, 0) << i;
    const RunResult free_split = run(w, policy, 0);
    EXPECT_EQ(free_split.jobs[6].start_ms, 200'000);
    EXPECT_EQ(free_split.jobs[6].finish_ms, 250'000);
    const RunResult whole = run(w, policy, 8);
    EXPECT_EQ(whole.jobs[6].start_ms, 2'000'000);
    EXPECT_EQ(whole.jobs[6].finish_ms, 2'050'000);
    // The jobs before it are untouched by the rule.
    for (int i = 0; i < 6; ++i) EXPECT_EQ(whole.jobs[i].finish_ms, free_split.jobs[i].finish_ms);
  }
}

// 12 GPUs is not a multiple of 8, and 8 is not above 8: the rule leaves their split to
// the scheduler, so both start at 200 over two nodes (the 8-GPU job wanted one NVLink
// domain and spans two nodes: slowed 1.10 x 1.25, its 50 s take 68.75 s).
TEST(WholeNodes, OnlyMultiplesAboveTheLimitAreConstrained) {
  EXPECT_EQ(run(one_gpu_busy_on_each_node(12), "fifo", 8).jobs[6].start_ms, 200'000);
  const RunResult eight = run(one_gpu_busy_on_each_node(8), "fifo", 8);
  EXPECT_EQ(eight.jobs[6].start_ms, 200'000);
  EXPECT_EQ(eight.jobs[6].finish_ms, 268'750);
}

// Including N: the 8-GPU job needs one idle node, s1's at 1,000, and runs there unslowed
// (its ideal level, one NVLink domain of 8): 1,000-1,050. The 12-GPU job is still free.
TEST(WholeNodes, IncludingNKeepsAnNGpuJobOnOneWholeNodeByHand) {
  const RunResult eight = run(one_gpu_busy_on_each_node(8), "fifo", 8, true);
  EXPECT_EQ(eight.jobs[6].start_ms, 1'000'000);
  EXPECT_EQ(eight.jobs[6].finish_ms, 1'050'000);
  EXPECT_EQ(run(one_gpu_busy_on_each_node(12), "fifo", 8, true).jobs[6].start_ms, 200'000);
  EXPECT_EQ(run(one_gpu_busy_on_each_node(16), "fifo", 8, true).jobs[6].start_ms, 2'000'000);
}

TEST(WholeNodes, ALimitAboveTheLargestNodeIsAnError) {
  auto p = policy_by_name("fifo");
  ASSERT_TRUE(p.ok());
  auto r = simulate(pool_fleet(3, 8, "A100-80GB"), one_gpu_busy_on_each_node(16), *p,
                    {.whole_nodes_above = 9});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().to_string().find("whole_nodes_above"), std::string::npos);
  EXPECT_NE(r.status().to_string().find("largest node's GPUs (8), got 9"), std::string::npos);
}

}  // namespace
}  // namespace corral::sim
