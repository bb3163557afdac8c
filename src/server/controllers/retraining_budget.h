// A tenant's retraining budget read from the store (the rules: registry/retraining.h).
// The budget is applied where the cycle's snapshot is read, as the dataset gate is
// (StoreView::held): a pending retraining job the budget holds is held out of the cycle
// with its reason, so decide() never sees it.
//
// Thread safety: stateless functions over the caller's transaction.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/time.h"
#include "registry/retraining.h"
#include "store/store.h"

namespace corral::server {

// The use of `tenant`'s retraining jobs in the period of `budget` holding `now`.
core::Result<registry::RetrainingUse> retraining_use(store::ModelRepo& models,
                                                     const core::TenantId& tenant,
                                                     const registry::RetrainingBudget& budget,
                                                     core::Time now);

// The pending retraining jobs the budgets of `tenants` (the transaction's list_tenants())
// hold now, with their reasons (registry::retraining_holds, tenant by tenant).
core::Result<std::map<std::int64_t, std::string>> retraining_holds(
    store::Tx& tx, const std::vector<store::TenantRow>& tenants, core::Time now);

}  // namespace corral::server
