// A tenant's retraining budget (docs/drift.md#the-retraining-budget): the jobs a model's
// drift submits from its retraining template may hold at most `maxGpus` GPUs at once and
// use at most `gpuHours` in each period. The budget is applied where the cycle's
// snapshot is read, as the dataset gate is (StoreView::held): a pending retraining job
// that would pass it is held out of the cycle with a reason that says which limit and
// what is in use, so decide() never sees it; a running one is never stopped by it.
//
// Thread safety: stateless functions over the caller's transaction.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/time.h"
#include "server/model_json.h"
#include "store/store.h"

namespace corral::server {

// What a tenant's retraining jobs use of its budget at `now`.
struct RetrainingUse {
  std::int64_t gpus = 0;    // GPUs its retraining jobs hold now
  double gpu_hours = 0;     // GPU-hours they used since the period began
  core::Time period_start;  // the period holding `now`
  core::Time period_end;
};

// The period of `budget` that holds `now`: periods start at the Unix epoch.
core::Time period_start(const RetrainingBudget& budget, core::Time now);

// The use of `tenant`'s retraining jobs in the period holding `now`.
core::Result<RetrainingUse> retraining_use(store::Tx& tx, const core::TenantId& tenant,
                                           const RetrainingBudget& budget, core::Time now);

// The pending retraining jobs the budgets of `tenants` (the transaction's list_tenants())
// hold now, with their reasons. Each capped tenant's open retraining jobs are taken in
// submission order: one is released while the GPUs of those held or released before it
// and its own stay within maxGpus and the period's GPU-hours are not used up.
core::Result<std::map<std::int64_t, std::string>> retraining_holds(
    store::Tx& tx, const std::vector<store::TenantRow>& tenants, core::Time now);

// Why `budget` can never run a job of `gpus` GPUs ("" when it can).
std::string exceeds_budget(const core::TenantId& tenant, const RetrainingBudget& budget,
                           std::int64_t gpus);

}  // namespace corral::server
