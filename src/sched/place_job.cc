#include <algorithm>
#include <cmath>

#include "sched/internal/admit.h"
#include "sched/internal/cycle.h"
#include "sched/internal/explain.h"
#include "sched/internal/text.h"

namespace corral::sched::detail {

// The GPU types a job may use, most preferred first: the order the user listed them, or
// for "any type" the cheapest in fair-share terms first (then by name), which keeps
// premium GPUs for the jobs that ask for them. A job that says how fast it runs on each
// type (gpu_speed) goes where it gains most per GPU-hour of the type's price, its
// fair-share usage factor: speed / usage_factor^type_price_weight, highest first; types it
// gives no speed for come last. Types with no node in the fleet are left out.
// What a GPU of type `t` is worth to a job that gives speeds: its speed there per the
// type's price weight (0 for a type it gives no speed for).
double speed_per_price(const ClusterSnapshot& s, const SchedulerConfig& config, const JobRequest& r,
                       TypeIx t) {
  const core::GpuType& type = s.gpu_types()[t];
  const auto it = r.gpu_speed.find(type.id);
  return it == r.gpu_speed.end()
             ? 0.0
             : it->second / std::pow(type.usage_factor, config.type_price_weight);
}

std::vector<TypeIx> candidate_types(const ClusterSnapshot& s, const SchedulerConfig& config,
                                    const JobRequest& r) {
  std::vector<TypeIx> types;
  if (!r.gpu_types.empty()) {
    for (const core::GpuTypeId& id : r.gpu_types) types.push_back(*s.find_type(id));
  } else {
    for (TypeIx t = 0; t < static_cast<TypeIx>(s.gpu_types().size()); ++t) types.push_back(t);
    std::stable_sort(types.begin(), types.end(), [&](TypeIx a, TypeIx b) {
      return s.gpu_types()[a].usage_factor < s.gpu_types()[b].usage_factor;
    });
  }
  if (!r.gpu_speed.empty()) {
    std::stable_sort(types.begin(), types.end(), [&](TypeIx a, TypeIx b) {
      return speed_per_price(s, config, r, a) > speed_per_price(s, config, r, b);
    });
  }
  std::erase_if(types, [&](TypeIx t) { return s.max_node_gpus(t) == 0; });
  return types;
}

detail::PlaceRequest place_request(const Cycle& c, const JobRequest& r, TypeIx type,
                                   std::int32_t gpus) {
  return {.type = type,
          .gpus = gpus,
          .per_node = r.gpus_per_node,
          .cpus_per_gpu = r.cpus_per_gpu,
          .memory_per_gpu_mib = r.memory_per_gpu_mib,
          .topology = r.topology,
          .scoring = c.config.topology_scoring,
          .region = c.s.region_of(r)};
}

Placement make_placement(const Cycle& c, const JobRequest& r, TypeIx type,
                         const detail::PlaceResult& placed, bool borrowed) {
  return {.job = r.id,
          .gpu_type = c.s.gpu_types()[type].id,
          .gpus = detail::gpus_of(c.s, placed.takes),
          .borrowed = borrowed,
          .packed = placed.packed,
          .reservation = r.reservation};
}

// Admission and placement without preemption: on each acceptable type, the largest size
// that fits (one size for a rigid job). Then the largest size wins, the tightest placement
// among those, the earlier type on ties. For a job that gives its speed by type, size and
// type are weighed together: its throughput there, speed x T(size) by its scaling curve,
// per the type's price weight (candidate_types), highest first, the earlier type on ties;
// so 4 fast GPUs beat 8 slow ones when the 4 run it faster per unit of price.
// A type the job could never fit as the fleet is built is passed over; the job is
// unschedulable only when every type is, and otherwise waits with the reason of the first
// type that could hold it (the user's preference), unless that was quota.
Attempt try_place(Cycle& c, const JobRequest& r, TenantIx tenant) {
  Attempt best;
  if (c.s.region_of(r) == kNoSuchRegion) {
    best.reason = cat("unschedulable: no node is in region ", r.region);
    return best;
  }
  std::string quota_reason;
  const std::vector<TypeIx> types = candidate_types(c.s, c.config, r);
  if (!types.empty()) best.preferred = types.front();
  // Per type, why it can never hold the job at the smallest size tried so far.
  std::vector<std::optional<detail::NeverFits>> never(types.size());
  // The view the caller entered for this job.
  detail::NoFitMemo& memo = c.memos[c.gate.current()];
  // The (size, type) pairs to try, best first: without speeds the largest size first,
  // then the types in order (pair k is size k / types, type k % types); for a job that
  // gives speeds by what it runs at there per unit of price, speed_per_price x T(size),
  // earlier pairs first on ties.
  const std::vector<std::int32_t> sizes = detail::useful_sizes(r, c.config.elastic_min_efficiency);
  const std::size_t pairs = sizes.size() * types.size();
  std::vector<std::size_t> by_value;  // speeds only: the pairs in order
  if (!r.gpu_speed.empty()) {
    std::vector<double> value(pairs);
    for (std::size_t k = 0; k < pairs; ++k) {
      value[k] = speed_per_price(c.s, c.config, r, types[k % types.size()]) *
                 detail::throughput(r, sizes[k / types.size()]);
      by_value.push_back(k);
    }
    std::stable_sort(by_value.begin(), by_value.end(),
                     [&](std::size_t a, std::size_t b) { return value[a] > value[b]; });
  }
  std::int32_t best_size = 0;
  for (std::size_t i = 0; i < pairs; ++i) {
    const std::size_t k = by_value.empty() ? i : by_value[i];
    const std::int32_t size = sizes[k / types.size()];
    const std::size_t t = k % types.size();
    // Without speeds the tightest placement of the largest size that fits wins; with
    // speeds the first that fits.
    if (best.placement && size < best_size) break;
    const TypeIx type = types[t];
    const detail::PlaceRequest request = place_request(c, r, type, size);
    never[t] = detail::never_fits(c.bounds, request);
    if (never[t]) continue;
    const detail::Admission admission =
        detail::admit(c.plan, tenant, type, gpu_milli_of(r, size), is_session(r));
    if (!admission.ok) {
      if (quota_reason.empty()) quota_reason = admission.reason;
      continue;
    }
    detail::PlaceMiss miss;
    std::optional<detail::PlaceResult> placed;
    if (const detail::PlaceMiss* known = memo.find(request)) {
      miss = *known;
    } else {
      placed = detail::find_placement(c.plan, request, miss);
      if (!placed) memo.remember(request, miss);
    }
    if (!placed) {
      if (best.reason.empty()) {
        const detail::Explanation why =
            detail::explain_no_fit(c.plan, c.bounds, c.gate, request, miss);
        best.kind = why.kind;
        best.reason = why.reason;
      }
      continue;
    }
    if (best.placement && placed->packed >= best.placement->packed) continue;
    best.placement = make_placement(c, r, type, *placed, admission.borrowed);
    best.takes = std::move(placed->takes);
    best_size = size;
    const core::PackLevel wish =
        r.topology.pack == core::PackLevel::kNone ? core::PackLevel::kNvlink : r.topology.pack;
    if (!r.gpu_speed.empty() || detail::satisfies(c.s, best.takes, wish)) break;
  }
  if (!best.placement && best.reason.empty()) {
    if (!quota_reason.empty()) {
      best.kind = PendingKind::kQuota;
      best.reason = quota_reason;
    } else if (types.empty()) {
      best.kind = PendingKind::kUnschedulable;
      best.reason = "unschedulable: the fleet has no node with an acceptable GPU type";
    } else {
      // Every type can never hold it: name the one that comes closest, or, when its region
      // has none of them, say so of them all.
      std::size_t closest = 0;
      for (std::size_t t = 1; t < types.size(); ++t) {
        if (never[t]->most > never[closest]->most) closest = t;
      }
      best.kind = PendingKind::kUnschedulable;
      const std::string why = detail::never_fits_text(c.s, *never[closest]);
      const bool none_in_region = std::all_of(never.begin(), never.end(), [](const auto& n) {
        return n->limit == detail::NeverFits::Limit::kRegion;
      });
      if (types.size() == 1) {
        best.reason = cat("unschedulable: ", why);
      } else if (none_in_region) {
        std::string names;
        for (const TypeIx t : types) {
          names += cat(names.empty() ? "" : " or ", c.s.gpu_types()[t].id.value);
        }
        best.reason = cat("unschedulable: no node in region ", r.region, " has ", names);
      } else {
        best.reason =
            cat("unschedulable: no acceptable GPU type can ever hold it (closest: ", why, ")");
      }
    }
  }
  return best;
}

}  // namespace corral::sched::detail
