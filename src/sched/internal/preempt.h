// Preemption: free GPUs for a blocked job that is entitled to them, at the least cost.
// The policy (who may preempt whom, the cost, the protections) is in docs/scheduling.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sched/config.h"
#include "sched/internal/place.h"
#include "sched/internal/running.h"

namespace corral::sched::detail {

// Why a job may give GPUs to the preemptor (what its reason will say).
enum class VictimKind {
  kShrink,
  kReclaim,
  kReservation,         // preemptible, outside the reservation, on its GPUs
  kReservationOverrun,  // in no reservation, not preemptible, still on its GPUs in the window
  kTier,
  kAttainedService,
  kStarved,  // a job of the preemptor's tier or below that started after it was queued
};

// One job giving up GPUs: preempted whole, or (elastic) shrunk to `kept`.
struct Victim {
  std::int32_t running_ix = -1;
  bool shrink = false;
  std::vector<Plan::Take> released;
  std::vector<Plan::Take> kept;  // shrink only
  int rank = 0;                  // 0 shrink, 1 borrowed or reserved, 2 other
  double lost_gpu_seconds = 0;   // work lost: GPU-seconds since checkpoint + restore
  VictimKind kind = VictimKind::kTier;
  std::string reason;  // written only for the victims find_preemption() returns
};

struct PreemptionPlan {
  std::vector<Victim> victims;
  PlaceResult placement;
};

struct Preemptor {
  const PendingJob* job = nullptr;
  TenantIx tenant = -1;
  bool within_guarantee = false;  // its admission on this type is inside its guarantee
  std::int32_t level = 0;         // attained-service level
  // Reserved GPUs this job may claim back from jobs outside it (its open reservation).
  const std::vector<std::uint64_t>* reservation_masks = nullptr;  // by node, or null
  // GPUs this job may not use (Gate::forbidden()); victims holding any are skipped.
  const std::vector<std::uint64_t>* forbidden = nullptr;  // by node, or null
  // Its starvation promise is due (JobQueue::may_promise): it may take GPUs from jobs of
  // its tier or below that started after it was queued, which went ahead of it.
  bool due = false;
};

// Whether stopping `v` must pay for itself (decide.cc, try_preempt): reclaiming a
// guarantee, pausing a tenant's more-served job under fair share, and a due promise are
// made only when the work they throw away is less than the wait they save. Priority tiers
// and reservations take what they are owed whatever it costs.
bool must_pay(const Victim& v, const SchedulerConfig& config);

// The cheapest set of victims whose GPUs, with the free ones, let `request` be placed;
// nothing if no such set exists. Leaves the plan as it found it.
std::optional<PreemptionPlan> find_preemption(Plan& plan, const RunningIndex& running,
                                              const PlaceRequest& request,
                                              const Preemptor& preemptor,
                                              const SchedulerConfig& config, core::Time now);

// The attained-service level of `gpu_seconds` under config.las_thresholds_gpu_seconds.
std::int32_t las_level(const SchedulerConfig& config, double gpu_seconds);

// Whether, under fair-share order, `p` may preempt `victim` of its own tenant (the caller
// checks the tenant): of p's tier or below, at a higher attained-service level, and
// losing at most PreemptionConfig::attained_service_max_loss of work per GPU.
bool less_served_within_tenant(const SchedulerConfig& config, const Preemptor& p,
                               const RunningJob& victim, core::Time now);

// The work a running job loses if stopped now: GPU-seconds since its last checkpoint
// (or start) plus its restore time, per GPU it holds.
double lost_gpu_seconds(const RunningJob& job, core::Time now);

}  // namespace corral::sched::detail
