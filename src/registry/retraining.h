// A tenant's retraining budget (docs/drift.md#the-retraining-budget): the jobs a model's
// drift submits from its retraining template may hold at most `max_gpus` GPUs at once and
// use at most `gpu_hours` in each period. A pending retraining job the budget would pass
// is held out of the cycle with a reason that says which limit and what is in use; a
// running one is never stopped by it.
//
// Thread safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/time.h"

namespace corral::registry {

// Unset limits: no cap. Periods start at the Unix epoch: "24h" is each UTC day.
struct RetrainingBudget {
  std::optional<std::int64_t> max_gpus;
  std::optional<double> gpu_hours;
  core::Duration period = core::Duration(24 * 3600 * 1000);

  bool capped() const { return max_gpus.has_value() || gpu_hours.has_value(); }
  friend bool operator==(const RetrainingBudget&, const RetrainingBudget&) = default;
};

// The period of `budget` that holds `now`.
core::Time period_start(const RetrainingBudget& budget, core::Time now);

// One GPU a retraining job held: from `from` until `to` (still held: nullopt).
struct HeldGpu {
  core::Time from;
  std::optional<core::Time> to;
};

// What a tenant's retraining jobs use of its budget at `now`.
struct RetrainingUse {
  std::int64_t gpus = 0;    // GPUs its retraining jobs hold now
  double gpu_hours = 0;     // GPU-hours they used since the period began
  core::Time period_start;  // the period holding `now`
  core::Time period_end;
};

// The use of `held` (each GPU its retraining jobs held since the period began) at `now`.
RetrainingUse retraining_use(const RetrainingBudget& budget, const std::vector<HeldGpu>& held,
                             core::Time now);

// Why `budget` can never run a job of `gpus` GPUs ("" when it can).
std::string exceeds_budget(const core::TenantId& tenant, const RetrainingBudget& budget,
                           std::int64_t gpus);

struct PendingRetraining {
  core::JobId job;
  std::int64_t gpus = 0;
};

// Which of `tenant`'s pending retraining jobs (in submission order) its budget holds, with
// their reasons: one is released while the GPUs of those released before it and its own
// stay within max_gpus and the period's GPU-hours are not used up.
std::map<std::int64_t, std::string> retraining_holds(const core::TenantId& tenant,
                                                     const RetrainingBudget& budget,
                                                     RetrainingUse use,
                                                     const std::vector<PendingRetraining>& pending);

}  // namespace corral::registry
