#include "server/admission.h"

#include <algorithm>
#include <cmath>

namespace corral::server {

int AdmissionControl::try_admit(const std::string& tenant, const RateLimit& limit) {
  const std::int64_t now = core::to_ms(clock_.now());
  std::lock_guard lock(mu_);
  auto [it, fresh] = buckets_.try_emplace(tenant, Bucket{limit.burst, now});
  Bucket& b = it->second;
  // Refill for the time passed since the last look: tokens += rate * dt, capped at burst.
  const double elapsed_s = static_cast<double>(std::max<std::int64_t>(0, now - b.as_of_ms)) / 1000;
  b.tokens = std::min(limit.burst, b.tokens + elapsed_s * limit.rate_per_second);
  b.as_of_ms = now;
  if (b.tokens >= 1) {
    b.tokens -= 1;
    return 0;
  }
  if (limit.rate_per_second <= 0) return 3600;
  return std::max(1, static_cast<int>(std::ceil((1 - b.tokens) / limit.rate_per_second)));
}

}  // namespace corral::server
