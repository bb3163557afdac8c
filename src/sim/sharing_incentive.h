// Sharing incentive per tenant: would a tenant be better off with a partition of its own?
// Themis (NSDI'20) calls the ratio finish-time fairness, rho = T_shared / T_alone; here it
// is the inverse, so that higher is better: a tenant's mean JCT when its jobs run alone,
// under the same policy, on its guaranteed share of the fleet, over its mean JCT in the
// shared run. >= 1: sharing costs it nothing.
//
// "Alone on its share" is the same fleet with the tenant's quota capped at its guarantee
// per GPU type and no borrowing (so topology is as in the shared run, only capacity is
// its own). A tenant with no guarantee gets its entitlement (weight share among the
// tenants with jobs) of each type, rounded; every cap is at least its largest job, so
// each of its jobs can run. Costs one more simulation per tenant.
#pragma once

#include "core/result.h"
#include "sim/engine.h"
#include "sim/fleet.h"
#include "sim/metrics.h"
#include "sim/policies.h"
#include "sim/traces/workload.h"

namespace corral::sim {

// Fills TenantMetrics::sharing_incentive in `m` (the metrics of `shared`, a run of
// `workload` under `policy` and `options`) for every tenant with a finished job.
core::Status add_sharing_incentive(const Fleet& fleet, const Workload& workload,
                                   const Policy& policy, const EngineOptions& options,
                                   const RunResult& shared, Metrics& m);

}  // namespace corral::sim
