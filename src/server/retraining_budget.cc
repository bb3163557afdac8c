#include "server/retraining_budget.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/units.h"

namespace corral::server {
namespace {

constexpr double kMsPerHour = 3600.0 * 1000.0;

}  // namespace

core::Time period_start(const RetrainingBudget& budget, core::Time now) {
  const std::int64_t period = std::max<std::int64_t>(1, core::to_ms(budget.period));
  const std::int64_t t = core::to_ms(now);
  return core::time_from_ms(t - ((t % period) + period) % period);
}

core::Result<RetrainingUse> retraining_use(store::Tx& tx, const core::TenantId& tenant,
                                           const RetrainingBudget& budget, core::Time now) {
  RetrainingUse use{.period_start = period_start(budget, now)};
  use.period_end = use.period_start + budget.period;
  CORRAL_ASSIGN_OR_RETURN(const auto allocs,
                          tx.list_retraining_allocations(tenant, use.period_start));
  double ms = 0;
  for (const auto& a : allocs) {
    if (a.active) ++use.gpus;
    const core::Time from = std::max(a.created_at, use.period_start);
    const core::Time to = std::min(a.released_at.value_or(now), now);
    if (to > from) ms += static_cast<double>(core::to_ms(to - from));
  }
  use.gpu_hours = ms / kMsPerHour;
  return use;
}

std::string exceeds_budget(const core::TenantId& tenant, const RetrainingBudget& budget,
                           std::int64_t gpus) {
  if (!budget.max_gpus || gpus <= *budget.max_gpus) return "";
  return fmt::format(
      "tenant {}'s retraining budget allows {} GPUs at once (retraining.maxGpus); the retraining "
      "job asks {}",
      tenant.value, *budget.max_gpus, gpus);
}

core::Result<std::map<std::int64_t, std::string>> retraining_holds(
    store::Tx& tx, const std::vector<store::TenantRow>& tenants, core::Time now) {
  std::map<std::string, RetrainingBudget> budgets;
  for (const auto& t : tenants) {
    const auto cfg = tenant_config_from_json(t.id.value, t.config_json);
    if (cfg.ok() && cfg->retraining.capped()) budgets[t.id.value] = cfg->retraining;
  }
  std::map<std::int64_t, std::string> held;
  if (budgets.empty()) return held;  // the common case: one query fewer per cycle
  CORRAL_ASSIGN_OR_RETURN(const auto open, tx.list_open_retraining_jobs());
  std::map<std::string, RetrainingUse> uses;
  for (const auto& job : open) {  // oldest first
    const auto b = budgets.find(job.tenant.value);
    if (b == budgets.end() || job.phase != "pending") continue;
    const RetrainingBudget& budget = b->second;
    auto u = uses.find(job.tenant.value);
    if (u == uses.end()) {
      CORRAL_ASSIGN_OR_RETURN(auto use, retraining_use(tx, job.tenant, budget, now));
      u = uses.emplace(job.tenant.value, use).first;
    }
    RetrainingUse& use = u->second;
    std::string why = exceeds_budget(job.tenant, budget, job.gpus);
    if (why.empty() && budget.max_gpus && use.gpus + job.gpus > *budget.max_gpus) {
      why = fmt::format(
          "tenant {}'s retraining jobs running or ahead in the queue take {} of the {} GPUs its "
          "retraining budget allows at once (retraining.maxGpus); this one needs {}",
          job.tenant.value, use.gpus, *budget.max_gpus, job.gpus);
    }
    if (why.empty() && budget.gpu_hours && use.gpu_hours >= *budget.gpu_hours) {
      why = fmt::format(
          "tenant {}'s retraining jobs used {:.1f} of its {:g} GPU-hours for the period "
          "(retraining.gpuHours); the next period starts {}",
          job.tenant.value, use.gpu_hours, *budget.gpu_hours, core::format_utc(use.period_end));
    }
    if (why.empty()) {
      use.gpus += job.gpus;  // released: its GPUs count against the ones after it
    } else {
      held.emplace(job.job.value, "held: retraining budget: " + why);
    }
  }
  return held;
}

}  // namespace corral::server
