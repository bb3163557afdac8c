#include <algorithm>
#include <cmath>
#include <queue>

#include "sched/internal/admit.h"
#include "sched/internal/cycle.h"
#include "sched/internal/text.h"

namespace corral::sched::detail {

// Running elastic jobs grow into GPUs that no job left pending could use, by water-filling:
// the next GPUs go to the job whose next allowed size adds the most log-throughput per GPU
// (its scaling curve; linear without one), so the cycle's growth maximises the sum over
// jobs of log throughput, proportional fairness between the growing jobs: a job at 2 GPUs
// doubling gains as much as one at 16 doubling, for an eighth of the GPUs. A job grows
// only to sizes where each GPU is still worth elastic_min_efficiency of its first, and
// only to a size whose saved run time beats the restart it costs (restore time +
// elastic_resize_cost; a step that does not pay is skipped for the next, larger one). Each job is
// resized at most once a cycle, to where its steps reached; a resize restarts it from its
// checkpoint, so a job that ran less than min_runtime waits, like a preemption victim would.
void grow_elastic(Cycle& c) {
  // Types some pending job could still use, and where: (type, its region or kAnyRegion).
  std::set<TypeIx> wanted_types;
  std::set<std::pair<TypeIx, RegionIx>> wanted;
  std::map<core::JobId, const PendingJob*> pending;
  for (const PendingJob& p : c.s.pending()) pending[p.request.id] = &p;
  for (const Pending& p : c.out.pending) {
    const JobRequest& r = pending.at(p.job)->request;
    for (TypeIx t : candidate_types(c.s, c.config, r)) {
      wanted_types.insert(t);
      wanted.insert({t, c.s.region_of(r)});
    }
  }
  // Whether a job bound to `region` (kAnyRegion: it may grow anywhere) would grow into GPUs
  // of `type` a pending job could use: a job bound to another region could not.
  const auto is_wanted = [&](TypeIx type, RegionIx region) {
    if (region == kAnyRegion) return wanted_types.count(type) > 0;
    return wanted.count({type, kAnyRegion}) > 0 || wanted.count({type, region}) > 0;
  };
  struct Grower {
    std::int32_t ix = 0;
    std::int32_t target = 0;          // the size its steps reached so far
    std::vector<std::int32_t> sizes;  // useful sizes above its current one, ascending
    std::size_t next = 0;             // into sizes
    std::vector<Plan::Take> all;      // its GPUs at `target`
  };
  // Hysteresis: growing from `current` to `size` must save more run time (by the job's
  // estimate, or its max runtime) than the restart costs.
  const auto worth_it = [&](const RunningJob& job, std::int32_t current, std::int32_t size) {
    const JobRequest& r = job.request;
    // Run so far: this attempt's wall time. After restarts that understates it, so a job
    // late in its run may still be grown (the attained service over the current size
    // overstates it after a shrink, which was worse: docs/scheduling.md, part 7).
    const core::Duration left =
        std::max(r.expected_runtime() - (c.now - job.started_at), core::Duration(0));
    const double saved_s = static_cast<double>(left.count()) / 1000.0 *
                           (1.0 - detail::throughput(r, current) / detail::throughput(r, size));
    return saved_s >
           static_cast<double>((r.restore_time + c.config.elastic_resize_cost).count()) / 1000.0;
  };
  std::vector<Grower> growers;
  for (std::int32_t ix = 0; ix < static_cast<std::int32_t>(c.s.running().size()); ++ix) {
    const RunningJob& job = c.s.running()[ix];
    const JobRequest& r = job.request;
    const TypeIx type = c.running.type[ix];
    const auto current = static_cast<std::int32_t>(job.gpus.size());
    if (!r.elastic || current >= r.elastic->max_gpus || c.running.touched[ix] || job.stopping ||
        type < 0 || is_wanted(type, c.s.region_of(r)) ||
        c.now - job.started_at < c.config.preemption.min_runtime_for(r.tier)) {
      continue;
    }
    Grower g{.ix = ix, .target = current, .all = c.running.takes[ix]};
    for (std::int32_t size : detail::useful_sizes(r, c.config.elastic_min_efficiency)) {
      if (size > current) g.sizes.insert(g.sizes.begin(), size);
    }
    // Not even its largest useful size would pay for the restart: leave it.
    if (g.sizes.empty() || !worth_it(job, current, g.sizes.back())) continue;
    growers.push_back(std::move(g));
  }
  // (gain per GPU of the grower's next step, -grower index): ties go to the earlier job.
  std::priority_queue<std::pair<double, std::int64_t>> steps;
  const auto push_next = [&](std::size_t gi) {
    const Grower& g = growers[gi];
    if (g.next >= g.sizes.size()) return;
    const JobRequest& r = c.s.running()[g.ix].request;
    const double gain =
        std::log(detail::throughput(r, g.sizes[g.next]) / detail::throughput(r, g.target)) /
        static_cast<double>(g.sizes[g.next] - g.target);
    if (gain > 0) steps.push({gain, -static_cast<std::int64_t>(gi)});
  };
  for (std::size_t gi = 0; gi < growers.size(); ++gi) push_next(gi);
  while (!steps.empty()) {
    const auto gi = static_cast<std::size_t>(-steps.top().second);
    steps.pop();
    Grower& g = growers[gi];
    const RunningJob& job = c.s.running()[g.ix];
    const JobRequest& r = job.request;
    const TypeIx type = c.running.type[g.ix];
    const std::int32_t size = g.sizes[g.next++];
    // Hysteresis: this size must pay for the restart; a larger one may.
    if (!worth_it(job, static_cast<std::int32_t>(job.gpus.size()), size)) {
      push_next(gi);
      continue;
    }
    c.gate.enter(c.plan, c.gate.view_for(r));
    if (!detail::admit(c.plan, c.running.tenant[g.ix], type, size - g.target).ok) continue;
    if (c.caps.room(c.running.tenant[g.ix], r.tier) < size - g.target) continue;
    detail::PlaceRequest request = place_request(c, r, type, size - g.target);
    request.topology.mode = core::TopologyMode::kPreferred;
    detail::PlaceMiss miss;
    auto placed = detail::find_placement(c.plan, request, miss);
    if (!placed) continue;  // no room for this step: its next, larger one is not tried
    std::vector<Plan::Take> all = g.all;
    all.insert(all.end(), placed->takes.begin(), placed->takes.end());
    if (r.topology.mode == core::TopologyMode::kRequired &&
        !detail::satisfies(c.s, detail::takes_of(c.s, detail::gpus_of(c.s, all)),
                           r.topology.pack)) {
      continue;
    }
    c.plan.take(placed->takes, c.running.tenant[g.ix], r.cpus_per_gpu, r.memory_per_gpu_mib);
    c.caps.add(c.running.tenant[g.ix], r.tier, size - g.target);
    g.all = std::move(all);
    g.target = size;
    push_next(gi);
  }
  for (std::size_t gi = 0; gi < growers.size(); ++gi) {
    const Grower& g = growers[gi];
    const RunningJob& job = c.s.running()[g.ix];
    const auto current = static_cast<std::int32_t>(job.gpus.size());
    if (g.target == current) continue;
    c.running.touched[g.ix] = true;
    c.out.resizes.push_back(
        {.job = c.s.running()[g.ix].request.id,
         .from_gpus = current,
         .to_gpus = g.target,
         .gpus = detail::gpus_of(c.s, g.all),
         .reason = cat("grew from ", current, " to ", g.target, " GPUs into idle capacity")});
  }
}

}  // namespace corral::sched::detail
