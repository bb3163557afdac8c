// Priority-class caps per tenant (core::Tenant::max_gpus_by_tier, the tenant config's
// priorityClasses): which classes a tenant may use and how many GPUs its jobs of each
// may hold at once, as Slurm's QOS GrpTRES and Kueue's per-class quotas. A job that would
// pass its class's cap waits as quota-blocked; running jobs are never stopped for it.
//
// Thread safety: one per decide() call.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "sched/internal/running.h"

namespace corral::sched::detail {

class ClassCaps {
 public:
  // What the running jobs of capped tenants hold, by tier.
  ClassCaps(const ClusterSnapshot& s, const RunningIndex& running);

  // The GPUs `tenant`'s jobs of `tier` may still take (core::kUnlimited: no cap).
  std::int64_t room(TenantIx tenant, std::int32_t tier) const;
  // How a pending job fits its tenant's cap for its class.
  struct Fit {
    bool fits = true;                  // some size it accepts fits under the cap
    std::optional<PendingJob> capped;  // an elastic job that must start smaller: its request
    std::int32_t least = 0;            // the smallest size it accepts (for the reason)
  };
  Fit fit(TenantIx tenant, const PendingJob& job) const;
  // Counts GPUs placed (or grown into) this cycle.
  void add(TenantIx tenant, std::int32_t tier, std::int64_t gpus);
  // Why a job of `tier` that needs at least `gpus` waits: the class is not the tenant's,
  // or its cap is taken.
  std::string reason(TenantIx tenant, std::int32_t tier, std::int64_t gpus) const;

 private:
  const ClusterSnapshot& s_;
  std::map<std::pair<TenantIx, std::int32_t>, std::int64_t> held_;  // capped tenants only
};

}  // namespace corral::sched::detail
