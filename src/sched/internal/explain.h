// Pending reasons: one short sentence a user can act on, for a job that was not placed.
#pragma once

#include <string>

#include "sched/decisions.h"
#include "sched/internal/place.h"

namespace corral::sched::detail {

struct Explanation {
  PendingKind kind = PendingKind::kCapacity;
  std::string reason;
};

// Why `request` did not fit on `type` (quota already granted), given the search's misses.
Explanation explain_no_fit(const Plan& plan, const PlaceRequest& request, const PlaceMiss& miss);

}  // namespace corral::sched::detail
