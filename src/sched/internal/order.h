// Queue order: priority tiers first; within a tier, weighted fair share over the tenant
// tree; then age. The formula and a worked example are in docs/scheduling.md.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "sched/config.h"
#include "sched/internal/plan.h"

namespace corral::sched::detail {

// Tenants with pending or running jobs, and every ancestor of one.
std::vector<bool> active_tenants(const ClusterSnapshot& s);

// Each active tenant's share of the fleet: siblings split their parent's share (the
// whole fleet for top-level tenants) in proportion to their weights. 0 when inactive.
std::vector<double> effective_shares(const ClusterSnapshot& s, const std::vector<bool>& active);

// A tenant's standing: (weighted GPUs held now + decayed usage as an average of weighted
// GPUs over the half-life) / effective share. Lower goes first.
double standing(std::int64_t held_milli, double usage, double share, core::Duration half_life);

// Yields pending jobs (indices into snapshot.pending()) in queue order. Fair share is
// re-evaluated after every job, because placing a job raises its tenant's standing.
class JobQueue {
 public:
  JobQueue(const ClusterSnapshot& s, const SchedulerConfig& config);

  // The next job to consider and its tenant's standing at that moment (0 under FIFO).
  // `plan` is read for what each tenant holds now.
  std::optional<std::pair<std::size_t, double>> next(const Plan& plan);

 private:
  double standing_of(const Plan& plan, TenantIx tenant) const;
  void enter_tier(const Plan& plan);

  const ClusterSnapshot& s_;
  const SchedulerConfig& config_;
  std::vector<double> shares_;
  // Per tier (highest first), per tenant: pending job indices, oldest first.
  std::vector<std::vector<std::vector<std::size_t>>> by_tier_;
  std::vector<std::size_t> fifo_;  // under QueueOrder::kFifo
  std::size_t tier_ = 0;
  std::vector<std::size_t> cursor_;              // per tenant, in the current tier
  std::set<std::pair<double, TenantIx>> ready_;  // tenants with jobs left, by standing
  TenantIx last_ = -1;
  bool tier_entered_ = false;
};

}  // namespace corral::sched::detail
