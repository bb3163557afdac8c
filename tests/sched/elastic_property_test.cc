// The elastic allocator against brute force: on small random cases (one node, 2-4
// running elastic jobs with random concave scaling curves, some GPUs idle, nothing
// pending), the growth decide() chooses is checked by sched::check() (never over
// capacity or quota, every job inside its range and keeping its GPUs), is the same on a
// second call, and reaches the largest sum of log throughputs of any allocation that
// only grows jobs: the stated objective (docs/scheduling.md, "7. Elastic jobs"), which
// water-filling reaches exactly for concave curves in steps of one GPU.
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/job_spec.h"
#include "sched/check.h"
#include "sched/decide.h"
#include "sched/decisions.h"
#include "testing/fleet_builder.h"
#include "testing/random_fleet.h"

namespace corral::sched {
namespace {

using testing::FleetBuilder;
using testing::JobBuilder;
using testing::Rng;

TEST(ElasticProperty, GrowthReachesTheBestSumOfLogThroughputs) {
  Rng rng(2026);
  SchedulerConfig config;
  config.elastic_min_efficiency = 0;  // every size in range is a candidate
  config.elastic_resize_cost = core::Duration(0);
  const core::Time now = core::time_from_ms(3'600'000);
  for (int iteration = 0; iteration < 400; ++iteration) {
    SCOPED_TRACE(iteration);
    const auto gpus = static_cast<std::int32_t>(rng.uniform(4, 12));
    const auto jobs = static_cast<std::int32_t>(rng.uniform(2, 4));
    FleetBuilder f;
    f.node("n", "H100", gpus, 1);
    std::vector<std::int32_t> current, maximum;
    std::vector<std::vector<core::ScalingPoint>> curves;
    std::int32_t next_gpu = 0;
    for (std::int32_t j = 0; j < jobs; ++j) {
      const auto now_at = static_cast<std::int32_t>(rng.uniform(1, 2));
      if (next_gpu + now_at > gpus) break;
      const auto max = static_cast<std::int32_t>(rng.uniform(now_at, gpus));
      // Concave: gains per GPU that never grow.
      std::vector<core::ScalingPoint> curve;
      double tp = 0, gain = static_cast<double>(rng.uniform(50, 100));
      for (std::int32_t n = 1; n <= max; ++n) {
        tp += gain;
        curve.push_back({.gpus = n, .throughput = tp});
        gain *= static_cast<double>(rng.uniform(30, 100)) / 100.0;
      }
      std::vector<std::pair<std::string, std::int32_t>> held;
      for (std::int32_t g = 0; g < now_at; ++g) held.push_back({"n", next_gpu++});
      f.running(JobBuilder(j + 1).gpus(now_at).elastic(1, max).scaling(curve), held);
      current.push_back(now_at);
      maximum.push_back(max);
      curves.push_back(curve);
    }
    const ClusterSnapshot s = f.build();
    const Decisions d = decide(s, config, now);
    for (const std::string& v : check(s, d, config, now)) ADD_FAILURE() << v;
    EXPECT_EQ(to_json(decide(s, config, now)), to_json(d)) << "same input, same output";

    std::vector<std::int32_t> chosen = current;
    for (const Resize& r : d.resizes) chosen[static_cast<std::size_t>(r.job.value - 1)] = r.to_gpus;
    const auto objective = [&](const std::vector<std::int32_t>& sizes) {
      double sum = 0;
      for (std::size_t j = 0; j < sizes.size(); ++j) {
        sum += std::log(core::throughput_at(curves[j], sizes[j]));
      }
      return sum;
    };
    // Brute force every allocation that grows jobs within their ranges and the node.
    double best = -1e300;
    std::vector<std::int32_t> sizes(current.size());
    const std::function<void(std::size_t, std::int32_t)> search = [&](std::size_t j,
                                                                      std::int32_t left) {
      if (j == sizes.size()) {
        best = std::max(best, objective(sizes));
        return;
      }
      for (std::int32_t n = current[j]; n <= maximum[j] && n - current[j] <= left; ++n) {
        sizes[j] = n;
        search(j + 1, left - (n - current[j]));
      }
    };
    search(0, gpus - next_gpu);
    EXPECT_NEAR(objective(chosen), best, 1e-9);
  }
}

}  // namespace
}  // namespace corral::sched
