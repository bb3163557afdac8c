#include "registry/retraining.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/units.h"

namespace corral::registry {
namespace {

constexpr double kMsPerHour = 3600.0 * 1000.0;

}  // namespace

core::Time period_start(const RetrainingBudget& budget, core::Time now) {
  const std::int64_t period = std::max<std::int64_t>(1, core::to_ms(budget.period));
  const std::int64_t t = core::to_ms(now);
  return core::time_from_ms(t - ((t % period) + period) % period);
}

RetrainingUse retraining_use(const RetrainingBudget& budget, const std::vector<HeldGpu>& held,
                             core::Time now) {
  RetrainingUse use{.period_start = period_start(budget, now)};
  use.period_end = use.period_start + budget.period;
  double ms = 0;
  for (const HeldGpu& g : held) {
    if (!g.to) ++use.gpus;
    const core::Time from = std::max(g.from, use.period_start);
    const core::Time to = std::min(g.to.value_or(now), now);
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

std::map<std::int64_t, std::string> retraining_holds(
    const core::TenantId& tenant, const RetrainingBudget& budget, RetrainingUse use,
    const std::vector<PendingRetraining>& pending) {
  std::map<std::int64_t, std::string> held;
  for (const PendingRetraining& job : pending) {
    std::string why = exceeds_budget(tenant, budget, job.gpus);
    if (why.empty() && budget.max_gpus && use.gpus + job.gpus > *budget.max_gpus) {
      why = fmt::format(
          "tenant {}'s retraining jobs running or ahead in the queue take {} of the {} GPUs its "
          "retraining budget allows at once (retraining.maxGpus); this one needs {}",
          tenant.value, use.gpus, *budget.max_gpus, job.gpus);
    }
    if (why.empty() && budget.gpu_hours && use.gpu_hours >= *budget.gpu_hours) {
      why = fmt::format(
          "tenant {}'s retraining jobs used {:.1f} of its {:g} GPU-hours for the period "
          "(retraining.gpuHours); the next period starts {}",
          tenant.value, use.gpu_hours, *budget.gpu_hours, core::format_utc(use.period_end));
    }
    if (why.empty()) {
      use.gpus += job.gpus;  // released: its GPUs count against the ones after it
    } else {
      held.emplace(job.job.value, "held: retraining budget: " + why);
    }
  }
  return held;
}

}  // namespace corral::registry
