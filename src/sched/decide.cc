#include "sched/decide.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <optional>
#include <queue>
#include <set>
#include <unordered_map>

#include "core/units.h"
#include "sched/internal/admit.h"
#include "sched/internal/backfill.h"
#include "sched/internal/class_caps.h"
#include "sched/internal/explain.h"
#include "sched/internal/fleet_bounds.h"
#include "sched/internal/forecast.h"
#include "sched/internal/gate.h"
#include "sched/internal/lend.h"
#include "sched/internal/no_fit_memo.h"
#include "sched/internal/order.h"
#include "sched/internal/place.h"
#include "sched/internal/plan.h"
#include "sched/internal/preempt.h"
#include "sched/internal/reclaim_wait.h"
#include "sched/internal/running.h"
#include "sched/internal/text.h"
#include "sched/internal/waiting_cost.h"

namespace corral::sched {
namespace {

using detail::cat;
using detail::Plan;

// The working state of one decide() call.
struct Cycle {
  Cycle(const ClusterSnapshot& snapshot, const SchedulerConfig& cfg, core::Time t)
      : s(snapshot),
        config(cfg),
        now(t),
        plan(snapshot),
        bounds(plan),
        running(snapshot),
        caps(snapshot, running),
        gate(snapshot, t),
        waiting(snapshot) {}

  const ClusterSnapshot& s;
  const SchedulerConfig& config;
  core::Time now;
  Plan plan;
  detail::FleetBounds bounds;
  detail::RunningIndex running;
  detail::ClassCaps caps;  // tenants' priority-class caps, this cycle's placements counted
  detail::Gate gate;
  std::map<detail::View, detail::NoFitMemo> memos;  // valid while no GPU is given back
  std::optional<PendingJob> head;                   // the backfill head, once found
  TypeIx head_type = -1;                            // the GPU type of its planned start
  std::int32_t searches = 0;                        // preemption searches made
  detail::WaitingCost waiting;                      // what waiting costs, for preemptions
  Decisions out;
};

// The GPU types a job may use, most preferred first: the order the user listed them, or
// for "any type" the cheapest in fair-share terms first (then by name), which keeps
// premium GPUs for the jobs that ask for them. A job that says how fast it runs on each
// type (gpu_speed) goes where it gains most per GPU-hour of the type's price, its
// fair-share usage factor: speed / usage_factor^type_price_weight, highest first; types it
// gives no speed for come last. Types with no node in the fleet are left out.
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
    const auto value = [&](TypeIx t) {
      const core::GpuType& type = s.gpu_types()[t];
      const auto it = r.gpu_speed.find(type.id);
      return it == r.gpu_speed.end()
                 ? 0.0
                 : it->second / std::pow(type.usage_factor, config.type_price_weight);
    };
    std::stable_sort(types.begin(), types.end(),
                     [&](TypeIx a, TypeIx b) { return value(a) > value(b); });
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

struct Attempt {
  std::optional<Placement> placement;
  std::vector<Plan::Take> takes;
  TypeIx preferred = -1;  // the job's first acceptable type, -1 if none
  PendingKind kind = PendingKind::kUnschedulable;
  std::string reason;
};

// Admission and placement without preemption: for each size (largest first; one size
// for a rigid job), each acceptable type; the tightest placement wins, the earlier type on
// ties, and a placement that meets the job's own packing wish ends the search early. For
// a job that gives its speed by type, the first type that holds it wins: a faster type
// gains more than a tighter placement on a slower one.
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
  for (std::int32_t size : detail::useful_sizes(r, c.config.elastic_min_efficiency)) {
    for (std::size_t t = 0; t < types.size(); ++t) {
      const TypeIx type = types[t];
      const detail::PlaceRequest request = place_request(c, r, type, size);
      never[t] = detail::never_fits(c.bounds, request);
      if (never[t]) continue;
      const detail::Admission admission = detail::admit(c.plan, tenant, type, size);
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
      const core::PackLevel wish =
          r.topology.pack == core::PackLevel::kNone ? core::PackLevel::kNvlink : r.topology.pack;
      if (!r.gpu_speed.empty() || detail::satisfies(c.s, best.takes, wish)) break;
    }
    if (best.placement) break;
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

// A blocked job that GPUs already being given up would seat waits for them instead of
// preempting more. Those jobs (victims asked to stop for it in an earlier cycle, jobs
// being cancelled or drained) free their GPUs within their grace; asking another job to
// stop as well costs that job its work since its checkpoint and frees nothing sooner.
// While agents confirm the first victim's stop, every cycle would otherwise pick a
// second. It is placed once they are free. Counts as a preemption search. Returns the
// pending reason.
std::optional<std::string> wait_for_stopping(Cycle& c, const JobRequest& r, TenantIx tenant) {
  if (!c.config.preemption.enabled || c.searches >= c.config.preemption.max_searches_per_cycle) {
    return std::nullopt;
  }
  std::vector<std::int32_t> stopping;
  for (std::int32_t ix = 0; ix < static_cast<std::int32_t>(c.s.running().size()); ++ix) {
    if (c.s.running()[ix].stopping && !c.running.touched[ix]) stopping.push_back(ix);
  }
  if (stopping.empty()) return std::nullopt;
  ++c.searches;
  const Plan::Mark mark = c.plan.mark();
  for (const std::int32_t ix : stopping) {
    const JobRequest& v = c.s.running()[ix].request;
    c.plan.give_back(c.running.takes[ix], c.running.tenant[ix], v.cpus_per_gpu,
                     v.memory_per_gpu_mib);
  }
  c.memos.clear();  // they record what did not fit without these GPUs
  Attempt attempt = try_place(c, r, tenant);
  c.plan.rollback(mark);
  c.memos.clear();  // and these, what did not fit with them
  if (!attempt.placement) return std::nullopt;
  // Only the stopping jobs whose GPUs it would use are waited for.
  std::vector<std::int32_t> waited;
  for (const std::int32_t ix : stopping) {
    if (detail::overlaps(c.running.takes[ix], attempt.takes)) waited.push_back(ix);
  }
  if (waited.empty()) return std::nullopt;  // it fits without them: not blocked by room
  // The plan keeps them held by the stopping jobs, which is the truth until they are gone
  // (fair share charges their tenants meanwhile); held GPUs go to no one else, and a
  // stopping job is no one's victim, so nothing more is needed to keep them.
  std::string names;
  for (const std::int32_t ix : waited) {
    c.running.touched[ix] = true;  // waited for by this job only
    names += cat(names.empty() ? "" : ", ", c.s.running()[ix].request.id.value);
  }
  return cat("waiting for job", waited.size() > 1 ? "s " : " ", names,
             ", already stopping, to free the GPUs this job will use");
}

// A shrink gives up only what the placement needs. The search released the shrunk job
// down to its minimum; once the placement is taken, the job takes back, in GPU order, the
// released GPUs still free whose node still has its CPUs and memory for them and whose
// rack stays under its power cap, as many as keep it at an allowed size. So a 32-GPU job
// making room for 8 goes to 24, one checkpoint-restart, where going to its minimum of 8
// and growing back to 24 in the next cycle made two. Returns the GPUs it keeps, sorted.
std::vector<GpuRef> keep_what_is_left(Cycle& c, const detail::Victim& v) {
  const RunningJob& victim = c.s.running()[v.running_ix];
  const JobRequest& r = victim.request;
  const TenantIx tenant = c.running.tenant[v.running_ix];
  std::vector<Plan::Take> taken;  // one GPU each, in GPU order
  for (const Plan::Take& t : v.released) {
    for (std::uint64_t m = t.mask & c.plan.free_mask(t.node); m != 0; m &= m - 1) {
      if (c.plan.room_on(t.node, 1, r.cpus_per_gpu, r.memory_per_gpu_mib) != Plan::Room::kFits) {
        break;  // nothing more fits on this node
      }
      taken.push_back({t.node, m & (~m + 1)});
      c.plan.take({taken.back()}, tenant, r.cpus_per_gpu, r.memory_per_gpu_mib);
    }
  }
  const auto minimum = static_cast<std::size_t>(r.elastic->min_gpus);
  std::size_t size = minimum;
  for (const std::int32_t allowed :
       detail::useful_sizes(r, c.config.elastic_min_efficiency)) {  // largest first
    const auto n = static_cast<std::size_t>(allowed);
    if (n <= minimum + taken.size() && n < victim.gpus.size()) {
      size = n;
      break;
    }
  }
  // What an allowed size cannot use goes back, last taken first.
  while (minimum + taken.size() > size) {
    c.plan.give_back({taken.back()}, tenant, r.cpus_per_gpu, r.memory_per_gpu_mib);
    taken.pop_back();
  }
  std::vector<GpuRef> kept = detail::gpus_of(c.s, v.kept);
  for (const GpuRef& g : detail::gpus_of(c.s, taken)) kept.push_back(g);
  std::sort(kept.begin(), kept.end());
  return kept;
}

// Preemption for a blocked job: per acceptable type in order, at the smallest size the
// job accepts, the cheapest set of victims that opens a placement. Applies it and
// returns true when one is found. A set with a victim that must pay for itself
// (detail::must_pay) is taken only when its victims lose less work than the waiting it
// saves (detail::WaitingCost); otherwise `declined` says what was weighed.
bool try_preempt(Cycle& c, detail::JobQueue& queue, const PendingJob& job, TenantIx tenant,
                 bool due, std::string& declined) {
  const JobRequest& r = job.request;
  if (!c.config.preemption.enabled || c.searches >= c.config.preemption.max_searches_per_cycle) {
    return false;
  }
  ++c.searches;
  const std::int32_t size = detail::allowed_sizes(r).back();
  const std::int32_t reservation = c.gate.reservation_index(r);
  for (TypeIx type : candidate_types(c.s, c.config, r)) {
    const detail::PlaceRequest request = place_request(c, r, type, size);
    if (detail::never_fits(c.bounds, request)) continue;
    const detail::Admission admission = detail::admit(c.plan, tenant, type, size);
    if (!admission.ok) continue;
    const detail::Preemptor preemptor{
        .job = &job,
        .tenant = tenant,
        .within_guarantee = !admission.borrowed,
        .level = detail::las_level(c.config, job.attained_gpu_seconds),
        .reservation_masks = reservation >= 0 ? &c.gate.reserved(reservation) : nullptr,
        .forbidden = &c.gate.forbidden(),
        .due = due};
    auto found = detail::find_preemption(c.plan, c.running, request, preemptor, c.config, c.now);
    if (!found) continue;
    if (std::any_of(found->victims.begin(), found->victims.end(),
                    [&](const detail::Victim& v) { return detail::must_pay(v, c.config); })) {
      double lost = 0;
      bool across_tenants = false;
      for (const detail::Victim& v : found->victims) {
        lost += v.lost_gpu_seconds;
        across_tenants = across_tenants || v.kind == detail::VictimKind::kReclaim ||
                         v.kind == detail::VictimKind::kStarved;
      }
      const double waiting =
          c.waiting.gpu_seconds(c.plan, c.running, request, c.gate.forbidden(),
                                c.config.preemption.grace, c.now, across_tenants, lost);
      if (lost >= waiting) {
        if (declined.empty()) {
          declined =
              cat("waits for running jobs to end rather than stop job",
                  found->victims.size() > 1 ? "s " : " ",
                  c.s.running()[found->victims.front().running_ix].request.id.value,
                  found->victims.size() > 1 ? " and others" : "", " (", detail::gpu_hours(lost),
                  " of work lost against ", detail::gpu_hours(waiting), " of waiting)");
        }
        continue;
      }
    }

    Placement placement = make_placement(c, r, type, found->placement, admission.borrowed);
    std::vector<std::pair<std::size_t, const detail::Victim*>> shrinks;  // resize, victim
    for (const detail::Victim& v : found->victims) {
      const RunningJob& victim = c.s.running()[v.running_ix];
      c.plan.give_back(v.released, c.running.tenant[v.running_ix], victim.request.cpus_per_gpu,
                       victim.request.memory_per_gpu_mib);
      c.running.touched[v.running_ix] = true;
      placement.waits_for.push_back(victim.request.id);
      if (v.shrink) {
        shrinks.emplace_back(c.out.resizes.size(), &v);
        c.out.resizes.push_back({.job = victim.request.id,
                                 .from_gpus = static_cast<std::int32_t>(victim.gpus.size()),
                                 .for_job = r.id,
                                 .reason = v.reason});
      } else {
        c.out.preemptions.push_back({.victim = victim.request.id,
                                     .for_job = r.id,
                                     .reason = v.reason,
                                     .grace = c.config.preemption.grace});
      }
    }
    c.plan.take(found->placement.takes, tenant, r.cpus_per_gpu, r.memory_per_gpu_mib);
    for (const auto& [at, v] : shrinks) {
      Resize& rz = c.out.resizes[at];
      rz.gpus = keep_what_is_left(c, *v);
      rz.to_gpus = static_cast<std::int32_t>(rz.gpus.size());
    }
    for (const detail::Victim& v : found->victims) {
      queue.refresh(c.plan, c.running.tenant[v.running_ix]);
    }
    // Victims' GPUs the job does not use are not free until the victims are gone: no one
    // else may have them in this decision.
    std::vector<Plan::Take> leftover;
    for (const detail::Victim& v : found->victims) {
      for (const Plan::Take& t : v.released) {
        const std::uint64_t still_free = t.mask & c.plan.free_mask(t.node);
        if (still_free != 0) leftover.push_back({t.node, still_free});
      }
    }
    c.plan.block(leftover);
    c.out.placements.push_back(std::move(placement));
    c.memos.clear();  // GPUs were given back: what did not fit before may fit now
    return true;
  }
  return false;
}

// What a planned start rests on: the running job whose end makes room, by its estimate.
std::string estimate_basis(const Cycle& c, std::int32_t running_ix) {
  const RunningJob& j = c.s.running()[running_ix];
  if (j.stopping) return cat("job ", j.request.id.value, " stops within its grace");
  switch (j.request.estimate.basis) {
    case EstimateBasis::kSpec:
      return cat("job ", j.request.id.value, "'s expectedRuntime");
    case EstimateBasis::kHistory:
      return cat("estimate from ", j.request.estimate.runs, " earlier run",
                 j.request.estimate.runs == 1 ? "" : "s");
    case EstimateBasis::kMaxRuntime:
      break;
  }
  return "running jobs' max runtimes";
}

// EASY backfill: the first blocked job gets a planned start and the GPUs it will get are
// promised to it; later jobs that would still run then may not take those. The promise
// rests on running jobs' max runtimes (a job is stopped at its limit, so it is a bound);
// the forecast shown beside it rests on their runtime estimates where they have one.
// Returns the pending reason for the head, which keeps `cause` (why it does not fit now:
// capacity, topology, power), or nothing if it can never start.
std::optional<std::string> plan_head(Cycle& c, const PendingJob& job, const std::string& cause) {
  const JobRequest& r = job.request;
  for (TypeIx type : candidate_types(c.s, c.config, r)) {
    const std::int32_t size = detail::allowed_sizes(r).back();
    const detail::PlaceRequest request = place_request(c, r, type, size);
    if (detail::never_fits(c.bounds, request)) continue;
    auto planned = detail::plan_start(c.plan, c.running, request, c.gate.forbidden(),
                                      c.config.preemption.grace, c.now, detail::EndBy::kMaxRuntime);
    if (!planned) continue;
    // The forecast differs from the bound only when some running job has an estimate.
    const bool estimated = std::any_of(
        c.s.running().begin(), c.s.running().end(),
        [](const RunningJob& j) { return j.request.estimate.basis != EstimateBasis::kMaxRuntime; });
    const auto forecast =
        estimated ? detail::plan_start(c.plan, c.running, request, c.gate.forbidden(),
                                       c.config.preemption.grace, c.now, detail::EndBy::kEstimate)
                  : planned;
    const core::Time expected = forecast ? std::min(forecast->at, planned->at) : planned->at;
    c.head = job;
    c.head_type = type;
    c.gate.set_shadow(planned->takes, planned->at);
    c.out.planned_starts.push_back({.job = r.id,
                                    .at = planned->at,
                                    .expected = expected,
                                    .gpus = detail::gpus_of(c.s, planned->takes)});
    const std::string head = cat("waiting: first in line for ", size, " ",
                                 c.s.gpu_types()[type].id.value, " (", cause, "); ");
    // Instants as core::instant_text: readers show them as the queue shows planned starts.
    if (expected < planned->at) {
      return cat(head, "planned start ~", core::instant_text(expected), " (",
                 estimate_basis(c, forecast->last_ix), "), by ", core::instant_text(planned->at),
                 " at the latest");
    }
    return cat(head, "start by ", core::instant_text(planned->at), " at the latest (",
               estimate_basis(c, planned->last_ix), ")");
  }
  return std::nullopt;
}

// Running elastic jobs grow into GPUs that no job left pending could use, by water-filling:
// the next GPUs go to the job whose next allowed size adds the most log-throughput per GPU
// (its scaling curve; linear without one), so the cycle's growth maximises the sum over
// jobs of log throughput, proportional fairness between the growing jobs: a job at 2 GPUs
// doubling gains as much as one at 16 doubling, for an eighth of the GPUs. A job grows
// only to sizes where each GPU is still worth elastic_min_efficiency of its first, and
// only to a size whose saved run time beats the restart it costs (restore time +
// elastic_resize_cost; a step that does not pay is skipped for the next, larger one). Each job is
// resized at most once a cycle, to where its steps reached; a resize restarts it from its
// checkpoint, so a job that ran less than min_runtime waits, like a preemption victim would.
void grow_elastic(Cycle& c) {
  // Types some pending job could still use, and where: (type, its region or kAnyRegion).
  std::set<TypeIx> wanted_types;
  std::set<std::pair<TypeIx, RegionIx>> wanted;
  std::map<core::JobId, const PendingJob*> pending;
  for (const PendingJob& p : c.s.pending()) pending[p.request.id] = &p;
  for (const Pending& p : c.out.pending) {
    const JobRequest& r = pending.at(p.job)->request;
    for (TypeIx t : candidate_types(c.s, c.config, r)) {
      wanted_types.insert(t);
      wanted.insert({t, c.s.region_of(r)});
    }
  }
  // Whether a job bound to `region` (kAnyRegion: it may grow anywhere) would grow into GPUs
  // of `type` a pending job could use: a job bound to another region could not.
  const auto is_wanted = [&](TypeIx type, RegionIx region) {
    if (region == kAnyRegion) return wanted_types.count(type) > 0;
    return wanted.count({type, kAnyRegion}) > 0 || wanted.count({type, region}) > 0;
  };
  struct Grower {
    std::int32_t ix = 0;
    std::int32_t target = 0;          // the size its steps reached so far
    std::vector<std::int32_t> sizes;  // useful sizes above its current one, ascending
    std::size_t next = 0;             // into sizes
    std::vector<Plan::Take> all;      // its GPUs at `target`
  };
  // Hysteresis: growing from `current` to `size` must save more run time (by the job's
  // estimate, or its max runtime) than the restart costs.
  const auto worth_it = [&](const RunningJob& job, std::int32_t current, std::int32_t size) {
    const JobRequest& r = job.request;
    // Run so far: this attempt's wall time. After restarts that understates it, so a job
    // late in its run may still be grown (the attained service over the current size
    // overstates it after a shrink, which was worse: docs/scheduling.md, part 7).
    const core::Duration left =
        std::max(r.expected_runtime() - (c.now - job.started_at), core::Duration(0));
    const double saved_s = static_cast<double>(left.count()) / 1000.0 *
                           (1.0 - detail::throughput(r, current) / detail::throughput(r, size));
    return saved_s >
           static_cast<double>((r.restore_time + c.config.elastic_resize_cost).count()) / 1000.0;
  };
  std::vector<Grower> growers;
  for (std::int32_t ix = 0; ix < static_cast<std::int32_t>(c.s.running().size()); ++ix) {
    const RunningJob& job = c.s.running()[ix];
    const JobRequest& r = job.request;
    const TypeIx type = c.running.type[ix];
    const auto current = static_cast<std::int32_t>(job.gpus.size());
    if (!r.elastic || current >= r.elastic->max_gpus || c.running.touched[ix] || job.stopping ||
        type < 0 || is_wanted(type, c.s.region_of(r)) ||
        c.now - job.started_at < c.config.preemption.min_runtime_for(r.tier)) {
      continue;
    }
    Grower g{.ix = ix, .target = current, .all = c.running.takes[ix]};
    for (std::int32_t size : detail::useful_sizes(r, c.config.elastic_min_efficiency)) {
      if (size > current) g.sizes.insert(g.sizes.begin(), size);
    }
    // Not even its largest useful size would pay for the restart: leave it.
    if (g.sizes.empty() || !worth_it(job, current, g.sizes.back())) continue;
    growers.push_back(std::move(g));
  }
  // (gain per GPU of the grower's next step, -grower index): ties go to the earlier job.
  std::priority_queue<std::pair<double, std::int64_t>> steps;
  const auto push_next = [&](std::size_t gi) {
    const Grower& g = growers[gi];
    if (g.next >= g.sizes.size()) return;
    const JobRequest& r = c.s.running()[g.ix].request;
    const double gain =
        std::log(detail::throughput(r, g.sizes[g.next]) / detail::throughput(r, g.target)) /
        static_cast<double>(g.sizes[g.next] - g.target);
    if (gain > 0) steps.push({gain, -static_cast<std::int64_t>(gi)});
  };
  for (std::size_t gi = 0; gi < growers.size(); ++gi) push_next(gi);
  while (!steps.empty()) {
    const auto gi = static_cast<std::size_t>(-steps.top().second);
    steps.pop();
    Grower& g = growers[gi];
    const RunningJob& job = c.s.running()[g.ix];
    const JobRequest& r = job.request;
    const TypeIx type = c.running.type[g.ix];
    const std::int32_t size = g.sizes[g.next++];
    // Hysteresis: this size must pay for the restart; a larger one may.
    if (!worth_it(job, static_cast<std::int32_t>(job.gpus.size()), size)) {
      push_next(gi);
      continue;
    }
    c.gate.enter(c.plan, c.gate.view_for(r));
    if (!detail::admit(c.plan, c.running.tenant[g.ix], type, size - g.target).ok) continue;
    if (c.caps.room(c.running.tenant[g.ix], r.tier) < size - g.target) continue;
    detail::PlaceRequest request = place_request(c, r, type, size - g.target);
    request.topology.mode = core::TopologyMode::kPreferred;
    detail::PlaceMiss miss;
    auto placed = detail::find_placement(c.plan, request, miss);
    if (!placed) continue;  // no room for this step: its next, larger one is not tried
    std::vector<Plan::Take> all = g.all;
    all.insert(all.end(), placed->takes.begin(), placed->takes.end());
    if (r.topology.mode == core::TopologyMode::kRequired &&
        !detail::satisfies(c.s, detail::takes_of(c.s, detail::gpus_of(c.s, all)),
                           r.topology.pack)) {
      continue;
    }
    c.plan.take(placed->takes, c.running.tenant[g.ix], r.cpus_per_gpu, r.memory_per_gpu_mib);
    c.caps.add(c.running.tenant[g.ix], r.tier, size - g.target);
    g.all = std::move(all);
    g.target = size;
    push_next(gi);
  }
  for (std::size_t gi = 0; gi < growers.size(); ++gi) {
    const Grower& g = growers[gi];
    const RunningJob& job = c.s.running()[g.ix];
    const auto current = static_cast<std::int32_t>(job.gpus.size());
    if (g.target == current) continue;
    c.running.touched[g.ix] = true;
    c.out.resizes.push_back(
        {.job = c.s.running()[g.ix].request.id,
         .from_gpus = current,
         .to_gpus = g.target,
         .gpus = detail::gpus_of(c.s, g.all),
         .reason = cat("grew from ", current, " to ", g.target, " GPUs into idle capacity")});
  }
}

// When each job left waiting for room is expected to start, in queue order: the head at
// its planned start, each later job at the earliest the GPU counts allow (forecast.h).
void forecast_starts(Cycle& c) {
  detail::StartForecast forecast(c.plan, c.running, c.out, c.config.preemption.grace, c.now);
  std::unordered_map<std::int64_t, const JobRequest*> requests;
  for (const PendingJob& job : c.s.pending()) requests[job.request.id.value] = &job.request;
  std::int32_t booked = 0;
  for (Pending& p : c.out.pending) {
    if (p.kind != PendingKind::kCapacity && p.kind != PendingKind::kTopology &&
        p.kind != PendingKind::kPower && p.kind != PendingKind::kWaiting) {
      continue;
    }
    if (++booked > detail::kMaxForecasts) break;
    const JobRequest& r = *requests.at(p.job.value);
    if (c.head && c.head->request.id == p.job) {
      const PlannedStart& head = c.out.planned_starts.back();
      forecast.book_at(r, c.head_type, head);
      p.start = head.expected;
    } else if (auto at = forecast.book(r, candidate_types(c.s, c.config, r))) {
      p.start = *at;
    }
  }
}

}  // namespace

Decisions decide(const ClusterSnapshot& snapshot, const SchedulerConfig& config, core::Time now) {
  Cycle c(snapshot, config, now);
  detail::JobQueue queue(snapshot, config, now);

  // 1. order: jobs in queue order; each is admitted, placed or explained before the next
  //    is looked at, so fair share sees every placement made before it.
  std::int32_t in_line = 0;  // pending jobs given a position so far
  // The previous job's placement, if any, counts against its tenant's class cap.
  std::size_t counted = 0;
  std::pair<TenantIx, std::int32_t> previous{-1, 0};
  const auto count_placements = [&] {
    for (; counted < c.out.placements.size(); ++counted) {
      c.caps.add(previous.first, previous.second,
                 static_cast<std::int64_t>(c.out.placements[counted].gpus.size()));
    }
  };
  while (auto next = queue.next(c.plan)) {
    count_placements();
    const auto [ix, standing] = *next;
    const TenantIx tenant = *snapshot.find_tenant(snapshot.pending()[ix].request.tenant);
    // Its tenant's cap for its priority class: an elastic job may start smaller (its
    // capped request is what the rest of the cycle sees), or it waits.
    const detail::ClassCaps::Fit cap = c.caps.fit(tenant, snapshot.pending()[ix]);
    const PendingJob& job = cap.capped ? *cap.capped : snapshot.pending()[ix];
    const JobRequest& r = job.request;
    previous = {tenant, r.tier};
    c.out.queue.push_back({r.id, standing});

    // A job that can never fit the fleet is not in line (position 0): it must never read
    // as ahead of work that can run.
    const auto wait = [&](PendingKind kind, std::string reason) {
      c.out.pending.push_back({.job = r.id,
                               .position = kind == PendingKind::kUnschedulable ? 0 : ++in_line,
                               .kind = kind,
                               .reason = std::move(reason)});
    };
    if (std::string problem = c.gate.reservation_problem(r); !problem.empty()) {
      wait(PendingKind::kReservation, std::move(problem));
      continue;
    }
    if (!cap.fits) {
      wait(PendingKind::kQuota, c.caps.reason(tenant, r.tier, cap.least));
      continue;
    }
    // A job that checkpoints may run on the head's promised GPUs until they are due.
    const bool borrows =
        c.head && detail::may_borrow_promise(job, *c.head, *c.gate.shadow_at(), config, now);
    c.gate.enter(c.plan, c.gate.view_for(r, borrows));

    // 2-3. admit and place, all or nothing.
    Attempt attempt = try_place(c, r, tenant);
    if (attempt.placement) {
      c.plan.take(attempt.takes, tenant, r.cpus_per_gpu, r.memory_per_gpu_mib);
      c.out.placements.push_back(std::move(*attempt.placement));
      continue;
    }
    const bool blocked_by_room = attempt.kind == PendingKind::kCapacity ||
                                 attempt.kind == PendingKind::kTopology ||
                                 attempt.kind == PendingKind::kPower;
    // 4. wait for GPUs already being given up, else preempt, for a job entitled to
    //    someone's GPUs.
    if (blocked_by_room) {
      if (auto reason = wait_for_stopping(c, r, tenant)) {
        wait(PendingKind::kWaiting, std::move(*reason));
        continue;
      }
    }
    // A starved job whose turn it is has its promise due: it may preempt the jobs that
    //    went ahead of it, when that loses less work than waiting (try_preempt), and is
    //    otherwise promised its planned start.
    const bool due =
        blocked_by_room && !c.head && !config.backfill && queue.may_promise(c.plan, ix);
    std::string declined;
    if (blocked_by_room && try_preempt(c, queue, job, tenant, due, declined)) continue;
    if (!declined.empty()) attempt.reason += cat("; ", declined);
    if (blocked_by_room && declined.empty()) {
      if (auto reclaim = detail::reclaim_wait(c.plan, c.running, config, r, tenant,
                                              candidate_types(c.s, config, r), now)) {
        attempt.reason += cat("; ", *reclaim);
      }
    }
    // 5. backfill: the first job blocked for room is promised its planned start (without
    //    EASY backfill, only the starved job whose turn it is).
    if (blocked_by_room && !c.head && (config.backfill || due)) {
      if (auto reason = plan_head(c, job, attempt.reason)) {
        wait(PendingKind::kWaiting, std::move(*reason));
        continue;
      }
    }
    // 6. explain. The head is named only when it stands in this job's way: it waits for
    //    a type this job could use, and this job would still run when the head starts.
    //    (The gate still shows this job's view: placing it, preempting for it and planning
    //    it as head change no view but the head's own.)
    if (blocked_by_room && c.head && c.gate.current().shadow_forbidden &&
        (r.gpu_types.empty() ||
         std::ranges::count(r.gpu_types, c.s.gpu_types()[c.head_type].id) > 0)) {
      const PlannedStart& head = c.out.planned_starts.back();
      attempt.reason += cat("; behind job ", head.job.value, " (planned start by ",
                            core::instant_text(head.at), ")");
    }
    // It waits ahead of the jobs after it for its preferred type (detail::WaitingCost).
    if (blocked_by_room && attempt.preferred >= 0) {
      c.waiting.left_waiting(attempt.preferred, detail::allowed_sizes(r).back());
    }
    wait(attempt.kind, std::move(attempt.reason));
  }

  count_placements();
  // 7. elastic jobs grow into what nobody pending can use.
  if (config.elastic_growth) grow_elastic(c);
  // 8. a forecast start for every job waiting for room.
  forecast_starts(c);
  return std::move(c.out);
}

}  // namespace corral::sched
