#include "sched/estimate.h"

#include <algorithm>

namespace corral::sched {

RuntimeEstimate estimate_runtime(core::Duration spec_expected,
                                 std::vector<core::Duration> recent_runs) {
  if (spec_expected.count() > 0) return {.runtime = spec_expected, .basis = EstimateBasis::kSpec};
  std::erase_if(recent_runs, [](core::Duration d) { return d.count() <= 0; });
  if (recent_runs.empty()) return {};
  if (recent_runs.size() > kEstimateRuns) recent_runs.resize(kEstimateRuns);
  // The upper median: with an even count the estimate leans long, which errs toward a
  // start later than the real one rather than a promise broken.
  const auto mid = recent_runs.begin() + static_cast<std::ptrdiff_t>(recent_runs.size() / 2);
  std::nth_element(recent_runs.begin(), mid, recent_runs.end());
  return {.runtime = *mid,
          .basis = EstimateBasis::kHistory,
          .runs = static_cast<std::int32_t>(recent_runs.size())};
}

void RunHistory::add_latest(const core::TenantId& tenant, const std::string& name,
                            core::Duration run) {
  std::vector<core::Duration>& runs = runs_[Key{tenant.value, name}];
  runs.insert(runs.begin(), run);
  if (runs.size() > kEstimateRuns) runs.resize(kEstimateRuns);
}

void RunHistory::add_older(const core::TenantId& tenant, const std::string& name,
                           core::Duration run) {
  std::vector<core::Duration>& runs = runs_[Key{tenant.value, name}];
  if (runs.size() < kEstimateRuns) runs.push_back(run);
}

JobRequest RunHistory::with_estimate(JobRequest r, std::string_view name) const {
  if (r.estimate.basis == EstimateBasis::kSpec || runs_.empty()) return r;
  const auto it = runs_.find(View{r.tenant.value, name});
  if (it != runs_.end()) r.estimate = estimate_runtime(core::Duration(0), it->second);
  return r;
}

}  // namespace corral::sched
