// EASY backfill: the planned start of the first blocked job in line.
#pragma once

#include <optional>
#include <vector>

#include "sched/internal/place.h"
#include "sched/internal/running.h"

namespace corral::sched::detail {

struct PlannedPlacement {
  core::Time at;
  std::vector<Plan::Take> takes;
};

// When `request` can start: running jobs are assumed to end at start + max runtime
// (jobs already stopping: after their grace), and are released in that order until the
// request fits. GPUs in `forbidden` stay out of reach. Nothing when it never fits.
// Leaves the plan as it found it.
std::optional<PlannedPlacement> plan_start(Plan& plan, const RunningIndex& running,
                                           const PlaceRequest& request,
                                           const std::vector<std::uint64_t>& forbidden,
                                           core::Duration grace, core::Time now);

}  // namespace corral::sched::detail
