#include "server/http/admission.h"

#include <algorithm>
#include <cmath>

namespace corral::server {

int AdmissionControl::refill(Bucket& b, std::int64_t now) {
  // tokens += rate * dt, capped at burst.
  const double elapsed_s = static_cast<double>(std::max<std::int64_t>(0, now - b.as_of_ms)) / 1000;
  b.tokens = std::min(b.limit.burst, b.tokens + elapsed_s * b.limit.rate_per_second);
  b.as_of_ms = std::max(now, b.as_of_ms);  // another replica's clock may run ahead
  if (b.tokens >= 1) return 0;
  // At most an hour: a tiny rate (1e-300/s) would otherwise overflow the int.
  constexpr double kMaxWaitS = 3600;
  if (b.limit.rate_per_second <= 0) return static_cast<int>(kMaxWaitS);
  const double wait_s = std::ceil((1 - b.tokens) / b.limit.rate_per_second);
  return static_cast<int>(std::clamp(wait_s, 1.0, kMaxWaitS));
}

core::Result<int> AdmissionControl::try_admit(store::TenantRepo& tenants, const std::string& tenant,
                                              const RateLimit& limit) {
  const core::Time now = clock_.now();
  CORRAL_ASSIGN_OR_RETURN(
      const store::SubmitBucketRow row,
      tenants.lock_submit_bucket(
          {.tenant = core::TenantId(tenant), .tokens = limit.burst, .as_of = now}));
  // The limit is today's (an admin may have changed it since the row was written).
  Bucket b{.tokens = row.tokens, .as_of_ms = core::to_ms(row.as_of), .limit = limit};
  const int wait_s = refill(b, core::to_ms(now));
  if (wait_s == 0) {
    b.tokens -= 1;
    CORRAL_RETURN_IF_ERROR(tenants.put_submit_bucket(
        {.tenant = row.tenant, .tokens = b.tokens, .as_of = core::time_from_ms(b.as_of_ms)}));
  }  // a refusal rolls the submission back anyway
  // Remembered even if the submission then rolls back (refused for its pending jobs, or
  // a failed write): over_limit() may then refuse while the row still holds that one
  // token, until the refill; the row itself stays exact.
  std::lock_guard lock(mu_);
  seen_[tenant] = b;
  return wait_s;
}

int AdmissionControl::over_limit(const std::string& tenant, RateLimit* limit) {
  const std::int64_t now = core::to_ms(clock_.now());
  std::lock_guard lock(mu_);
  const auto it = seen_.find(tenant);
  if (it == seen_.end()) return 0;
  if (limit != nullptr) *limit = it->second.limit;
  return refill(it->second, now);
}

}  // namespace corral::server
