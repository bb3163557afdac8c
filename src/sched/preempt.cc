// Victim selection. For a blocked job P and a GPU type:
//
//  1. Candidates are running jobs on that type (and in P's region, if it names one: GPUs
//     freed elsewhere are of no use to it) that P may take GPUs from:
//       - an elastic job above its minimum, of P's tier or lower: shrunk to its minimum
//         (rank 0: always before anyone is preempted);
//       - a borrowed job of another tenant, of P's tier or lower, while P stays inside its
//         guarantee, or a preemptible job outside P's open reservation holding some of
//         its GPUs (rank 1: reclaiming);
//       - a preemptible job of a lower tier, or under attained-service order a
//         preemptible job at a higher service level, or under fair-share order a job of
//         P's own tenant at a higher service level that loses little work when stopped,
//         or a job in no reservation still holding GPUs of P's open reservation (it ran
//         into the window) (rank 2).
//     Protected, never candidates: interactive sessions, jobs already stopping, jobs that ran less
//     than min_runtime, jobs preempted max_preemptions_per_job times already (except by a
//     reservation taking its GPUs back: a job that took reserved GPUs was only lent
//     them, and the cap would otherwise keep the reservation from its GPUs for as long
//     as the job runs).
//  2. Domains (nodes for a gang that fits one node; then NVLink racks, leaves, spines,
//     the cluster, as P's topology allows) are ranked by a greedy estimate of the cost to
//     open them; the best few are tried for real: candidates touching the domain are
//     released in (rank, lost work per GPU) order until P can be placed; then every
//     victim that P can do without is put back, most expensive first, so no preemption is
//     useless. The cheapest result (worst rank, then lost work) wins.
#include "sched/internal/preempt.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <tuple>

#include "sched/dependencies.h"
#include "sched/internal/text.h"

namespace corral::sched::detail {
namespace {

constexpr std::size_t kDomainsTried = 4;

// The reason a chosen victim gives. Written only for the victims of the plan returned:
// formatting it for every candidate of every search cost more than the search.
std::string reason_of(const ClusterSnapshot& s, const Victim& v, const Preemptor& p, TypeIx type,
                      core::Time now) {
  const JobRequest& pr = p.job->request;
  switch (v.kind) {
    case VictimKind::kShrink:
      return cat("shrunk from ", s.running()[v.running_ix].gpus.size(), " to ",
                 s.running()[v.running_ix].request.elastic->min_gpus, " GPUs for job ",
                 pr.id.value);
    case VictimKind::kReclaim:
      return cat("reclaimed: tenant ", pr.tenant.value, " takes back its guaranteed ",
                 s.gpu_types()[type].id.value, " for job ", pr.id.value);
    case VictimKind::kReservation:
      return cat("reservation ", pr.reservation->value, " opened for job ", pr.id.value);
    case VictimKind::kReservationOverrun:
      return cat("reservation ", pr.reservation->value, " opened for job ", pr.id.value,
                 " while this job still held its GPUs");
    case VictimKind::kTier:
      return cat("preempted for job ", pr.id.value, " (tier ", pr.tier, ")");
    case VictimKind::kAttainedService:
      return cat("preempted for job ", pr.id.value, " (less attained service)");
    case VictimKind::kStarved:
      return cat("preempted for job ", pr.id.value, ", which waited ",
                 format_wait((now - queued_since(*p.job)).count()), " and started after it");
  }
  return {};
}

// Whether any of `takes` is a GPU the preemptor may not use.
bool forbids(const Preemptor& p, const std::vector<Plan::Take>& takes) {
  if (p.forbidden == nullptr) return false;
  return std::any_of(takes.begin(), takes.end(),
                     [&](const Plan::Take& t) { return (t.mask & (*p.forbidden)[t.node]) != 0; });
}

// Whether any of `takes` is a GPU the preemptor may use.
bool allows_some(const Preemptor& p, const std::vector<Plan::Take>& takes) {
  if (p.forbidden == nullptr) return !takes.empty();
  return std::any_of(takes.begin(), takes.end(),
                     [&](const Plan::Take& t) { return (t.mask & ~(*p.forbidden)[t.node]) != 0; });
}

// Whether running job `v` may give GPUs to `p`, and as which victim.
std::optional<Victim> candidate(const ClusterSnapshot& s, const RunningIndex& running,
                                std::int32_t ix, const Preemptor& p, const PlaceRequest& request,
                                const SchedulerConfig& config, core::Time now) {
  const RunningJob& v = s.running()[ix];
  const JobRequest& pr = p.job->request;
  if (running.touched[ix] || v.stopping || running.type[ix] != request.type) return std::nullopt;
  // A session is a person at a terminal on their tenant's own GPUs: only its idle timeout
  // ends it (docs/sessions.md), never another job, not even its own tenant's.
  if (is_session(v.request)) return std::nullopt;
  if (request.region != kAnyRegion && running.region[ix] != request.region) return std::nullopt;
  if (now - v.started_at < config.preemption.min_runtime_for(v.request.tier)) return std::nullopt;

  Victim out{.running_ix = ix};
  out.lost_gpu_seconds = lost_gpu_seconds(v, now);
  const auto current = static_cast<std::int32_t>(v.gpus.size());
  if (v.request.elastic && current > v.request.elastic->min_gpus && pr.tier >= v.request.tier) {
    // Shrink to the minimum, keeping the first GPUs in (node, index) order, which keeps
    // the job on as few nodes as it had.
    const auto keep = static_cast<std::size_t>(v.request.elastic->min_gpus);
    std::vector<GpuRef> kept(v.gpus.begin(), v.gpus.begin() + static_cast<std::ptrdiff_t>(keep));
    std::vector<GpuRef> freed(v.gpus.begin() + static_cast<std::ptrdiff_t>(keep), v.gpus.end());
    std::sort(kept.begin(), kept.end());
    out.shrink = true;
    out.kept = takes_of(s, kept);
    out.released = takes_of(s, freed);
    out.rank = 0;
    out.kind = VictimKind::kShrink;
    if (forbids(p, out.released)) return std::nullopt;
    return out;
  }
  // A job of an open reservation claims its GPUs back even past the preemption cap.
  const bool claims = p.reservation_masks != nullptr;
  const bool capped = v.preemptions >= config.preemption.max_preemptions_per_job;
  if (capped && !claims) return std::nullopt;
  // Checked on the running index's copy; copied into the victim only if it is one (this
  // runs for every running job in every preemption search).
  const std::vector<Plan::Take>& takes = running.takes[ix];
  bool on_reservation = false;
  if (claims) {
    for (const Plan::Take& t : takes) {
      if ((t.mask & (*p.reservation_masks)[t.node]) != 0) on_reservation = true;
    }
  }
  // A victim's GPUs that the preemptor may not use stay out of its reach (try_domain hides
  // them). Only a reservation's claim may straddle its edge: a job that took the last,
  // partly reserved node's GPUs must not keep the reservation from them.
  if (on_reservation ? !allows_some(p, takes) : forbids(p, takes)) return std::nullopt;

  const bool stranger = running.tenant[ix] != p.tenant;
  const bool in_this_reservation = v.reservation.has_value() && v.reservation == pr.reservation;
  if (on_reservation && !in_this_reservation && v.request.preemptible) {
    out.rank = 1;
    out.kind = VictimKind::kReservation;
  } else if (on_reservation && !v.reservation && !v.request.preemptible) {
    // Placed before the window because its max runtime ended in time (or before the
    // reservation existed), and still there: it yields, after the preemptible ones.
    out.rank = 2;
    out.kind = VictimKind::kReservationOverrun;
  } else if (capped) {
    return std::nullopt;
  } else if (stranger && running.borrowed[ix] && p.within_guarantee && v.request.tier <= pr.tier) {
    // Reclaiming never reaches up a tier: a job may take back its tenant's guarantee from
    // borrowers of its own tier or below. (Otherwise a low-tier job reclaims from a
    // high-tier borrower, which preempts it back by tier: a cycle.)
    out.rank = 1;
    out.kind = VictimKind::kReclaim;
  } else if (v.request.preemptible && pr.tier > v.request.tier) {
    out.rank = 2;
    out.kind = VictimKind::kTier;
  } else if (config.order == QueueOrder::kAttainedService && v.request.preemptible &&
             pr.tier >= v.request.tier && p.level < las_level(config, v.attained_gpu_seconds)) {
    out.rank = 2;
    out.kind = VictimKind::kAttainedService;
  } else if (!stranger && less_served_within_tenant(config, p, v, now)) {
    out.rank = 2;
    out.kind = VictimKind::kAttainedService;
  } else if (p.due && v.request.tier <= pr.tier && v.started_at > queued_since(*p.job)) {
    out.rank = 2;
    out.kind = VictimKind::kStarved;
  } else {
    return std::nullopt;
  }
  out.released = takes;
  return out;
}

std::int32_t gpus_in(const std::vector<Plan::Take>& takes) {
  std::int32_t n = 0;
  for (const Plan::Take& t : takes) n += std::popcount(t.mask);
  return n;
}

// The domain ids at `level` that a victim's released GPUs touch.
std::vector<std::int32_t> domains_of(const ClusterSnapshot& s, const std::vector<Plan::Take>& takes,
                                     std::optional<Level> level) {
  std::vector<std::int32_t> out;
  for (const Plan::Take& t : takes) {
    const NodeTopo& topo = s.topo()[t.node];
    std::int32_t d = t.node;
    if (level == Level::kNvlRack) d = topo.nvl_rack;
    if (level == Level::kLeaf) d = topo.leaf;
    if (level == Level::kSpine) d = topo.spine;
    if (level == Level::kCluster) d = topo.cluster;
    if (d >= 0 && std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
  }
  return out;
}

struct Cost {
  int rank = 0;
  double lost = 0;
  friend bool operator<(const Cost& a, const Cost& b) {
    return std::tie(a.rank, a.lost) < std::tie(b.rank, b.lost);
  }
};

// Tries one domain: releases its candidates cheapest first until the request fits, then
// prunes. Leaves the plan as it found it.
std::optional<std::pair<PreemptionPlan, Cost>> try_domain(
    Plan& plan, const std::vector<Victim>& candidates, const std::vector<std::size_t>& order,
    const PlaceRequest& request, const std::vector<std::uint64_t>* forbidden) {
  const ClusterSnapshot& s = plan.snapshot();
  const Plan::Mark mark = plan.mark();
  // What a released victim frees where the preemptor may not go stays blocked, per
  // candidate, so that retaking can unblock exactly that first.
  std::vector<std::vector<Plan::Take>> hidden(candidates.size());
  const auto release = [&](std::size_t c) {
    const Victim& v = candidates[c];
    const JobRequest& r = s.running()[v.running_ix].request;
    plan.give_back(v.released, *s.find_tenant(r.tenant), r.cpus_per_gpu, r.memory_per_gpu_mib);
    hidden[c].clear();
    if (forbidden == nullptr) return;
    for (const Plan::Take& t : v.released) {
      const std::uint64_t m = t.mask & (*forbidden)[t.node] & plan.free_mask(t.node);
      if (m != 0) hidden[c].push_back({t.node, m});
    }
    plan.block(hidden[c]);
  };
  const auto retake = [&](std::size_t c) {
    const Victim& v = candidates[c];
    const JobRequest& r = s.running()[v.running_ix].request;
    plan.unblock(hidden[c]);
    plan.take(v.released, *s.find_tenant(r.tenant), r.cpus_per_gpu, r.memory_per_gpu_mib);
  };
  PlaceMiss miss;
  std::vector<std::size_t> chosen;
  bool fits = false;
  for (std::size_t c : order) {
    release(c);
    chosen.push_back(c);
    if (plan.free_in(request.type, request.region) < request.gpus) continue;
    if (find_placement(plan, request, miss)) {
      fits = true;
      break;
    }
  }
  if (!fits) {
    plan.rollback(mark);
    return std::nullopt;
  }
  // Prune: put back every victim the job can do without, most expensive first.
  std::vector<std::size_t> kept_victims;
  for (auto it = chosen.rbegin(); it != chosen.rend(); ++it) {
    retake(*it);
    if (find_placement(plan, request, miss)) continue;  // not needed
    release(*it);
    kept_victims.push_back(*it);
  }
  std::optional<PlaceResult> placed = find_placement(plan, request, miss);
  CORRAL_CHECK(placed.has_value());
  PreemptionPlan out{.placement = std::move(*placed)};
  Cost cost;
  for (std::size_t c : kept_victims) {
    // Every victim left is needed; one whose GPUs the placement does not use was needed
    // for something else (its rack's power, its node's CPUs). Preempting a job for that
    // is not worth it, and the rule stays simple: a victim's GPUs go to the job.
    if (!overlaps(candidates[c].released, out.placement.takes)) {
      plan.rollback(mark);
      return std::nullopt;
    }
    out.victims.push_back(candidates[c]);
    cost.rank = std::max(cost.rank, candidates[c].rank);
    cost.lost += candidates[c].lost_gpu_seconds;
  }
  std::sort(out.victims.begin(), out.victims.end(),
            [](const Victim& a, const Victim& b) { return a.running_ix < b.running_ix; });
  plan.rollback(mark);
  return std::make_pair(std::move(out), cost);
}

}  // namespace

bool must_pay(const Victim& v, const SchedulerConfig& config) {
  // Corral's own order only: the baselines (FIFO, Tiresias) keep their textbook rules.
  return config.order == QueueOrder::kFairShare &&
         (v.kind == VictimKind::kReclaim || v.kind == VictimKind::kStarved ||
          v.kind == VictimKind::kAttainedService);
}

std::int32_t las_level(const SchedulerConfig& config, double gpu_seconds) {
  std::int32_t level = 0;
  for (double threshold : config.las_thresholds_gpu_seconds) {
    if (gpu_seconds >= threshold) ++level;
  }
  return level;
}

bool less_served_within_tenant(const SchedulerConfig& config, const Preemptor& p,
                               const RunningJob& victim, core::Time now) {
  const double max_loss_s =
      static_cast<double>(config.preemption.attained_service_max_loss.count()) / 1000.0;
  return config.order == QueueOrder::kFairShare && max_loss_s > 0 &&
         p.job->request.tier >= victim.request.tier &&
         p.level < las_level(config, victim.attained_gpu_seconds) &&
         lost_gpu_seconds(victim, now) <= max_loss_s * static_cast<double>(victim.gpus.size());
}

double lost_gpu_seconds(const RunningJob& job, core::Time now) {
  const core::Time since =
      job.last_checkpoint_at ? std::max(*job.last_checkpoint_at, job.started_at) : job.started_at;
  const double seconds =
      static_cast<double>((now - since).count() + job.request.restore_time.count()) / 1000.0;
  return std::max(seconds, 0.0) * static_cast<double>(job.gpus.size());
}

std::optional<PreemptionPlan> find_preemption(Plan& plan, const RunningIndex& running,
                                              const PlaceRequest& request,
                                              const Preemptor& preemptor,
                                              const SchedulerConfig& config, core::Time now) {
  const ClusterSnapshot& s = plan.snapshot();
  // 1. Candidates, cheapest first: rank, then lost work per GPU freed, then job id. Only
  //    the running jobs of the request's type that could be candidates for this preemptor
  //    are visited (each blocked job used to scan every running job): elastic jobs;
  //    borrowers, when it reclaims its guarantee; preemptible jobs, when it has a
  //    reservation, a higher tier than some of them, or attained-service order.
  const RunningIndex::ByType& lists = running.by_type[request.type];
  const JobRequest& pr = preemptor.job->request;
  std::vector<std::int32_t> visit = lists.elastic;
  std::size_t sources = visit.empty() ? 0 : 1;
  // A reservation's claim reaches any job on its GPUs, preemptible or not, and a due
  // promise any job that started after it was queued: every running job of the type (rare
  // enough not to need a list of their own), which holds every list below.
  const bool every_job = preemptor.reservation_masks != nullptr || preemptor.due;
  if (every_job) {
    visit.clear();
    for (std::int32_t ix = 0; ix < static_cast<std::int32_t>(running.type.size()); ++ix) {
      if (running.type[ix] == request.type) visit.push_back(ix);
    }
    sources = 0;
  }
  if (!every_job && preemptor.within_guarantee && !lists.borrowed.empty()) {
    visit.insert(visit.end(), lists.borrowed.begin(), lists.borrowed.end());
    ++sources;
  }
  if (!every_job &&
      (config.order == QueueOrder::kAttainedService || pr.tier > lists.min_preemptible_tier) &&
      !lists.preemptible.empty()) {
    visit.insert(visit.end(), lists.preemptible.begin(), lists.preemptible.end());
    ++sources;
  }
  if (!every_job && config.order == QueueOrder::kFairShare &&
      config.preemption.attained_service_max_loss.count() > 0 &&
      !lists.by_tenant[preemptor.tenant].empty()) {
    const std::vector<std::int32_t>& own = lists.by_tenant[preemptor.tenant];
    visit.insert(visit.end(), own.begin(), own.end());
    ++sources;
  }
  if (sources > 1) {
    std::sort(visit.begin(), visit.end());
    visit.erase(std::unique(visit.begin(), visit.end()), visit.end());
  }
  std::vector<Victim> candidates;
  std::int32_t candidate_gpus = 0;
  for (std::int32_t ix : visit) {
    if (auto v = candidate(s, running, ix, preemptor, request, config, now)) {
      candidate_gpus += gpus_in(v->released);
      candidates.push_back(std::move(*v));
    }
  }
  // Every domain's free GPUs are at most the type's (in the request's region), so when all
  // the candidates together with every such free GPU fall short, no domain below can be
  // opened.
  if (candidates.empty() ||
      plan.free_in(request.type, request.region) + candidate_gpus < request.gpus) {
    return std::nullopt;
  }
  std::vector<std::size_t> by_cost(candidates.size());
  for (std::size_t i = 0; i < by_cost.size(); ++i) by_cost[i] = i;
  std::sort(by_cost.begin(), by_cost.end(), [&](std::size_t a, std::size_t b) {
    const Victim& x = candidates[a];
    const Victim& y = candidates[b];
    const double px = x.lost_gpu_seconds / std::max(gpus_in(x.released), 1);
    const double py = y.lost_gpu_seconds / std::max(gpus_in(y.released), 1);
    return std::tie(x.rank, px, x.running_ix) < std::tie(y.rank, py, y.running_ix);
  });

  // 2. Levels to search, tightest first, as the topology allows.
  const bool required = request.topology.mode == core::TopologyMode::kRequired;
  const core::PackLevel want = request.topology.pack;
  std::vector<std::optional<Level>> levels;  // nullopt: single nodes
  if ((request.per_node == 0 || request.per_node == request.gpus) &&
      request.gpus <= s.max_node_gpus(request.type)) {
    levels.push_back(std::nullopt);
  }
  if (request.per_node != request.gpus) {
    const bool node_only = required && want == core::PackLevel::kNode;
    const bool nvlink_only = required && want == core::PackLevel::kNvlink;
    if (!node_only) levels.push_back(Level::kNvlRack);
    if (!node_only && !nvlink_only) {
      levels.push_back(Level::kLeaf);
      if (!required || want != core::PackLevel::kLeaf) levels.push_back(Level::kSpine);
      if (!required || want == core::PackLevel::kNone) levels.push_back(Level::kCluster);
    }
  }

  for (const std::optional<Level>& level : levels) {
    // Per domain: free GPUs now, and the candidates touching it in cost order.
    std::map<std::int32_t, std::vector<std::size_t>> touching;
    for (std::size_t c : by_cost) {
      for (std::int32_t d : domains_of(s, candidates[c].released, level)) touching[d].push_back(c);
    }
    struct Option {
      Cost estimate;
      std::int32_t domain;
    };
    std::vector<Option> options;
    for (const auto& [d, list] : touching) {
      // A candidate's region is its first node's; one that holds GPUs in two regions
      // (placed before its nodes were relabelled) may touch domains elsewhere, which
      // cannot hold the request.
      const RegionIx in = level ? plan.domain_region(*level, d) : s.topo()[d].region;
      if (request.region != kAnyRegion && in != request.region) continue;
      std::int32_t avail = level ? plan.stats(*level, d, request.type).free : plan.free_count(d);
      Cost est;
      for (std::size_t c : list) {
        if (avail >= request.gpus) break;
        avail += gpus_in(candidates[c].released);
        est.rank = std::max(est.rank, candidates[c].rank);
        est.lost += candidates[c].lost_gpu_seconds;
      }
      if (avail >= request.gpus) options.push_back({est, d});
    }
    std::sort(options.begin(), options.end(), [](const Option& a, const Option& b) {
      return std::tie(a.estimate, a.domain) < std::tie(b.estimate, b.domain);
    });
    std::optional<std::pair<PreemptionPlan, Cost>> best;
    for (std::size_t i = 0; i < options.size() && i < kDomainsTried; ++i) {
      auto result =
          try_domain(plan, candidates, touching[options[i].domain], request, preemptor.forbidden);
      if (result && (!best || result->second < best->second)) best = std::move(result);
    }
    if (best) {
      for (Victim& v : best->first.victims)
        v.reason = reason_of(s, v, preemptor, request.type, now);
      return std::move(best->first);
    }
  }
  return std::nullopt;
}

}  // namespace corral::sched::detail
