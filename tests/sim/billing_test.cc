// The simulator's bill comes from the ledger's accrual: a simulated month with failures
// and preemptions, every GPU-hour billed once, the allocated buckets equal to what the
// engine held, the unhealthy bucket to the failures' repair time.
#include "sim/billing.h"

#include <numeric>

#include "sim_fixtures.h"
#include <gtest/gtest.h>

#include "sim/metrics.h"
#include "sim/traces/synthetic.h"

namespace corral::sim {
namespace {

std::int64_t of(const LedgerTotals& t, ledger::Bucket b) {
  return t.gpu_ms[static_cast<std::size_t>(b)];
}

TEST(Billing, ASimulatedMonthIsBilledOnceEveryGpuHour) {
  Fleet fleet = testing::pool_fleet(2, 8, "H100");
  fleet.prices.set_price(core::GpuTypeId("H100"), "*", 3'600'000);  // 1 micro-$ a ms
  fleet.failures.mtbf_per_gpu = core::seconds(30 * 24 * 3600);      // about a failure a day
  SyntheticSpec spec{.jobs = 2800, .load_factor = 1.1};
  const Workload w = generate_synthetic(spec, fleet.total_gpus());
  auto policy = policy_by_name("tiresias");  // preempts: some work is lost
  ASSERT_TRUE(policy.ok());
  EngineOptions o;
  o.runtime.checkpoint_interval = core::seconds(1800);
  o.runtime.start_time = core::seconds(60);
  auto run = simulate(fleet, w, *policy, o);
  ASSERT_TRUE(run.ok()) << run.status().to_string();
  ASSERT_GT(run->end_ms - run->start_ms, std::int64_t{28} * 24 * 3'600'000) << "a month";

  auto billed = bill(*run, fleet);
  ASSERT_TRUE(billed.ok()) << billed.status().to_string();
  const LedgerTotals& t = *billed;
  EXPECT_EQ(t.residual_ms, 0);
  const std::int64_t all = std::accumulate(t.gpu_ms.begin(), t.gpu_ms.end(), std::int64_t{0});
  EXPECT_EQ(all, t.periods * 3'600'000 * fleet.total_gpus());
  using B = ledger::Bucket;
  const std::int64_t held = of(t, B::kUsed) + of(t, B::kAllocatedIdle) + of(t, B::kPreemptionLost) +
                            of(t, B::kRestartOverhead);
  EXPECT_EQ(held, run->allocated_gpu_ms) << "the engine's integral of allocated GPUs";
  EXPECT_GT(of(t, B::kPreemptionLost), 0);
  EXPECT_GT(of(t, B::kRestartOverhead), 0);
  ASSERT_GT(run->gpu_failures, 0);
  EXPECT_GT(of(t, B::kUnhealthy), 0);
  // Money: 1 micro-dollar a GPU-ms, nothing preemptible in this price book's terms.
  const auto money = std::accumulate(t.amount.begin(), t.amount.end(), core::MicroDollars{0});
  EXPECT_EQ(money, all);
  // The summary's figures are these.
  const Metrics m = compute_metrics(*run, fleet);
  EXPECT_TRUE(m.ledger_error.empty()) << m.ledger_error;
  EXPECT_EQ(m.ledger.gpu_ms, t.gpu_ms);
}

}  // namespace
}  // namespace corral::sim
