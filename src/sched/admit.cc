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
  const std::int64_t guaranteed = std::int64_t{1000} * q.guaranteed;
  if (used + milli <= guaranteed) return {.ok = true, .borrowed = false};
  if (!guaranteed_only && used + milli <= std::int64_t{1000} * q.max_total()) {
    return {.ok = true, .borrowed = true};
  }
  // Refused: the reason (only now: admission is asked thousands of times a cycle).
  const std::string holds = cat("quota: tenant ", t.id.value, " holds ", core::format_gpu_milli(used));
  const std::string needs = core::format_gpu_milli(milli);
  if (guaranteed_only) {
    return {.reason =
                cat(holds, "/", q.guaranteed, " guaranteed ", type_name,
                    "; a session starts only inside its tenant's guarantee and needs ", needs)};
  }
  Admission out;
  if (q.borrow_limit == 0) {
    out.reason = cat(holds, "/", q.guaranteed, " guaranteed ", type_name,
                     ", may not borrow, and needs ", needs, " more");
  } else if (used >= guaranteed) {
    out.reason = cat(holds, " ", type_name, " (", q.guaranteed, " guaranteed + ",
                     core::format_gpu_milli(used - guaranteed), "/", q.borrow_limit,
                     " borrowed) and is at its borrow limit for ", needs, " more");
  } else {
    out.reason = cat(holds, "/", q.guaranteed, " guaranteed ", type_name, "; ", needs,
                     " more would pass its borrow limit of ", q.borrow_limit);
  }
  return out;
}

}  // namespace corral::sched::detail
