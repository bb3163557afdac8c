#include "sched/decide.h"

#include <algorithm>
#include <bit>

#include "sched/internal/admit.h"
#include "sched/internal/explain.h"
#include "sched/internal/no_fit_memo.h"
#include "sched/internal/order.h"
#include "sched/internal/place.h"
#include "sched/internal/plan.h"

namespace corral::sched {
namespace {

using detail::Plan;

// The GPU types a job may use, most preferred first: the order the user listed them, or
// for "any type" the cheapest in fair-share terms first (then by name), which keeps
// premium GPUs for the jobs that ask for them.
std::vector<TypeIx> candidate_types(const ClusterSnapshot& s, const JobRequest& r) {
  std::vector<TypeIx> types;
  if (!r.gpu_types.empty()) {
    for (const core::GpuTypeId& id : r.gpu_types) types.push_back(*s.find_type(id));
    return types;
  }
  for (TypeIx t = 0; t < static_cast<TypeIx>(s.gpu_types().size()); ++t) types.push_back(t);
  std::stable_sort(types.begin(), types.end(), [&](TypeIx a, TypeIx b) {
    return s.gpu_types()[a].usage_factor < s.gpu_types()[b].usage_factor;
  });
  return types;
}

struct Attempt {
  std::optional<Placement> placement;
  std::vector<detail::Plan::Take> takes;
  PendingKind kind = PendingKind::kUnschedulable;
  std::string reason;
};

// Tries each acceptable type; keeps the tightest placement, the earliest type on ties.
// A placement that already meets the job's own packing wish ends the search early.
Attempt try_job(const Plan& plan, const SchedulerConfig& config, const JobRequest& r,
                TenantIx tenant, detail::NoFitMemo& memo) {
  const ClusterSnapshot& s = plan.snapshot();
  Attempt best;
  std::string quota_reason;
  bool any_type = false;
  for (TypeIx type : candidate_types(s, r)) {
    if (s.max_node_gpus(type) == 0) continue;  // no node of this type in the fleet
    any_type = true;
    const detail::Admission admission = detail::admit(plan, tenant, type, r.gpus);
    if (!admission.ok) {
      if (quota_reason.empty()) quota_reason = admission.reason;
      continue;
    }
    const detail::PlaceRequest request{.type = type,
                                       .gpus = r.gpus,
                                       .per_node = r.gpus_per_node,
                                       .cpus_per_gpu = r.cpus_per_gpu,
                                       .memory_per_gpu_mib = r.memory_per_gpu_mib,
                                       .topology = r.topology,
                                       .scoring = config.topology_scoring};
    detail::PlaceMiss miss;
    std::optional<detail::PlaceResult> placed;
    if (const detail::PlaceMiss* known = memo.find(request)) {
      miss = *known;
    } else {
      placed = detail::find_placement(plan, request, miss);
      if (!placed) memo.remember(request, miss);
    }
    if (!placed) {
      // The first type's reason stands (the user's preference), unless it was quota.
      if (best.reason.empty()) {
        const detail::Explanation why = detail::explain_no_fit(plan, request, miss);
        best.kind = why.kind;
        best.reason = why.reason;
      }
      continue;
    }
    if (best.placement &&
        static_cast<int>(placed->packed) >= static_cast<int>(best.placement->packed)) {
      continue;
    }
    Placement p{.job = r.id,
                .gpu_type = s.gpu_types()[type].id,
                .borrowed = admission.borrowed,
                .packed = placed->packed};
    for (const Plan::Take& t : placed->takes) {
      for (std::uint64_t m = t.mask; m != 0; m &= m - 1) {
        p.gpus.push_back({s.nodes()[t.node].id, std::countr_zero(m)});
      }
    }
    std::sort(p.gpus.begin(), p.gpus.end());
    best.placement = std::move(p);
    best.takes = std::move(placed->takes);
    const core::PackLevel wish =
        r.topology.pack == core::PackLevel::kNone ? core::PackLevel::kNvlink : r.topology.pack;
    if (detail::satisfies(s, best.takes, wish)) break;
  }
  if (!best.placement && best.reason.empty()) {
    if (!quota_reason.empty()) {
      best.kind = PendingKind::kQuota;
      best.reason = quota_reason;
    } else if (!any_type) {
      best.kind = PendingKind::kUnschedulable;
      best.reason = "unschedulable: the fleet has no node with an acceptable GPU type";
    }
  }
  return best;
}

}  // namespace

Decisions decide(const ClusterSnapshot& snapshot, const SchedulerConfig& config,
                 core::Time /*now*/) {
  Plan plan(snapshot);
  detail::JobQueue queue(snapshot, config);
  detail::NoFitMemo memo;
  Decisions out;

  // 1. order: take jobs in queue order; each is admitted, placed or explained before
  //    the next is looked at, so fair share sees every placement made before it.
  while (auto next = queue.next(plan)) {
    const auto [ix, standing] = *next;
    const JobRequest& r = snapshot.pending()[ix].request;
    out.queue.push_back({r.id, standing});
    const TenantIx tenant = *snapshot.find_tenant(r.tenant);

    // 2-3. admit and place, all or nothing.
    Attempt attempt = try_job(plan, config, r, tenant, memo);
    if (attempt.placement) {
      plan.take(attempt.takes, tenant, r.cpus_per_gpu, r.memory_per_gpu_mib);
      out.placements.push_back(std::move(*attempt.placement));
      continue;
    }
    // 4. explain.
    out.pending.push_back({.job = r.id,
                           .position = static_cast<std::int32_t>(out.pending.size()) + 1,
                           .kind = attempt.kind,
                           .reason = std::move(attempt.reason)});
  }
  return out;
}

}  // namespace corral::sched
