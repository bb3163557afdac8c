// The elastic allocator against brute force, on small random cases: one node, 2-4
// running elastic jobs with random concave scaling curves, some GPUs idle, nothing
// pending. Every decision passes sched::check() (never over capacity or quota, every job
// inside its range, a shrink's GPUs taken by a growth) and is the same on a second call.
// The objective is the one docs/scheduling.md states (part 7): the sum over jobs of
// -1/speedup (the harmonic mean's), a job's speedup being its throughput over its
// throughput at its minimum, discounted at any size but its current one by its restart's
// share of its horizon. With free restarts the allocation is the best of every
// allocation, shrinks and moves between running jobs included; with restarts that cost,
// the moves made gain more than their restarts cost, and no single GPU moved between two
// jobs, or between a job and the idle ones, would raise the objective.
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

struct Case {
  ClusterSnapshot snapshot;
  std::int32_t gpus = 0;
  std::vector<std::int32_t> current, maximum;
  std::vector<double> discount;  // per job, at sizes other than its current one
  std::vector<std::vector<core::ScalingPoint>> curves;
};

// One node of 4-12 GPUs; jobs at 1-3 GPUs, ranges from 1 up to the node, concave curves
// (gains per GPU that never grow), each started `held_ms` before `now` (random if 0).
Case random_case(Rng& rng, const SchedulerConfig& config, core::Time now) {
  Case c;
  c.gpus = static_cast<std::int32_t>(rng.uniform(4, 12));
  const auto jobs = static_cast<std::int32_t>(rng.uniform(2, 4));
  FleetBuilder f;
  f.node("n", "H100", c.gpus, 1);
  std::int32_t next_gpu = 0;
  for (std::int32_t j = 0; j < jobs; ++j) {
    const auto now_at = static_cast<std::int32_t>(rng.uniform(1, 3));
    if (next_gpu + now_at > c.gpus) break;
    const auto max = static_cast<std::int32_t>(rng.uniform(now_at, c.gpus));
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
    // Held for 1 to 60 minutes: restarts cost from half the horizon to almost nothing.
    const std::int64_t held_ms = rng.uniform(1, 60) * 60'000;
    f.run_state(j + 1, {.started_ms = core::to_ms(now) - held_ms});
    const double horizon_ms = std::max<double>(
        static_cast<double>(held_ms), static_cast<double>(config.elastic_replan_period.count()));
    c.discount.push_back(
        std::max(0.0, 1.0 - static_cast<double>(config.elastic_resize_cost.count()) / horizon_ms));
    c.current.push_back(now_at);
    c.maximum.push_back(max);
    c.curves.push_back(curve);
  }
  c.snapshot = f.build();
  return c;
}

// The stated objective of an allocation.
double objective(const Case& c, const std::vector<std::int32_t>& sizes) {
  double sum = 0;
  for (std::size_t j = 0; j < sizes.size(); ++j) {
    double speedup = core::throughput_at(c.curves[j], sizes[j]) / c.curves[j][0].throughput;
    if (sizes[j] != c.current[j]) speedup *= c.discount[j];
    sum += speedup > 0 ? -1.0 / speedup : -1e300;
  }
  return sum;
}

std::vector<std::int32_t> chosen_sizes(const Case& c, const Decisions& d) {
  std::vector<std::int32_t> chosen = c.current;
  for (const Resize& r : d.resizes) chosen[static_cast<std::size_t>(r.job.value - 1)] = r.to_gpus;
  return chosen;
}

TEST(ElasticProperty, WithFreeRestartsTheAllocationIsTheBestOfAll) {
  Rng rng(2026);
  SchedulerConfig config;
  config.elastic_resize_cost = core::Duration(0);
  config.preemption.min_runtime = core::Duration(0);
  const core::Time now = core::time_from_ms(3'600'000);
  for (int iteration = 0; iteration < 400; ++iteration) {
    SCOPED_TRACE(iteration);
    const Case c = random_case(rng, config, now);
    const Decisions d = decide(c.snapshot, config, now);
    for (const std::string& v : check(c.snapshot, d, config, now)) ADD_FAILURE() << v;
    EXPECT_EQ(to_json(decide(c.snapshot, config, now)), to_json(d)) << "same input, same output";
    // Brute force every allocation of the node's GPUs within the jobs' ranges.
    double best = -1e300;
    std::vector<std::int32_t> sizes(c.current.size());
    const std::function<void(std::size_t, std::int32_t)> search = [&](std::size_t j,
                                                                      std::int32_t left) {
      if (j == sizes.size()) {
        best = std::max(best, objective(c, sizes));
        return;
      }
      for (std::int32_t n = 1; n <= c.maximum[j] && n <= left; ++n) {
        sizes[j] = n;
        search(j + 1, left - n);
      }
    };
    search(0, c.gpus);
    EXPECT_NEAR(objective(c, chosen_sizes(c, d)), best, 1e-9);
  }
}

TEST(ElasticProperty, MovesPayForTheirRestartsAndNoSingleGpuMovedWouldGainMore) {
  Rng rng(7);
  SchedulerConfig config;
  config.preemption.min_runtime = core::Duration(0);
  const core::Time now = core::time_from_ms(3'600'000);
  std::int32_t moved = 0;
  for (int iteration = 0; iteration < 400; ++iteration) {
    SCOPED_TRACE(iteration);
    const Case c = random_case(rng, config, now);
    const Decisions d = decide(c.snapshot, config, now);
    for (const std::string& v : check(c.snapshot, d, config, now)) ADD_FAILURE() << v;
    const std::vector<std::int32_t> chosen = chosen_sizes(c, d);
    const double value = objective(c, chosen);
    if (!d.resizes.empty()) ++moved;
    EXPECT_GE(value, objective(c, c.current) - 1e-12) << "the moves cost more than they gain";
    std::int32_t idle = c.gpus;
    for (std::int32_t n : chosen) idle -= n;
    // One GPU from job i (or the idle ones, i = -1) to job j (or to idle, j = -1).
    const auto n_jobs = static_cast<std::int32_t>(chosen.size());
    for (std::int32_t i = -1; i < n_jobs; ++i) {
      for (std::int32_t j = -1; j < n_jobs; ++j) {
        if (i == j) continue;
        std::vector<std::int32_t> other = chosen;
        if (i < 0 ? idle == 0 : other[i] == 1) continue;
        if (j >= 0 && other[j] == c.maximum[j]) continue;
        if (i >= 0) --other[i];
        if (j >= 0) ++other[j];
        EXPECT_LE(objective(c, other), value + 1e-12) << "moving a GPU from " << i << " to " << j;
      }
    }
  }
  EXPECT_GT(moved, 40) << "the cases must exercise moves";
}

}  // namespace
}  // namespace corral::sched
