#include "sched/internal/class_caps.h"

#include <algorithm>
#include <vector>

#include "core/priority.h"
#include "sched/internal/text.h"

namespace corral::sched::detail {

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

ClassCaps::Fit ClassCaps::fit(TenantIx tenant, const PendingJob& job) const {
  const JobRequest& r = job.request;
  Fit out{.least = r.gpus};
  const std::int64_t left = room(tenant, r.tier);
  if (left >= core::kUnlimited) return out;
  if (!r.elastic) {
    out.fits = r.gpus <= left;
    return out;
  }
  const std::vector<std::int32_t> sizes = allowed_sizes(r);  // largest first
  out.least = sizes.back();
  const auto at =
      std::find_if(sizes.begin(), sizes.end(), [&](std::int32_t size) { return size <= left; });
  out.fits = at != sizes.end();
  if (out.fits && *at < sizes.front()) {
    out.capped = job;
    out.capped->request.gpus = *at;
    out.capped->request.elastic->max_gpus = *at;
  }
  return out;
}

void ClassCaps::add(TenantIx tenant, std::int32_t tier, std::int64_t gpus) {
  if (s_.tenants()[tenant].max_gpus_by_tier.empty()) return;
  held_[{tenant, tier}] += gpus;
}

std::string ClassCaps::reason(TenantIx tenant, std::int32_t tier, std::int64_t gpus) const {
  const core::Tenant& t = s_.tenants()[tenant];
  const std::string name = core::priority_class_name(tier);
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
