#include "sched/internal/reclaim_wait.h"

#include <algorithm>
#include <tuple>

#include "core/units.h"
#include "sched/internal/admit.h"
#include "sched/internal/text.h"

namespace corral::sched::detail {
namespace {

struct Protected {
  core::Time free_at;  // when its minimum runtime ends
  std::int64_t job = 0;
  std::int32_t gpus = 0;
};

}  // namespace

std::optional<std::string> reclaim_wait(const Plan& plan, const RunningIndex& running,
                                        const SchedulerConfig& config, const JobRequest& r,
                                        TenantIx tenant, const std::vector<TypeIx>& types,
                                        core::Time now) {
  if (!config.preemption.enabled) return std::nullopt;
  const ClusterSnapshot& s = plan.snapshot();
  const std::int32_t size = allowed_sizes(r).back();
  const RegionIx region = s.region_of(r);
  for (const TypeIx type : types) {
    const Admission admission = admit(plan, tenant, type, gpu_milli_of(r, size), is_session(r));
    if (!admission.ok || admission.borrowed) continue;  // only a guarantee reclaims
    std::vector<Protected> held;
    for (std::size_t ix = 0; ix < s.running().size(); ++ix) {
      const RunningJob& v = s.running()[ix];
      if (!running.borrowed[ix] || running.tenant[ix] == tenant || running.type[ix] != type ||
          running.touched[ix] || v.stopping || v.request.tier > r.tier ||
          (region != kAnyRegion && running.region[ix] != region)) {
        continue;
      }
      const core::Time free_at = v.started_at + config.preemption.min_runtime_for(v.request.tier);
      if (free_at <= now) continue;  // not protected: the preemption search saw it
      held.push_back({free_at, v.request.id.value, static_cast<std::int32_t>(v.gpus.size())});
    }
    std::sort(held.begin(), held.end(), [](const Protected& a, const Protected& b) {
      return std::tie(a.free_at, a.job) < std::tie(b.free_at, b.job);
    });
    std::int64_t free = plan.free_in(type, region);
    std::string jobs;
    for (std::size_t i = 0; i < held.size(); ++i) {
      free += held[i].gpus;
      jobs += cat(i == 0 ? "" : ", ", held[i].job);
      if (free < size) continue;
      return cat("reclaims ", size, " ", s.gpu_types()[type].id.value, " from job",
                 i == 0 ? " " : "s ", jobs, " at ", core::instant_text(held[i].free_at), ", when ",
                 i == 0 ? "its" : "their", " minimum runtime ends");
    }
  }
  return std::nullopt;
}

}  // namespace corral::sched::detail
