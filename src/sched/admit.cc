#include "sched/internal/admit.h"

#include "sched/internal/text.h"

namespace corral::sched::detail {

Admission admit(const Plan& plan, TenantIx tenant, TypeIx type, std::int32_t gpus,
                bool guaranteed_only) {
  const ClusterSnapshot& s = plan.snapshot();
  const core::Tenant& t = s.tenants()[tenant];
  const std::string& type_name = s.gpu_types()[type].id.value;
  const core::Quota& q = t.quota_for(s.gpu_types()[type].id);
  const std::int64_t used = plan.tenant_used(tenant, type);
  if (used + gpus <= q.guaranteed) return {.ok = true, .borrowed = false};
  if (guaranteed_only) {
    return {.reason = cat("quota: tenant ", t.id.value, " holds ", used, "/", q.guaranteed,
                          " guaranteed ", type_name, "; a session starts only inside its tenant's ",
                          "guarantee and needs ", gpus)};
  }
  if (used + gpus <= q.max_total()) return {.ok = true, .borrowed = true};

  Admission out;
  if (q.borrow_limit == 0) {
    out.reason = cat("quota: tenant ", t.id.value, " holds ", used, "/", q.guaranteed,
                     " guaranteed ", type_name, ", may not borrow, and needs ", gpus, " more");
  } else if (used >= q.guaranteed) {
    out.reason = cat("quota: tenant ", t.id.value, " holds ", used, " ", type_name, " (",
                     q.guaranteed, " guaranteed + ", used - q.guaranteed, "/", q.borrow_limit,
                     " borrowed) and is at its borrow limit for ", gpus, " more");
  } else {
    out.reason =
        cat("quota: tenant ", t.id.value, " holds ", used, "/", q.guaranteed, " guaranteed ",
            type_name, "; ", gpus, " more would pass its borrow limit of ", q.borrow_limit);
  }
  return out;
}

}  // namespace corral::sched::detail
