#include "sched/internal/class_caps.h"

#include "core/priority.h"
#include "sched/internal/text.h"

namespace corral::sched::detail {
namespace {

std::string class_name(std::int32_t tier) {
  for (const core::PriorityClass& pc : core::default_priority_classes()) {
    if (pc.tier == tier) return pc.name;
  }
  return cat("tier ", tier);
}

}  // namespace

ClassCaps::ClassCaps(const ClusterSnapshot& s, const RunningIndex& running) : s_(s) {
  for (std::size_t j = 0; j < s.running().size(); ++j) {
    const TenantIx tenant = running.tenant[j];
    if (s.tenants()[tenant].max_gpus_by_tier.empty()) continue;
    held_[{tenant, s.running()[j].request.tier}] +=
        static_cast<std::int64_t>(s.running()[j].gpus.size());
  }
}

std::int64_t ClassCaps::room(TenantIx tenant, std::int32_t tier) const {
  const std::int64_t cap = s_.tenants()[tenant].max_gpus_at(tier);
  if (cap >= core::kUnlimited) return core::kUnlimited;
  const auto it = held_.find({tenant, tier});
  return cap - (it == held_.end() ? 0 : it->second);
}

void ClassCaps::add(TenantIx tenant, std::int32_t tier, std::int64_t gpus) {
  if (s_.tenants()[tenant].max_gpus_by_tier.empty()) return;
  held_[{tenant, tier}] += gpus;
}

std::string ClassCaps::reason(TenantIx tenant, std::int32_t tier, std::int64_t gpus) const {
  const core::Tenant& t = s_.tenants()[tenant];
  const std::string name = class_name(tier);
  const std::int64_t cap = t.max_gpus_at(tier);
  if (cap == 0) {
    return cat("quota: tenant ", t.id.value, " may not use priority class ", name,
               " (its priorityClasses)");
  }
  return cat("quota: tenant ", t.id.value, "'s ", name, " jobs hold ", cap - room(tenant, tier),
             " of the ", cap, " GPUs its priorityClasses.", name,
             ".maxGpus allows; this one needs ", gpus);
}

}  // namespace corral::sched::detail
