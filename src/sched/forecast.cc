#include "sched/internal/forecast.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "sched/internal/backfill.h"
#include "sched/internal/cycle.h"

namespace corral::sched::detail {

StartForecast::StartForecast(const Plan& plan, const RunningIndex& running, const Decisions& out,
                             core::Duration grace, core::Time now)
    : plan_(plan), now_(now) {
  const ClusterSnapshot& s = plan.snapshot();
  std::set<std::int64_t> preempted;  // their GPUs are free in the plan already
  for (const Preemption& p : out.preemptions) preempted.insert(p.victim.value);
  std::unordered_map<std::int64_t, std::int32_t> resized;
  for (const Resize& r : out.resizes) resized[r.job.value] = r.to_gpus;
  for (std::int32_t ix = 0; ix < static_cast<std::int32_t>(s.running().size()); ++ix) {
    const RunningJob& job = s.running()[ix];
    if (running.type[ix] < 0 || preempted.contains(job.request.id.value)) continue;
    const auto size = resized.find(job.request.id.value);
    const std::int64_t gpus =
        size != resized.end() ? size->second : static_cast<std::int64_t>(job.gpus.size());
    ends_[{running.type[ix], running.region[ix]}].push_back(
        {expected_end(job, EndBy::kEstimateOrLimit, grace, now), gpus});
  }
  std::unordered_map<std::int64_t, const JobRequest*> placed;
  for (const Placement& p : out.placements) placed[p.job.value] = nullptr;
  for (const PendingJob& job : s.pending()) {
    const auto it = placed.find(job.request.id.value);
    if (it != placed.end()) it->second = &job.request;
  }
  for (const Placement& p : out.placements) {
    const auto node = p.gpus.empty() ? std::nullopt : s.find_node(p.gpus.front().node);
    const auto type = s.find_type(p.gpu_type);
    const JobRequest* r = placed[p.job.value];
    // A share's GPU frees only when its last share ends: like running shares, not counted.
    if (!node || !type || r == nullptr || is_share(*r)) continue;
    ends_[{*type, s.topo()[*node].region}].push_back(
        {now + r->expected_runtime(), static_cast<std::int64_t>(p.gpus.size())});
  }
}

StartForecast::Profile& StartForecast::pool(TypeIx type, RegionIx region) {
  const auto [it, fresh] = pools_.try_emplace({type, region});
  Profile& p = it->second;
  if (!fresh) return p;
  std::int64_t free = plan_.free_in(type, region);
  p.push_back({now_, free});
  auto& ends = ends_[{type, region}];
  std::sort(ends.begin(), ends.end());
  for (const auto& [at, gpus] : ends) {
    free += gpus;
    if (p.back().first == at) {
      p.back().second = free;
    } else {
      p.push_back({at, free});
    }
  }
  return p;
}

std::optional<core::Time> StartForecast::earliest(const Profile& p, std::int64_t gpus,
                                                  core::Duration runtime) {
  if (p.back().second < gpus) return std::nullopt;  // more than the pool ever has
  std::optional<core::Time> start;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p[i].second < gpus) {
      start.reset();
      continue;
    }
    if (!start) start = p[i].first;
    // Free enough from `start` up to the next step; done once that covers the runtime
    // (after the last step, what is free stays free).
    if (i + 1 == p.size() || p[i + 1].first >= *start + runtime) return start;
  }
  return std::nullopt;
}

void StartForecast::take(Profile& p, std::int64_t gpus, core::Time at, core::Duration runtime) {
  // A step at each end of the window, holding what was free there.
  const auto step_at = [&](core::Time t) {
    auto it = std::lower_bound(p.begin(), p.end(), t,
                               [](const auto& step, core::Time x) { return step.first < x; });
    if (it != p.end() && it->first == t) return;
    p.insert(it, {t, std::prev(it)->second});
  };
  step_at(at);
  step_at(at + runtime);
  const auto after = [](const auto& step, core::Time x) { return step.first < x; };
  auto it = std::lower_bound(p.begin(), p.end(), at, after);
  for (; it != p.end() && it->first < at + runtime; ++it) it->second -= gpus;
}

std::optional<core::Time> StartForecast::book(const JobRequest& r,
                                              const std::vector<TypeIx>& types) {
  const ClusterSnapshot& s = plan_.snapshot();
  const std::int64_t gpus = allowed_sizes(r).back();
  const RegionIx region = s.region_of(r);
  if (region == kNoSuchRegion) return std::nullopt;
  std::optional<core::Time> best;
  Profile* best_pool = nullptr;
  for (const TypeIx type : types) {
    for (RegionIx g = 0; g < s.region_count(); ++g) {
      if (region != kAnyRegion && g != region) continue;
      Profile& p = pool(type, g);
      const auto at = earliest(p, gpus, r.expected_runtime());
      if (at && (!best || *at < *best)) {
        best = at;
        best_pool = &p;
      }
    }
  }
  if (best) take(*best_pool, gpus, *best, r.expected_runtime());
  return best;
}

void StartForecast::book_at(const JobRequest& r, TypeIx type, const PlannedStart& head) {
  const ClusterSnapshot& s = plan_.snapshot();
  const auto node = head.gpus.empty() ? std::nullopt : s.find_node(head.gpus.front().node);
  if (!node) return;
  take(pool(type, s.topo()[*node].region), static_cast<std::int64_t>(head.gpus.size()),
       head.expected, r.expected_runtime());
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

}  // namespace corral::sched::detail
