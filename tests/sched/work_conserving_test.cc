// Work conservation as a property: on seeded random fleets and queues, the default never
// leaves a job waiting that fits the GPUs left free, except for GPUs a planned start holds
// (a promise it names), and those only from a job that may not borrow them: one that
// checkpoints and will have saved work by the promise (here: 31 minutes before it) may.
// Jobs here only prefer their topology, every tenant may borrow without limit, and nothing
// is reserved or stopping, so "fits" is "no more GPUs than are free": a failure is a GPU
// idled for nothing.
#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "testing/decide_helpers.h"
#include "testing/fleet_builder.h"

namespace corral::sched {
namespace {

using testing::decide_checked;
using testing::FleetBuilder;
using testing::JobBuilder;
using testing::kHour;

TEST(WorkConserving, NoFittingJobWaitsBesideIdleGpusButForAPromiseItNames) {
  std::int64_t promised = 0, preempted = 0, lent = 0;
  for (std::uint32_t seed = 1; seed <= 400; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    std::mt19937 rng(seed);
    const auto pick = [&](int lo, int hi) {
      return std::uniform_int_distribution<int>(lo, hi)(rng);
    };
    const std::int64_t now = 100 * kHour;
    FleetBuilder f;
    const int nodes = pick(1, 5);
    for (int n = 0; n < nodes; ++n) f.dgx("n" + std::to_string(n));
    for (int t = 0; t < 3; ++t)
      f.tenant("t" + std::to_string(t)).usage("t" + std::to_string(t), pick(0, 9) * 1e6);
    // Running jobs fill a random part of each node.
    std::int64_t id = 1;
    for (int n = 0; n < nodes; ++n) {
      int gpu = 0;
      while (gpu < 8 && pick(0, 3) > 0) {
        const int size = std::min(8 - gpu, pick(1, 4));
        std::vector<std::pair<std::string, std::int32_t>> gpus;
        for (int g = 0; g < size; ++g) gpus.emplace_back("n" + std::to_string(n), gpu + g);
        // Up to 60 h old, so some started before a due job was queued and are not its to
        // stop; one in 30 has overrun its max runtime (it ends now, for planning).
        const std::int64_t ran_ms = pick(1, 240) * kHour / 4;
        f.running(JobBuilder(id)
                      .tenant("t" + std::to_string(pick(0, 2)))
                      .gpus(size)
                      .max_runtime(core::seconds(ran_ms / 1000 +
                                                 (pick(0, 29) == 0 ? -1 : pick(1, 24)) * 3600))
                      .checkpoint(core::seconds(1800), core::seconds(60)),
                  gpus);
        f.run_state(id, {.started_ms = now - ran_ms, .checkpoint_ms = now - pick(0, 30) * 60'000});
        ++id;
        gpu += size;
      }
    }
    // Pending jobs, some of them past the 24-h starvation age.
    const int queued = pick(1, 12);
    for (int j = 0; j < queued; ++j, ++id) {
      JobBuilder job = JobBuilder(id)
                           .tenant("t" + std::to_string(pick(0, 2)))
                           .gpus(1 << pick(0, 4))
                           .max_runtime(core::seconds(pick(1, 48) * 3600))
                           .queued_at(now - pick(0, 60) * kHour);
      if (pick(0, 1) == 1) job.checkpoint(core::seconds(1800), core::seconds(60));
      f.pending(job);
    }
    const ClusterSnapshot s = f.build();
    const Decisions d = decide_checked(s, {}, core::time_from_ms(now));

    // GPUs held after the decision: running jobs (victims and shrunk jobs keep theirs until
    // they stop), placements, and what planned starts hold.
    std::set<std::pair<std::string, std::int32_t>> held;
    for (const RunningJob& r : s.running()) {
      for (const GpuRef& g : r.gpus) held.insert({g.node.value, g.index});
    }
    for (const Placement& p : d.placements) {
      for (const GpuRef& g : p.gpus) held.insert({g.node.value, g.index});
    }
    std::set<std::pair<std::string, std::int32_t>> promised_gpus;
    for (const PlannedStart& p : d.planned_starts) {
      for (const GpuRef& g : p.gpus) promised_gpus.insert({g.node.value, g.index});
    }
    std::int32_t free_unpromised = 0, free_promised = 0;
    for (const core::Node& n : s.nodes()) {
      for (const core::Gpu& g : n.gpus) {
        if (held.count({n.id.value, g.index})) continue;
        (promised_gpus.count({n.id.value, g.index}) ? free_promised : free_unpromised) += 1;
      }
    }
    // A job that checkpoints may borrow GPUs promised 31 minutes or more from now.
    const bool lends =
        !d.planned_starts.empty() && core::to_ms(d.planned_starts[0].at) - now >= 31 * 60'000;
    for (const Pending& p : d.pending) {
      const PendingJob& job =
          *std::find_if(s.pending().begin(), s.pending().end(),
                        [&](const PendingJob& j) { return j.request.id == p.job; });
      const bool borrows = lends && job.request.checkpoint_interval.count() > 0;
      if (job.request.gpus > free_unpromised + (borrows ? free_promised : 0)) continue;
      // It fits the GPUs no promise holds: only a promise that names it may keep it out.
      ADD_FAILURE() << "job " << p.job.value << " (" << job.request.gpus << " GPUs) waits beside "
                    << free_unpromised << " idle GPUs: " << p.reason;
    }
    promised += d.planned_starts.empty() ? 0 : 1;
    for (const Placement& p : d.placements) {
      for (const GpuRef& g : p.gpus) lent += promised_gpus.count({g.node.value, g.index});
    }
    preempted += d.preemptions.empty() ? 0 : 1;
  }
  // The cases above include promises, preemptions and lent GPUs, or the property says little.
  EXPECT_GT(promised, 10);
  EXPECT_GT(preempted, 10);
  EXPECT_GT(lent, 10);
}

}  // namespace
}  // namespace corral::sched
