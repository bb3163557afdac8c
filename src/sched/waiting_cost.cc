#include "sched/internal/waiting_cost.h"

#include <algorithm>
#include <limits>

namespace corral::sched::detail {

double WaitingCost::gpu_seconds(Plan& plan, const RunningIndex& running,
                                const PlaceRequest& request,
                                const std::vector<std::uint64_t>& forbidden, core::Duration grace,
                                core::Time now, bool behind_queue, double enough) {
  const ClusterSnapshot& s = plan.snapshot();
  const auto cost = [&](core::Time at) {
    return static_cast<double>(request.gpus) * static_cast<double>((at - now).count()) / 1000.0;
  };
  // By GPU counts alone, from the type's expected ends: when that many GPUs free.
  // Placement needs at least as long. A region-bound job is weighed by its placement only
  // (the counts are per type).
  core::Time by_count = now;
  if (request.region == kAnyRegion) {
    auto& ends = ends_[request.type];
    if (!ends) {
      ends.emplace();
      for (std::int32_t ix = 0; ix < static_cast<std::int32_t>(s.running().size()); ++ix) {
        if (running.type[ix] != request.type) continue;
        const RunningJob& j = s.running()[ix];
        ends->push_back({expected_end(j, EndBy::kEstimateOrLimit, grace, now),
                         static_cast<std::int32_t>(j.gpus.size())});
      }
      std::sort(ends->begin(), ends->end());
    }
    std::int64_t room = plan.free_in(request.type, kAnyRegion);
    const std::int64_t need = (behind_queue ? ahead_[request.type] : 0) + request.gpus;
    for (const auto& [end, gpus] : *ends) {
      if (room >= need) break;
      room += gpus;
      by_count = std::max(by_count, end);
    }
    if (room < need) return std::numeric_limits<double>::infinity();
    if (cost(by_count) > enough) return cost(by_count);
  }
  const auto planned =
      plan_start(plan, running, request, forbidden, grace, now, EndBy::kEstimateOrLimit);
  if (!planned) return std::numeric_limits<double>::infinity();
  return cost(std::max(by_count, planned->at));
}

}  // namespace corral::sched::detail
