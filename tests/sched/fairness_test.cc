// Fairness over a simulated day: three tenants with weights 1:2:1 keep the queue full of
// 1-GPU jobs on a 64-GPU cluster. A loop calls decide() every minute of virtual time,
// starts what it places and finishes jobs when their (seeded random) runtime is up.
// Each tenant's GPU-hours must be within 5% of its entitled share.
#include <map>

#include <gtest/gtest.h>

#include "sched/check.h"
#include "sched/decide.h"
#include "sched/usage.h"
#include "testing/fleet_builder.h"
#include "testing/random_fleet.h"

namespace corral::sched {
namespace {

using testing::FleetBuilder;
using testing::JobBuilder;

TEST(Fairness, WeightedSharesHoldOverASimulatedDay) {
  const std::map<std::string, double> weights = {{"a", 1}, {"b", 2}, {"c", 1}};
  testing::Rng rng(7);
  const core::Duration half_life = core::seconds(3600);
  std::map<std::string, DecayedUsage> usage;
  for (const auto& [t, w] : weights) usage.emplace(t, DecayedUsage(half_life));

  struct Running {
    JobBuilder job;
    std::vector<std::pair<std::string, std::int32_t>> gpus;
    std::int64_t ends_ms;
    std::string tenant;
  };
  std::vector<Running> running;
  std::map<std::string, std::vector<JobBuilder>> queued;
  std::map<std::string, double> gpu_seconds;
  std::int64_t next_id = 1;
  const std::int64_t step_ms = 60'000, day_ms = 24 * 3'600'000;

  for (std::int64_t now = 0; now < day_ms; now += step_ms) {
    // Finish what is done; account the last minute of every running job.
    for (const auto& r : running) {
      gpu_seconds[r.tenant] += 60;
      usage.at(r.tenant).add(60 * 2.0, core::time_from_ms(now));  // H100 usage factor 2
    }
    std::erase_if(running, [&](const Running& r) { return r.ends_ms <= now; });
    // Keep every tenant's queue full.
    for (const auto& [t, w] : weights) {
      while (queued[t].size() < 40) {
        queued[t].push_back(JobBuilder(next_id++).tenant(t).gpus(1).queued_at(now));
      }
    }

    FleetBuilder f;
    for (int n = 0; n < 8; ++n) f.dgx("n" + std::to_string(n));
    for (const auto& [t, w] : weights) {
      f.tenant(t, w).usage(t, usage.at(t).value_at(core::time_from_ms(now)));
      for (const JobBuilder& j : queued[t]) f.pending(j);
    }
    for (const Running& r : running) f.running(r.job, r.gpus);
    const ClusterSnapshot s = f.build();
    const SchedulerConfig config{.usage_half_life = half_life};
    const Decisions d = decide(s, config, core::time_from_ms(now));
    ASSERT_TRUE(check(s, d, config, core::time_from_ms(now)).empty());

    for (const Placement& p : d.placements) {
      for (auto& [t, jobs] : queued) {
        const auto it = std::find_if(jobs.begin(), jobs.end(),
                                     [&](const JobBuilder& j) { return j.request().id == p.job; });
        if (it == jobs.end()) continue;
        Running r{.job = *it, .ends_ms = now + rng.uniform(10, 90) * 60'000, .tenant = t};
        for (const GpuRef& g : p.gpus) r.gpus.push_back({g.node.value, g.index});
        running.push_back(std::move(r));
        jobs.erase(it);
        break;
      }
    }
  }

  double total = 0;
  for (const auto& [t, s] : gpu_seconds) total += s;
  EXPECT_GT(total, 0.95 * 64 * 24 * 3600) << "the cluster should stay busy";
  for (const auto& [t, w] : weights) {
    const double entitled = w / 4.0;
    const double got = gpu_seconds[t] / total;
    EXPECT_NEAR(got / entitled, 1.0, 0.05)
        << "tenant " << t << " got " << got << " of the GPU-hours, entitled to " << entitled;
  }
}

}  // namespace
}  // namespace corral::sched
