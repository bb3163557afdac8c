// Each tenant's fair share of the fleet and its decayed usage, as the queue order sees
// them (order.cc): for people to read (the dashboard's queue view, GET /v1/shares), so
// that what they see is what the scheduler weighs.
//
// Thread safety: a pure function.
#pragma once

#include <vector>

#include "core/ids.h"
#include "sched/config.h"
#include "sched/snapshot.h"

namespace corral::sched {

struct TenantShare {
  core::TenantId tenant;
  bool active = false;    // has pending or running jobs, or a descendant with some
  double share = 0;       // of the whole fleet, 0..1 (0 when inactive): weights split it
  double usage_gpus = 0;  // decayed usage, as an average of weighted GPUs over the half-life
};

// One per tenant of the snapshot, in its tenant order.
std::vector<TenantShare> tenant_shares(const ClusterSnapshot& s, const SchedulerConfig& config);

}  // namespace corral::sched
