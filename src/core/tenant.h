// Tenants, their place in the sharing hierarchy, and their quotas.
//
// A tenant may have a parent (an organisation); siblings share their parent's weight in
// fair share. Quotas are per GPU type, in thousandths of a GPU (a guarantee of 3.5 GPUs is
// 3500), as shares of a GPU are counted:
//   guaranteed    what of the type the tenant is entitled to at any time; borrowers on it
//                 are reclaimed (preempted) when the tenant wants it back.
//   borrow_limit  how much beyond `guaranteed` the tenant may use when others leave
//                 capacity idle; such allocations are marked borrowed.
// A type with no quota entry uses `default_quota`.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>

#include "core/ids.h"

namespace corral::core {

inline constexpr std::int64_t kUnlimited = std::numeric_limits<std::int32_t>::max();
// A borrow limit of kUnlimited GPUs, in thousandths.
inline constexpr std::int64_t kUnlimitedMilli = kUnlimited * 1000;

struct Quota {
  std::int64_t guaranteed_milli = 0;
  std::int64_t borrow_limit_milli = kUnlimitedMilli;

  std::int64_t max_total_milli() const { return guaranteed_milli + borrow_limit_milli; }
  // A quota of whole GPUs.
  static constexpr Quota gpus(std::int64_t guaranteed, std::int64_t borrow_limit = kUnlimited) {
    return {.guaranteed_milli = guaranteed * 1000, .borrow_limit_milli = borrow_limit * 1000};
  }
  friend bool operator==(const Quota&, const Quota&) = default;
};

struct Tenant {
  TenantId id;
  std::optional<TenantId> parent;
  double weight = 1.0;  // > 0
  std::map<GpuTypeId, Quota> quotas;
  Quota default_quota;  // for GPU types not in `quotas`
  // The priority classes the tenant may use, by tier, each with the most GPUs its jobs of
  // that class may hold at once (kUnlimited: no cap), as Slurm's QOS limits: a tier not
  // listed may hold none. Empty: every class, without a cap.
  std::map<std::int32_t, std::int64_t> max_gpus_by_tier;

  std::int64_t max_gpus_at(std::int32_t tier) const {
    if (max_gpus_by_tier.empty()) return kUnlimited;
    const auto it = max_gpus_by_tier.find(tier);
    return it == max_gpus_by_tier.end() ? 0 : it->second;
  }

  const Quota& quota_for(const GpuTypeId& type) const {
    const auto it = quotas.find(type);
    return it == quotas.end() ? default_quota : it->second;
  }
  friend bool operator==(const Tenant&, const Tenant&) = default;
};

}  // namespace corral::core
