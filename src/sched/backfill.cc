#include "sched/internal/backfill.h"

#include <algorithm>
#include <tuple>

namespace corral::sched::detail {

core::Time expected_end(const RunningJob& job, EndBy end_by, core::Duration grace, core::Time now) {
  if (job.stopping) return now + grace;
  core::Duration runtime =
      end_by == EndBy::kMaxRuntime ? job.request.max_runtime : job.request.expected_runtime();
  if (end_by == EndBy::kEstimateOrLimit && job.started_at + runtime < now) {
    runtime = job.request.max_runtime;
  }
  return std::max(job.started_at + runtime, now);
}

std::optional<PlannedPlacement> plan_start(Plan& plan, const RunningIndex& running,
                                           const PlaceRequest& request,
                                           const std::vector<std::uint64_t>& forbidden,
                                           core::Duration grace, core::Time now, EndBy end_by) {
  const ClusterSnapshot& s = plan.snapshot();
  // Running jobs of the request's type in the order they are expected to end; for a
  // region-bound request only those in its region, as no other end can make room for it.
  std::vector<std::pair<core::Time, std::int32_t>> ends;
  for (std::int32_t ix = 0; ix < static_cast<std::int32_t>(s.running().size()); ++ix) {
    if (running.type[ix] != request.type || running.touched[ix]) continue;
    if (request.region != kAnyRegion && running.region[ix] != request.region) continue;
    ends.push_back({expected_end(s.running()[ix], end_by, grace, now), ix});
  }
  std::sort(ends.begin(), ends.end());

  const Plan::Mark mark = plan.mark();
  std::optional<PlannedPlacement> out;
  PlaceMiss miss;
  for (const auto& [end, ix] : ends) {
    const JobRequest& r = s.running()[ix].request;
    plan.give_back(running.takes[ix], running.tenant[ix], r.cpus_per_gpu, r.memory_per_gpu_mib);
    // What the job frees inside forbidden areas stays out of reach.
    std::vector<Plan::Take> hide;
    for (const Plan::Take& t : running.takes[ix]) {
      const std::uint64_t m = t.mask & forbidden[t.node] & plan.free_mask(t.node);
      if (m != 0) hide.push_back({t.node, m});
    }
    plan.block(hide);
    if (plan.free_in(request.type, request.region) < request.gpus) continue;
    if (auto placed = find_placement(plan, request, miss)) {
      out = PlannedPlacement{.at = end, .takes = std::move(placed->takes), .last_ix = ix};
      break;
    }
  }
  plan.rollback(mark);
  return out;
}

}  // namespace corral::sched::detail
