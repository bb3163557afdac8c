#include "sched/internal/admit.h"

#include "core/units.h"
#include "sched/internal/text.h"

namespace corral::sched::detail {

Admission admit(const Plan& plan, TenantIx tenant, TypeIx type, std::int64_t milli,
                bool guaranteed_only) {
  const ClusterSnapshot& s = plan.snapshot();
  const core::Tenant& t = s.tenants()[tenant];
  const std::string& type_name = s.gpu_types()[type].id.value;
  const core::Quota& q = t.quota_for(s.gpu_types()[type].id);
  const std::int64_t used = plan.tenant_used_milli(tenant, type);
  const std::int64_t guaranteed = q.guaranteed_milli;
  if (used + milli <= guaranteed) return {.ok = true, .borrowed = false};
  if (!guaranteed_only && used + milli <= q.max_total_milli()) {
    return {.ok = true, .borrowed = true};
  }
  // Refused: the reason (only now: admission is asked thousands of times a cycle).
  const std::string holds =
      cat("quota: tenant ", t.id.value, " holds ", core::format_gpu_milli(used));
  const std::string needs = core::format_gpu_milli(milli);
  const std::string promised = core::format_gpu_milli(guaranteed);
  const std::string limit = core::format_gpu_milli(q.borrow_limit_milli);
  if (guaranteed_only) {
    return {.reason =
                cat(holds, "/", promised, " guaranteed ", type_name,
                    "; a session starts only inside its tenant's guarantee and needs ", needs)};
  }
  Admission out;
  if (q.borrow_limit_milli == 0) {
    out.reason = cat(holds, "/", promised, " guaranteed ", type_name,
                     ", may not borrow, and needs ", needs, " more");
  } else if (used >= guaranteed) {
    out.reason = cat(holds, " ", type_name, " (", promised, " guaranteed + ",
                     core::format_gpu_milli(used - guaranteed), "/", limit,
                     " borrowed) and is at its borrow limit for ", needs, " more");
  } else {
    out.reason = cat(holds, "/", promised, " guaranteed ", type_name, "; ", needs,
                     " more would pass its borrow limit of ", limit);
  }
  return out;
}

}  // namespace corral::sched::detail
