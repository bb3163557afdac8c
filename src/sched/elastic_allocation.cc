#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <queue>
#include <set>
#include <tuple>

#include "sched/internal/admit.h"
#include "sched/internal/cycle.h"
#include "sched/internal/text.h"

namespace corral::sched::detail {
namespace {

// One running elastic job the allocator may resize this cycle.
struct Member {
  std::int32_t ix = 0;                    // into the snapshot's running jobs
  std::int32_t current = 0;               // GPUs it holds
  std::int32_t level = 0;                 // its size in the water-fill: at the end, its target
  std::vector<std::int32_t> sizes;        // its allowed sizes, ascending
  const core::GpuTypeId* type = nullptr;  // the GPU type it runs on: its curve there
  double at_least = 1;                    // its throughput at its smallest size
  // Its speedup at a size other than its current one is discounted by the share of the
  // horizon its restart costs: the job makes no progress while it restarts.
  double discount = 1;
  double gain = 0;  // objective gained at its level (growers are tried best first)
};

// The allocator's objective for one job at `size`: its speedup over its smallest size
// (discounted away from its current size), through the power mean's exponent p:
// -speedup^p for p < 0 (p = -1, Pollux's default, is the harmonic mean), log for p = 0.
double utility(const SchedulerConfig& config, const JobRequest& r, const Member& m,
               std::int32_t size) {
  double speedup = throughput(r, *m.type, size) / m.at_least;
  if (size != m.current) speedup *= m.discount;
  if (speedup <= 0) return -1e300;
  const double p = config.elastic_fairness;
  return p == 0 ? std::log(speedup) : -std::pow(speedup, p);
}

// The water-fill is exact when every job's utility is concave in its size, but the
// restart's discount makes it peak at the job's current size (and a measured curve may
// fall), so its greedy order can leave a step that still gains. Each round makes the
// best single move: one member's step down (or none: idle GPUs) for another's step up
// (or none: to the idle ones), while it raises the objective. The pairs tried are the
// best few steps up against the cheapest few down, all of them in pools of up to
// kPolishWidth members; at most one round per member.
constexpr std::size_t kPolishWidth = 16;

void polish(const Cycle& c, std::vector<Member>& members, std::int64_t& left) {
  struct Step {
    std::int32_t mi = -1;  // -1: the idle GPUs
    std::int32_t size = 0;
    double delta = 0;  // the member's utility change
  };
  const auto n = static_cast<std::int32_t>(members.size());
  for (std::int32_t round = 0; round < n; ++round) {
    std::vector<Step> ups, downs;
    for (std::int32_t mi = 0; mi < n; ++mi) {
      const Member& m = members[mi];
      const JobRequest& r = c.s.running()[m.ix].request;
      const auto at = std::find(m.sizes.begin(), m.sizes.end(), m.level);
      const double here = utility(c.config, r, m, m.level);
      if (at + 1 != m.sizes.end())
        ups.push_back({mi, *(at + 1), utility(c.config, r, m, *(at + 1)) - here});
      if (at != m.sizes.begin())
        downs.push_back({mi, *(at - 1), utility(c.config, r, m, *(at - 1)) - here});
    }
    const auto keep_best = [](std::vector<Step>& steps) {
      const auto width = std::min(steps.size(), kPolishWidth);
      std::partial_sort(steps.begin(), steps.begin() + static_cast<std::ptrdiff_t>(width),
                        steps.end(), [](const Step& a, const Step& b) {
                          return std::tie(a.delta, b.mi) > std::tie(b.delta, a.mi);
                        });
      steps.resize(width);
    };
    keep_best(ups);
    keep_best(downs);
    ups.push_back({});    // to the idle GPUs
    downs.push_back({});  // from the idle GPUs
    const auto gpus = [&](const Step& s) {
      return s.mi < 0 ? 0 : std::abs(s.size - members[s.mi].level);
    };
    std::optional<std::pair<Step, Step>> best;
    double best_delta = 1e-12;  // a move must gain
    for (const Step& up : ups) {
      for (const Step& down : downs) {
        if ((up.mi < 0 && down.mi < 0) || (up.mi >= 0 && up.mi == down.mi)) continue;
        if (gpus(up) > gpus(down) + left) continue;
        if (up.delta + down.delta > best_delta) {
          best_delta = up.delta + down.delta;
          best = {up, down};
        }
      }
    }
    if (!best) return;
    for (const Step& s : {best->second, best->first}) {
      if (s.mi < 0) continue;
      left += members[s.mi].level - s.size;
      members[s.mi].level = s.size;
    }
  }
}

}  // namespace

// A shrinking job takes back, in GPU order, the released GPUs still free whose node still
// has its CPUs and memory for them and whose rack stays under its power cap, as many as
// keep it at the largest of `sizes` (largest first) up to `at_most`, inside its tenant's
// quota. Returns the GPUs it keeps, sorted.
std::vector<GpuRef> keep_what_is_left(Cycle& c, std::int32_t running_ix,
                                      const std::vector<Plan::Take>& kept,
                                      const std::vector<Plan::Take>& released,
                                      const std::vector<std::int32_t>& sizes,
                                      std::int32_t at_most) {
  const JobRequest& r = c.s.running()[running_ix].request;
  const TenantIx tenant = c.running.tenant[running_ix];
  std::vector<Plan::Take> taken;  // one GPU each, in GPU order
  for (const Plan::Take& t : released) {
    for (std::uint64_t m = t.mask & c.plan.free_mask(t.node); m != 0; m &= m - 1) {
      if (c.plan.room_on(t.node, 1, r.cpus_per_gpu, r.memory_per_gpu_mib) != Plan::Room::kFits ||
          !admit(c.plan, tenant, c.running.type[running_ix], 1000, false).ok) {
        break;  // nothing more fits on this node, or its tenant's quota
      }
      taken.push_back({t.node, m & (~m + 1)});
      c.plan.take({taken.back()}, tenant, r.cpus_per_gpu, r.memory_per_gpu_mib);
    }
  }
  std::int32_t least = 0;
  for (const Plan::Take& t : kept) least += std::popcount(t.mask);
  std::int32_t size = least;
  for (const std::int32_t n : sizes) {
    if (n <= least + static_cast<std::int32_t>(taken.size()) && n <= at_most) {
      size = n;
      break;
    }
  }
  // What an allowed size cannot use goes back, last taken first.
  while (least + static_cast<std::int32_t>(taken.size()) > size) {
    c.plan.give_back({taken.back()}, tenant, r.cpus_per_gpu, r.memory_per_gpu_mib);
    taken.pop_back();
  }
  std::vector<GpuRef> out = gpus_of(c.s, kept);
  for (const GpuRef& g : gpus_of(c.s, taken)) out.push_back(g);
  std::sort(out.begin(), out.end());
  return out;
}

// The elastic allocator (docs/scheduling.md, part 7). Every running elastic job that has
// held its size for the re-plan period is re-sized, together with the others, to where
// GPUs add the most to the power mean of the jobs' speedups: a water-fill from every
// job's smallest size over the GPUs they hold plus the idle ones no pending job could
// use. A step to a size other than the job's current one counts its restart against it
// (the restore time and the resize cost, over the time it has already run at its size:
// a job that ran t is taken to run about t more), so a move happens only when what it
// gains beats what its restarts cost. Then the shrinks are applied, the growths placed
// (best gain first; one that does not fit tries a smaller size), and a shrink whose GPUs
// no growth took takes them back.
void allocate_elastic(Cycle& c) {
  // Types some pending job could still use, and where: (type, its region or kAnyRegion).
  std::set<std::pair<TypeIx, RegionIx>> wanted;
  std::map<core::JobId, const PendingJob*> pending;
  for (const PendingJob& p : c.s.pending()) pending[p.request.id] = &p;
  for (const Pending& p : c.out.pending) {
    const JobRequest& r = pending.at(p.job)->request;
    for (TypeIx t : candidate_types(c.s, c.config, r)) wanted.insert({t, c.s.region_of(r)});
  }
  const auto is_wanted = [&](TypeIx type, RegionIx region) {
    return wanted.count({type, kAnyRegion}) > 0 || wanted.count({type, region}) > 0;
  };

  // The members, by pool: the GPUs of one type in one region.
  std::map<std::pair<TypeIx, RegionIx>, std::vector<Member>> pools;
  for (std::int32_t ix = 0; ix < static_cast<std::int32_t>(c.s.running().size()); ++ix) {
    const RunningJob& job = c.s.running()[ix];
    const JobRequest& r = job.request;
    const TypeIx type = c.running.type[ix];
    const core::Duration held_for = c.now - job.started_at;
    if (!r.elastic || c.running.touched[ix] || job.stopping || type < 0 ||
        held_for < c.config.preemption.min_runtime_for(r.tier) ||
        held_for < c.config.elastic_replan_period) {
      continue;
    }
    Member m{.ix = ix, .current = static_cast<std::int32_t>(job.gpus.size())};
    m.sizes = allowed_sizes(r);
    std::reverse(m.sizes.begin(), m.sizes.end());
    m.level = m.sizes.front();
    m.type = &c.s.gpu_types()[type].id;
    m.at_least = throughput(r, *m.type, m.sizes.front());
    const double restart_s =
        static_cast<double>((r.restore_time + c.config.elastic_resize_cost).count());
    // Over how long a new size pays: a job that ran t at its size is taken to run about t
    // more, at least a re-plan period, and no longer than its estimate or limit leaves it
    // (counted from this attempt's start, which after restarts overstates what is left).
    core::Duration horizon = std::max(held_for, c.config.elastic_replan_period);
    if (const core::Duration left = r.expected_runtime() - held_for; left.count() > 0) {
      horizon = std::min(horizon, left);
    }
    const auto horizon_s = static_cast<double>(horizon.count());
    m.discount = std::max(0.0, 1.0 - restart_s / horizon_s);
    if (m.at_least <= 0 || m.sizes.size() < 2) continue;
    pools[{type, c.running.region[ix]}].push_back(std::move(m));
  }

  std::vector<Member> changed;
  for (auto& [key, members] : pools) {
    const auto [type, region] = key;
    std::int64_t left = is_wanted(type, region) ? 0 : c.plan.free_in(type, region);
    for (const Member& m : members) left += m.current - m.level;
    // The water-fill: the next GPUs go to the step, to any larger candidate size that
    // fits, with the most objective per GPU. (gain per GPU, -member, size)
    using Step = std::tuple<double, std::int32_t, std::int32_t>;
    std::priority_queue<Step> steps;
    const auto push_best = [&](std::int32_t mi) {
      const Member& m = members[mi];
      const JobRequest& r = c.s.running()[m.ix].request;
      const double here = utility(c.config, r, m, m.level);
      std::optional<Step> best;
      for (std::int32_t size : m.sizes) {
        if (size <= m.level || size - m.level > left) continue;
        const double per_gpu = (utility(c.config, r, m, size) - here) / (size - m.level);
        if (per_gpu > 0 && (!best || per_gpu > std::get<0>(*best))) best = Step{per_gpu, -mi, size};
      }
      if (best) steps.push(*best);
    };
    for (std::int32_t mi = 0; mi < static_cast<std::int32_t>(members.size()); ++mi) push_best(mi);
    while (!steps.empty()) {
      const auto [per_gpu, neg, size] = steps.top();
      steps.pop();
      Member& m = members[-neg];
      if (size <= m.level) continue;  // stale: the member moved since
      if (size - m.level > left) {    // no longer fits: find its best again
        push_best(-neg);
        continue;
      }
      left -= size - m.level;
      m.level = size;
      push_best(-neg);
    }
    polish(c, members, left);
    for (Member& m : members) {
      if (m.level == m.current) continue;
      const JobRequest& r = c.s.running()[m.ix].request;
      m.gain = utility(c.config, r, m, m.level) - utility(c.config, r, m, m.current);
      changed.push_back(std::move(m));
    }
  }

  // Shrinks first: each keeps its first GPUs in (node, index) order, on as few nodes as it
  // had, and gives the rest back for the growths.
  struct Shrink {
    const Member* m;
    std::vector<Plan::Take> kept;
    std::vector<Plan::Take> released;
  };
  std::vector<Shrink> shrinks;
  for (const Member& m : changed) {
    if (m.level >= m.current) continue;
    const RunningJob& job = c.s.running()[m.ix];
    const auto keep = static_cast<std::ptrdiff_t>(m.level);
    Shrink sh{.m = &m,
              .kept = takes_of(c.s, {job.gpus.begin(), job.gpus.begin() + keep}),
              .released = takes_of(c.s, {job.gpus.begin() + keep, job.gpus.end()})};
    c.plan.give_back(sh.released, c.running.tenant[m.ix], job.request.cpus_per_gpu,
                     job.request.memory_per_gpu_mib);
    shrinks.push_back(std::move(sh));
  }
  // Growths, best gain first; each tries its target, then smaller sizes above its current.
  std::vector<const Member*> growers;
  for (const Member& m : changed) {
    if (m.level > m.current) growers.push_back(&m);
  }
  std::stable_sort(growers.begin(), growers.end(),
                   [](const Member* a, const Member* b) { return a->gain > b->gain; });
  std::vector<Resize> grows;
  for (const Member* m : growers) {
    const RunningJob& job = c.s.running()[m->ix];
    const JobRequest& r = job.request;
    const TenantIx tenant = c.running.tenant[m->ix];
    const TypeIx type = c.running.type[m->ix];
    c.gate.enter(c.plan, c.gate.view_for(r));
    for (auto size = m->sizes.rbegin(); size != m->sizes.rend(); ++size) {
      if (*size > m->level) continue;
      if (*size <= m->current) break;
      const std::int32_t extra = *size - m->current;
      if (!admit(c.plan, tenant, type, std::int64_t{1000} * extra, false).ok ||
          c.caps.room(tenant, r.tier) < extra) {
        continue;
      }
      PlaceRequest request = place_request(c, r, type, extra);
      request.topology.mode = core::TopologyMode::kPreferred;
      request.region = c.running.region[m->ix];  // a gang stays in one region
      PlaceMiss miss;
      auto placed = find_placement(c.plan, request, miss);
      if (!placed) continue;
      std::vector<Plan::Take> all = c.running.takes[m->ix];
      all.insert(all.end(), placed->takes.begin(), placed->takes.end());
      if (r.topology.mode == core::TopologyMode::kRequired &&
          !satisfies(c.s, takes_of(c.s, gpus_of(c.s, all)), r.topology.pack)) {
        continue;
      }
      c.plan.take(placed->takes, tenant, r.cpus_per_gpu, r.memory_per_gpu_mib);
      c.caps.add(tenant, r.tier, extra);
      c.running.touched[m->ix] = true;
      grows.push_back(
          {.job = r.id,
           .from_gpus = m->current,
           .to_gpus = *size,
           .gpus = gpus_of(c.s, all),
           .reason =
               cat("grew from ", m->current, " to ", *size, " GPUs: ",
                   times(throughput(r, *m->type, *size) / throughput(r, *m->type, m->current)),
                   " its throughput, where the GPUs add the most (elastic re-allocation)")});
      break;
    }
  }
  // A shrink takes back what no growth took, as far as an allowed size lets it; one left
  // at its size is not resized.
  for (const Shrink& sh : shrinks) {
    const Member& m = *sh.m;
    const JobRequest& r = c.s.running()[m.ix].request;
    std::vector<GpuRef> kept =
        keep_what_is_left(c, m.ix, sh.kept, sh.released, allowed_sizes(r), m.current);
    const auto size = static_cast<std::int32_t>(kept.size());
    if (size == m.current) continue;
    c.running.touched[m.ix] = true;
    // Name the growths that took its GPUs (none: they took the CPUs, memory or power
    // its GPUs' nodes and racks had for them).
    const std::vector<GpuRef> released = gpus_of(c.s, sh.released);
    std::string takers;  // "2, 5, 7"
    std::int32_t count = 0;
    for (const Resize& g : grows) {
      const bool took = std::any_of(g.gpus.begin(), g.gpus.end(), [&](const GpuRef& x) {
        return std::binary_search(released.begin(), released.end(), x) &&
               !std::binary_search(kept.begin(), kept.end(), x);
      });
      if (took) takers += cat(count++ == 0 ? "" : ", ", g.job.value);
    }
    const std::string who = count == 0   ? std::string("jobs, which gain")
                            : count == 1 ? cat("job ", takers, ", which gains")
                                         : cat("jobs ", takers, ", which gain");
    c.out.resizes.push_back({.job = r.id,
                             .from_gpus = m.current,
                             .to_gpus = size,
                             .gpus = std::move(kept),
                             .reason = cat("shrank from ", m.current, " to ", size, " GPUs for ",
                                           who, " more from them (elastic re-allocation)")});
  }
  for (Resize& g : grows) c.out.resizes.push_back(std::move(g));
}

}  // namespace corral::sched::detail
