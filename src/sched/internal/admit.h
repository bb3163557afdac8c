// Quota admission: may this tenant take `milli` more thousandths of GPUs of this type
// (1000 per whole GPU; a share's own for a share, which counts exactly)?
#pragma once

#include <cstdint>
#include <string>

#include "sched/internal/plan.h"

namespace corral::sched::detail {

struct Admission {
  bool ok = false;
  bool borrowed = false;  // some of the GPUs are beyond the tenant's guarantee
  std::string reason;     // when not ok
};

// Up to the guarantee the GPUs are the tenant's own; beyond it, up to the borrow limit,
// they are capacity lent by others (marked borrowed, reclaimable); beyond that, no.
// `guaranteed_only` (an interactive session): beyond the guarantee, no: a session never
// borrows, so no other tenant can ever reclaim it (docs/sessions.md).
Admission admit(const Plan& plan, TenantIx tenant, TypeIx type, std::int64_t milli,
                bool guaranteed_only);

}  // namespace corral::sched::detail
