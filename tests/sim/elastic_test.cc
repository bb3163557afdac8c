// Elastic jobs in the engine (policy corral-elastic): decide()'s Resize decisions applied
// as checkpoint-and-restart at the new size, on a schedule worked out by hand, and the
// conservation and skip invariants with resizes in play.
#include <algorithm>
#include <cmath>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "sim_fixtures.h"
#include <gtest/gtest.h>

#include "sim/engine.h"
#include "sim/traces/pollux.h"
#include "sim/traces/synthetic.h"

namespace corral::sim {
namespace {

// Run time `seconds_at_ask` x (ask / n)^exponent on n GPUs, wherever they are.
class Scaling final : public RuntimeProfile {
 public:
  Scaling(double seconds_at_ask, std::int32_t ask, double exponent)
      : seconds_(seconds_at_ask), ask_(ask), exponent_(exponent) {}
  double seconds(const core::GpuTypeId& /*gpu_type*/,
                 std::span<const std::int32_t> gpus_per_node) const override {
    std::int32_t n = 0;
    for (std::int32_t g : gpus_per_node) n += g;
    return seconds_ * std::pow(static_cast<double>(ask_) / n, exponent_);
  }

 private:
  double seconds_;
  std::int32_t ask_;
  double exponent_;
};

void make_elastic(TraceJob& j, std::int32_t min_gpus, std::int32_t max_gpus, double exponent) {
  j.profile =
      std::make_shared<Scaling>(static_cast<double>(j.duration_ms) / 1000, j.gpus, exponent);
  j.elastic_profile = j.profile;
  j.elastic_min_gpus = min_gpus;
  j.elastic_max_gpus = max_gpus;
}

Policy elastic_policy(core::Duration min_runtime) {
  auto p = policy_by_name("corral-elastic");
  EXPECT_TRUE(p.ok());
  p->config.preemption.min_runtime = min_runtime;
  return *p;
}

Fleet one_node() { return testing::pool_fleet(1, 4, "T4"); }

// One 4-GPU node; each (re)start costs 10 s; work is kept across stops. A and B ask for
// 2 GPUs and 100 s there, and scale perfectly (200 GPU-seconds); A may run on 1-4 GPUs,
// B on 2-4.
//   t=0    A starts on all 4 GPUs (decide() takes the largest size that fits): 50 s of work.
//   t=30   B arrives; A has worked 20 s at 4 GPUs = 40 s of its 100. decide() shrinks A by
//          the 2 GPUs B needs, to 2 (not to its minimum of 1 and back to 2 in the next
//          cycle: one restart, not two), and B starts on 2. A's remaining 60 s at 2 GPUs
//          plus the restart: A ends at 30 + 10 + 60 = 100.
//   t=100  B has worked 60 s of its 100 at 2 GPUs; it grows into A's 2 GPUs and runs the
//          remaining 40 s at 4 GPUs in 20 s: B ends at 100 + 10 + 20 = 130. (decide()
//          grows it because its 10-s restart costs a third of the 30 s its 100-s max
//          runtime leaves it, and doubling more than makes up for that.)
TEST(Elastic, GrowsIntoFreeGpusAndShrinksForAnArrivalByHand) {
  Workload w{.source = "hand"};
  for (const auto& [name, submit_s, min] : {std::tuple{"A", 0, 1}, std::tuple{"B", 30, 2}}) {
    w.jobs.push_back({.name = name,
                      .tenant = core::TenantId("a"),
                      .submit_ms = submit_s * 1000,
                      .gpus = 2,
                      .duration_ms = 100'000});
    make_elastic(w.jobs.back(), min, 4, 1.0);
  }
  // A resize goes through the job's own checkpoint, so it keeps all its work also in a
  // world where a preempted job does not checkpoint on its way out.
  for (const bool preemptions_checkpoint : {true, false}) {
    SCOPED_TRACE(preemptions_checkpoint);
    EngineOptions o{.cycle_interval = core::Duration(0), .check_every = 1, .failures = false};
    o.runtime.start_time = core::seconds(10);
    o.runtime.checkpoint_on_stop = preemptions_checkpoint;
    Policy policy = elastic_policy(core::Duration(0));
    policy.config.elastic_resize_cost = o.runtime.start_time;
    auto r = simulate(one_node(), w, policy, o);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_EQ(r->jobs[0].start_ms, 0);
    EXPECT_EQ(r->jobs[0].finish_ms, 100'000);
    EXPECT_EQ(r->jobs[0].resizes, 1);  // 4 -> 2
    EXPECT_EQ(r->jobs[0].attempts, 2);
    EXPECT_EQ(r->jobs[1].start_ms, 30'000);
    EXPECT_EQ(r->jobs[1].finish_ms, 130'000);
    EXPECT_EQ(r->jobs[1].resizes, 1);  // 2 -> 4
    EXPECT_EQ(r->jobs[0].preemptions + r->jobs[1].preemptions, 0);
    // Each resize's 10-s restart on its new GPUs: A on 2, B on 4.
    EXPECT_EQ(r->jobs[0].resize_restart_gpu_ms, 20'000);
    EXPECT_EQ(r->jobs[1].resize_restart_gpu_ms, 40'000);
    // A: 4 GPUs x 30 s + 2 x 70 s; B: 2 x 70 s + 4 x 30 s. The node was full throughout.
    EXPECT_EQ(r->jobs[0].gpu_ms, 260'000);
    EXPECT_EQ(r->jobs[1].gpu_ms, 260'000);
    EXPECT_EQ(r->allocated_gpu_ms, 520'000);
    EXPECT_EQ(r->checks, r->cycles);
  }
}

TEST(Elastic, RefusesAWorkloadWithoutRunTimeProfiles) {
  const Workload w{.source = "t.csv",
                   .jobs = {{.name = "j", .tenant = core::TenantId("a"), .duration_ms = 1000}}};
  auto r = simulate(one_node(), w, elastic_policy(core::Duration(0)), {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("job j has no run-time profile"), std::string::npos)
      << r.status().to_string();
}

// Random workloads on the small example fleet, with GPU failures and sublinear scaling:
// GPU-time is conserved through resizes, no GPU is held twice (the engine's owner check
// fails the run otherwise), sched::check passes every cycle, and skipping futile cycles
// changes nothing.
TEST(Elastic, ConservesGpuSecondsThroughResizes) {
  auto f = load_fleet(std::string(CORRAL_SOURCE_DIR) + "/examples/fleets/small-4node.yaml");
  ASSERT_TRUE(f.ok());
  f->failures.mtbf_per_gpu = core::seconds(200 * 3600);
  f->failures.repair = core::seconds(1800);
  for (const std::uint64_t seed : {1, 2, 3}) {
    SCOPED_TRACE(seed);
    Workload w = generate_synthetic({.jobs = 150,
                                     .tenants = 1,
                                     .seed = seed,
                                     .load_factor = 1.0,
                                     .sizes = {{1, 0.5}, {2, 0.3}, {4, 0.2}},
                                     .duration_median_s = 1200},
                                    f->total_gpus());
    for (TraceJob& j : w.jobs) make_elastic(j, std::max(1, j.gpus / 2), j.gpus * 4, 0.8);
    std::vector<std::int64_t> finishes[2];
    for (const bool skip : {true, false}) {
      EngineOptions o{.cycle_interval = core::seconds(10), .check_every = 1, .seed = seed};
      o.skip_futile_cycles = skip;
      o.runtime.start_time = core::seconds(30);
      o.runtime.checkpoint_on_stop = true;
      auto r = simulate(*f, w, elastic_policy(core::seconds(120)), o);
      ASSERT_TRUE(r.ok()) << r.status().to_string();
      std::int64_t held = 0, resizes = 0;
      for (const JobResult& j : r->jobs) {
        held += j.gpu_ms;
        resizes += j.resizes;
        ASSERT_GE(j.finish_ms, 0) << j.name << " never finished";
        ASSERT_LE(j.lost_gpu_ms, j.gpu_ms);
      }
      EXPECT_GT(resizes, 0);
      EXPECT_EQ(held, r->allocated_gpu_ms);
      EXPECT_EQ(r->checks, r->cycles);
      EXPECT_LE(r->allocated_gpu_ms, r->usable_gpu_ms);
      for (const Sample& s : r->timeline) ASSERT_LE(s.allocated_gpus, s.usable_gpus);
      for (const JobResult& j : r->jobs) finishes[skip ? 0 : 1].push_back(j.finish_ms);
    }
    EXPECT_EQ(finishes[0], finishes[1]);
  }
}

}  // namespace
}  // namespace corral::sim
