// Per-tenant admission control for submissions: a token bucket bounds the submit rate
// (refilled at `rate_per_second`, holding at most `burst`), and the API separately caps
// pending jobs per tenant from the store. Both answer 429 with Retry-After.
//
// The bucket is a row in the store (store::SubmitBucketRow), taken from in the
// submission's own transaction under the row's lock: replicas on one database share it,
// so a tenant gets its rate once across all of them, not once per replica. Each replica
// also remembers the last state it took from, so a flood of refused calls is answered
// before a transaction (over_limit()); other replicas only ever take tokens, so what it
// remembers, refilled, is never fewer tokens than the row holds: it refuses nothing the
// row would admit (unless an admin raised the rate since, for at most one wait).
//
// Thread safety: safe for concurrent use (one mutex).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "core/clock.h"
#include "core/result.h"
#include "server/base/model_json.h"
#include "server/base/thread_annotations.h"
#include "store/store.h"

namespace corral::server {

class AdmissionControl {
 public:
  explicit AdmissionControl(const core::Clock& clock) : clock_(clock) {}

  // Takes one token from `tenant`'s bucket, in `tx` (the submission's transaction; the
  // bucket's row stays locked until it ends). Returns 0 when admitted, else the whole
  // seconds (at least 1) until a token will be available. A new tenant's bucket is full.
  core::Result<int> try_admit(store::TenantRepo& tenants, const std::string& tenant,
                              const RateLimit& limit) CORRAL_EXCLUDES(mu_);
  // A look that takes nothing: the whole seconds until `tenant`'s bucket, as this
  // replica's last try_admit() left it, holds a token (0: it holds one now, or it is
  // unknown), and that call's limit. The API answers a flood's 429s with it before
  // opening a transaction, so they never queue with other tenants' commits.
  int over_limit(const std::string& tenant, RateLimit* limit) CORRAL_EXCLUDES(mu_);

 private:
  struct Bucket {
    double tokens = 0;
    std::int64_t as_of_ms = 0;
    RateLimit limit;
  };
  // Refills `b` up to `now`; returns the wait for one token (0: one is there).
  static int refill(Bucket& b, std::int64_t now);
  const core::Clock& clock_;
  std::mutex mu_;
  std::map<std::string, Bucket> seen_ CORRAL_GUARDED_BY(mu_);  // as last taken from
};

}  // namespace corral::server
