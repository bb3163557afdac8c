#include "server/admission.h"

#include <algorithm>
#include <cmath>

namespace corral::server {

int AdmissionControl::refill(Bucket& b, std::int64_t now) {
  // tokens += rate * dt, capped at burst.
  const double elapsed_s = static_cast<double>(std::max<std::int64_t>(0, now - b.as_of_ms)) / 1000;
  b.tokens = std::min(b.limit.burst, b.tokens + elapsed_s * b.limit.rate_per_second);
  b.as_of_ms = now;
  if (b.tokens >= 1) return 0;
  // At most an hour: a tiny rate (1e-300/s) would otherwise overflow the int.
  constexpr double kMaxWaitS = 3600;
  if (b.limit.rate_per_second <= 0) return static_cast<int>(kMaxWaitS);
  const double wait_s = std::ceil((1 - b.tokens) / b.limit.rate_per_second);
  return static_cast<int>(std::clamp(wait_s, 1.0, kMaxWaitS));
}

int AdmissionControl::try_admit(const std::string& tenant, const RateLimit& limit) {
  const std::int64_t now = core::to_ms(clock_.now());
  std::lock_guard lock(mu_);
  auto [it, fresh] = buckets_.try_emplace(tenant, Bucket{limit.burst, now, limit});
  Bucket& b = it->second;
  b.limit = limit;  // an admin may have changed it since
  const int wait_s = refill(b, now);
  if (wait_s == 0) b.tokens -= 1;
  return wait_s;
}

int AdmissionControl::over_limit(const std::string& tenant, RateLimit* limit) {
  const std::int64_t now = core::to_ms(clock_.now());
  std::lock_guard lock(mu_);
  const auto it = buckets_.find(tenant);
  if (it == buckets_.end()) return 0;
  if (limit != nullptr) *limit = it->second.limit;
  return refill(it->second, now);
}

}  // namespace corral::server
