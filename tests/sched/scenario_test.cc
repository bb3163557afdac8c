// Multi-cycle scenarios with stated bounds: starvation of a large gang, preemption churn,
// and (seeded) the absence of preemption cycles.
#include <cstdlib>
#include <set>

#include <gtest/gtest.h>

#include "testing/decide_helpers.h"
#include "testing/fleet_builder.h"
#include "testing/mini_cluster.h"
#include "testing/random_fleet.h"

namespace corral::sched {
namespace {

using testing::FleetBuilder;
using testing::JobBuilder;
using testing::MiniCluster;
using testing::Rng;

constexpr std::int64_t kMinute = 60'000;
using testing::kHour;

// A 256-GPU job arrives behind a steady stream of 1-8 GPU jobs (max runtime 1h) from two
// other tenants on a 512-GPU cluster kept full. Bound: it starts within starvation_age +
// the longest max runtime in its way (1h) + one cycle (no older job is starved: with
// one, its turn would come first). The default policy places greedily (no EASY
// backfill): until the job is starved, small jobs take every GPU as it frees and it
// waits; once starved it is the starved job whose turn it is, is promised the GPUs and
// gets them. The default config with a 2-h starvation age (the default is 24 h: the same
// mechanism, a day of simulated arrivals longer).
TEST(Scenario, LargeGangStartsWithinTheStatedBoundBehindAStreamOfSmallJobs) {
  FleetBuilder f;
  for (int n = 0; n < 64; ++n)
    f.dgx("n" + std::to_string(n), "H100", {.leaf = "l" + std::to_string(n / 16)});
  f.tenant("a").tenant("b").tenant("big");
  MiniCluster cluster(f.input());
  Rng rng(11);
  std::int64_t next_id = 1;
  const SchedulerConfig config{.starvation_age = core::seconds(2 * 3600)};
  const std::int64_t big_submit = 30 * kMinute;
  const core::JobId big(1'000'000);
  std::vector<std::string> violations;
  for (std::int64_t now = 0; now < 6 * kHour; now += kMinute) {
    // Six new small jobs a minute (a 1.5x offered load) keep the cluster full and the
    // queue growing, though no small job waits the starvation age within the run.
    for (int i = 0; i < 6; ++i) {
      const std::string tenant = rng.chance(0.5) ? "a" : "b";
      const auto gpus = static_cast<std::int32_t>(1 << rng.uniform(0, 3));
      cluster.submit(JobBuilder(next_id++)
                         .tenant(tenant)
                         .gpus(gpus)
                         .max_runtime(core::seconds(3600))
                         .queued_at(now)
                         .pending(),
                     core::Duration(rng.uniform(10, 60) * kMinute));
    }
    if (now == big_submit) {
      cluster.submit(
          JobBuilder(big.value).tenant("big").gpus(256).per_node(8).queued_at(now).pending(),
          core::seconds(3600));
    }
    cluster.step(config, core::time_from_ms(now), violations);
    ASSERT_TRUE(violations.empty()) << violations.front();
    if (cluster.first_start().count(big)) break;
  }
  ASSERT_TRUE(cluster.first_start().count(big)) << "the 256-GPU job never started";
  const std::int64_t waited = core::to_ms(cluster.first_start().at(big)) - big_submit;
  EXPECT_LE(waited, core::to_ms(config.starvation_age) + 1 * kHour + kMinute);
  EXPECT_GE(waited, core::to_ms(config.starvation_age)) << "no promise before it starved";
  RecordProperty("big_job_wait_minutes", static_cast<int>(waited / kMinute));
}

// A 64-GPU cluster full of preemptible training (8 GPUs, checkpoint every 30 min,
// restore 2 min), and a production 8-GPU job every 37 minutes for a day (out of step with
// the checkpoints, so victims do lose work), each running an
// hour. Bound: each production job preempts at most one 8-GPU victim, which loses at
// most 30 min of work plus the restore, so lost work <= arrivals * 8 * 32 min; and no job
// is preempted more than the cap.
TEST(Scenario, ChurnOfHighPriorityJobsKeepsLostWorkBounded) {
  FleetBuilder f;
  for (int n = 0; n < 8; ++n) f.dgx("n" + std::to_string(n));
  MiniCluster cluster(f.input());
  std::int64_t next_id = 1;
  for (int i = 0; i < 16; ++i) {
    cluster.submit(JobBuilder(next_id++)
                       .tenant("research")
                       .tier(0)
                       .preemptible()
                       .gpus(8)
                       .checkpoint(core::seconds(1800), core::seconds(120))
                       .max_runtime(core::seconds(7 * 24 * 3600))
                       .pending(),
                   core::seconds(20 * 3600));
  }
  const SchedulerConfig config;
  std::vector<std::string> violations;
  int arrivals = 0;
  for (std::int64_t now = 0; now < 24 * kHour; now += kMinute) {
    if (now > 0 && now % (37 * kMinute) == 0) {
      ++arrivals;
      cluster.submit(JobBuilder(1000 + arrivals)
                         .tenant("prod")
                         .tier(2)
                         .gpus(8)
                         .max_runtime(core::seconds(2 * 3600))
                         .queued_at(now)
                         .pending(),
                     core::seconds(3600));
    }
    cluster.step(config, core::time_from_ms(now), violations);
    ASSERT_TRUE(violations.empty()) << violations.front();
  }
  const double bound_gpu_s = arrivals * 8.0 * 32 * 60;
  EXPECT_LE(cluster.lost_gpu_seconds(), bound_gpu_s);
  EXPECT_LE(cluster.preemptions(), arrivals);
  EXPECT_GT(cluster.preemptions(), 0) << "the scenario should exercise preemption";
  for (const auto& p : cluster.state().pending) {
    EXPECT_LE(p.preemptions, config.preemption.max_preemptions_per_job);
  }
  RecordProperty("lost_gpu_minutes", static_cast<int>(cluster.lost_gpu_seconds() / 60));
  RecordProperty("bound_gpu_minutes", static_cast<int>(bound_gpu_s / 60));
  RecordProperty("preemptions", static_cast<int>(cluster.preemptions()));
}

// Under a fixed workload (no arrivals), no job preempts a job that preempted it earlier:
// the churn Kueue users report (#3779, #6861). Seeded random fleets, many cycles each.
TEST(Scenario, NoPreemptionCyclesUnderAFixedWorkload) {
  const char* one = std::getenv("CORRAL_SEED");
  const std::uint64_t first = one ? std::strtoull(one, nullptr, 10) : 7000;
  const std::uint64_t count = one ? 1 : 60;
  for (std::uint64_t seed = first; seed < first + count; ++seed) {
    SCOPED_TRACE("CORRAL_SEED=" + std::to_string(seed));
    Rng rng(seed);
    testing::FleetShape shape{.nodes = static_cast<std::int32_t>(rng.uniform(2, 12)),
                              .gpu_types = 1,
                              .leaves = 2,
                              .spines = 1,
                              .tenants = static_cast<std::int32_t>(rng.uniform(2, 4))};
    shape.leaves = std::min(shape.leaves, shape.nodes);
    MiniCluster cluster(testing::random_fleet(rng, shape));
    const testing::WorkloadShape work{.max_gpus = 16};
    for (auto& job : testing::random_jobs(rng, cluster.state(), work, 1, 40)) {
      job.request.checkpoint_interval = core::seconds(600);
      job.queued_at = core::Time{};
      cluster.submit(std::move(job), core::seconds(rng.uniform(1, 8) * 3600));
    }
    std::set<std::pair<std::int64_t, std::int64_t>> preempted;  // (by, victim)
    std::vector<std::string> violations;
    for (std::int64_t now = 0; now < 12 * kHour; now += 5 * kMinute) {
      const Decisions d = cluster.step(SchedulerConfig{}, core::time_from_ms(now), violations);
      ASSERT_TRUE(violations.empty()) << violations.front();
      for (const Preemption& p : d.preemptions) {
        EXPECT_FALSE(preempted.count({p.victim.value, p.for_job.value}))
            << "job " << p.for_job.value << " preempted job " << p.victim.value
            << ", which had preempted it";
        preempted.insert({p.for_job.value, p.victim.value});
      }
    }
    if (HasFailure()) return;
  }
}

}  // namespace
}  // namespace corral::sched
