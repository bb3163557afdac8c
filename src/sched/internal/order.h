// Queue order: priority tiers first; within a tier, weighted fair share over the tenant
// tree; inside a tenant, least attained service (in levels), then age. The formula and a worked
// example are in docs/scheduling.md.
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

// Decayed usage (GPU-seconds) as an average of weighted GPUs over the half-life.
double usage_as_gpus(double usage, core::Duration half_life);

// A tenant's standing: (weighted GPUs held now + decayed usage as an average of weighted
// GPUs over the half-life) / effective share. Lower goes first.
double standing(std::int64_t held_milli, double usage, double share, core::Duration half_life);

// Yields pending jobs (indices into snapshot.pending()) in queue order, those whose
// dependencies are met (dependencies.h) only. Fair share is
// re-evaluated after every job, because placing a job raises its tenant's standing.
// Within a tier, a job that waited config.starvation_age or longer goes first (oldest
// first) while its tenant holds less than its fair share of the fleet: a job can wait
// longer only while its tenant gets at least its share. Under kFifo and
// kAttainedService the order is fixed up front.
class JobQueue {
 public:
  JobQueue(const ClusterSnapshot& s, const SchedulerConfig& config, core::Time now);

  // The next job to consider and its tenant's standing at that moment (0 under FIFO).
  // `plan` is read for what each tenant holds now.
  std::optional<std::pair<std::size_t, double>> next(const Plan& plan);
  // Recomputes a waiting tenant's standing after the plan changed what it holds other
  // than by placing its job (its job was preempted or shrunk).
  void refresh(const Plan& plan, TenantIx tenant);
  // Whether job `ix` (yielded by next() and blocked for room) is the starved job whose
  // turn it is to be promised its start, the one promise without EASY backfill: starved
  // jobs take turns by tier (highest first), then age (oldest first); a job yielded
  // earlier in the cycle has had its turn, and under fair share a job whose tenant holds
  // its fair share by `plan` is passed over for the rest of the cycle.
  bool may_promise(const Plan& plan, std::size_t ix);

 private:
  double standing_of(const Plan& plan, TenantIx tenant) const;
  bool under_share(const Plan& plan, TenantIx tenant) const;
  void enter_tier(const Plan& plan);
  void skip_served(TenantIx tenant);
  // The ready tenant that goes next, by its standing and SchedulerConfig::fairness.
  std::set<std::pair<double, TenantIx>>::const_iterator pick_ready() const;
  void insert_ready(const Plan& plan,
                    TenantIx tenant);  // moves the tenant's cursor past served jobs

  const ClusterSnapshot& s_;
  const SchedulerConfig& config_;
  std::vector<double> shares_;
  // Per tier (highest first), per tenant: pending job indices, oldest first.
  std::vector<std::vector<std::vector<std::size_t>>> by_tier_;
  std::vector<std::size_t> fifo_;                  // fixed orders, consumed from the back
  std::vector<std::vector<std::size_t>> starved_;  // per tier, consumed from the back
  std::vector<std::size_t> starved_by_age_;        // every starved job: tier (highest first), age
  std::size_t promise_next_ = 0;                   // into starved_by_age_: whose turn it is
  std::vector<core::Time> since_;                  // per pending job: queued_since()
  std::vector<bool> yielded_;                      // per pending job
  std::vector<bool> served_;                       // per pending job
  std::vector<std::int32_t> rank_;  // per pending job inside its tenant: -1 starved, else level
  double capacity_milli_ = 0;       // usable GPUs of the fleet weighted by usage factor, x1000
  std::size_t tier_ = 0;
  std::vector<std::size_t> cursor_;              // per tenant, in the current tier
  std::set<std::pair<double, TenantIx>> ready_;  // tenants with jobs left, by standing
  std::vector<double> ready_key_;                // per tenant, its key in ready_
  TenantIx last_ = -1;
  bool tier_entered_ = false;
};

}  // namespace corral::sched::detail
