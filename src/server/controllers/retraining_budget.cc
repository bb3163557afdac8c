#include "server/controllers/retraining_budget.h"

#include "server/base/model_json.h"
#include "server/base/stored_documents.h"

namespace corral::server {

core::Result<registry::RetrainingUse> retraining_use(store::ModelRepo& models,
                                                     const core::TenantId& tenant,
                                                     const registry::RetrainingBudget& budget,
                                                     core::Time now) {
  CORRAL_ASSIGN_OR_RETURN(const auto allocs, models.list_retraining_allocations(
                                                 tenant, registry::period_start(budget, now)));
  std::vector<registry::HeldGpu> held;
  held.reserve(allocs.size());
  for (const auto& a : allocs) {
    held.push_back({.from = a.created_at,
                    .to = a.active ? std::nullopt : std::optional(a.released_at.value_or(now))});
  }
  return registry::retraining_use(budget, held, now);
}

core::Result<std::map<std::int64_t, std::string>> retraining_holds(
    store::Tx& tx, const std::vector<store::TenantRow>& tenants, core::Time now) {
  std::map<std::string, registry::RetrainingBudget> budgets;
  for (const TenantConfig& cfg : stored_tenants(tenants)) {
    if (cfg.retraining.capped()) budgets[cfg.tenant.id.value] = cfg.retraining;
  }
  std::map<std::int64_t, std::string> held;
  if (budgets.empty()) return held;  // the common case: one query fewer per cycle
  CORRAL_ASSIGN_OR_RETURN(const auto open, tx.models().list_open_retraining_jobs());
  std::map<std::string, std::vector<registry::PendingRetraining>> pending;
  for (const auto& job : open) {  // oldest first
    if (budgets.contains(job.tenant.value) && job.phase == "pending") {
      pending[job.tenant.value].push_back({.job = job.job, .gpus = job.gpus});
    }
  }
  for (const auto& [tenant, jobs] : pending) {
    const core::TenantId id(tenant);
    const registry::RetrainingBudget& budget = budgets.at(tenant);
    CORRAL_ASSIGN_OR_RETURN(const auto use, retraining_use(tx.models(), id, budget, now));
    held.merge(registry::retraining_holds(id, budget, use, jobs));
  }
  return held;
}

}  // namespace corral::server
