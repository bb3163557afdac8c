#include "sched/internal/order.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "sched/dependencies.h"
#include "sched/internal/preempt.h"
#include "sched/shares.h"

namespace corral::sched::detail {

std::vector<bool> active_tenants(const ClusterSnapshot& s) {
  std::vector<bool> active(s.tenants().size(), false);
  const auto mark = [&](const core::TenantId& id) {
    for (TenantIx t = *s.find_tenant(id); t != -1 && !active[t]; t = s.tenant_tree()[t].parent) {
      active[t] = true;
    }
  };
  for (const RunningJob& j : s.running()) mark(j.request.tenant);
  // A job that waits for its dependencies is not in line: its tenant is not active for it.
  for (const PendingJob& j : s.pending()) {
    if (dependencies_met(j.dependencies)) mark(j.request.tenant);
  }
  return active;
}

std::vector<double> effective_shares(const ClusterSnapshot& s, const std::vector<bool>& active) {
  const auto& tenants = s.tenants();
  const auto& tree = s.tenant_tree();
  std::vector<double> share(tenants.size(), 0.0);
  // Top-down: a parent's share is known before its children's, since the tree is
  // walked from the roots.
  const auto split = [&](const std::vector<TenantIx>& siblings, double parent_share,
                         auto&& self) -> void {
    double total = 0;
    for (TenantIx t : siblings) {
      if (active[t]) total += tenants[t].weight;
    }
    for (TenantIx t : siblings) {
      if (!active[t]) continue;
      share[t] = parent_share * tenants[t].weight / total;
      self(tree[t].children, share[t], self);
    }
  };
  std::vector<TenantIx> roots;
  for (TenantIx t = 0; t < static_cast<TenantIx>(tenants.size()); ++t) {
    if (tree[t].parent == -1) roots.push_back(t);
  }
  split(roots, 1.0, split);
  return share;
}

double usage_as_gpus(double usage, core::Duration half_life) {
  // Decayed usage U of a tenant that has held g weighted GPUs forever tends to
  // g * half_life / ln 2; dividing by that factor expresses U as an average GPU count,
  // in the same unit as what the tenant holds now.
  const double half_life_s = static_cast<double>(half_life.count()) / 1000.0;
  return half_life_s > 0 ? usage * std::log(2.0) / half_life_s : 0.0;
}

double standing(std::int64_t held_milli, double usage, double share, core::Duration half_life) {
  const double held = static_cast<double>(held_milli) / 1000.0;
  return (held + usage_as_gpus(usage, half_life)) / share;
}

JobQueue::JobQueue(const ClusterSnapshot& s, const SchedulerConfig& config, core::Time now)
    : s_(s), config_(config) {
  const auto& pending = s.pending();
  // Only jobs whose dependencies are met are queued (dependencies.h); their age counts
  // from when they were.
  std::vector<std::size_t> queued;
  since_.assign(pending.size(), core::Time{});
  for (std::size_t i = 0; i < pending.size(); ++i) {
    if (!dependencies_met(pending[i].dependencies)) continue;
    queued.push_back(i);
    since_[i] = queued_since(pending[i]);
  }
  const std::vector<core::Time>& since = since_;
  const auto older = [&](std::size_t a, std::size_t b) {
    if (since[a] != since[b]) return since[a] < since[b];
    return pending[a].request.id < pending[b].request.id;
  };
  yielded_.assign(pending.size(), false);
  std::vector<bool> starved(pending.size(), false);
  for (std::size_t i : queued) {
    starved[i] = config.starvation_age.count() > 0 && now - since[i] >= config.starvation_age;
    if (starved[i]) starved_by_age_.push_back(i);
  }
  std::sort(starved_by_age_.begin(), starved_by_age_.end(), [&](std::size_t a, std::size_t b) {
    if (pending[a].request.tier != pending[b].request.tier) {
      return pending[a].request.tier > pending[b].request.tier;
    }
    return older(a, b);
  });
  if (config.order != QueueOrder::kFairShare) {
    // Fixed orders: tier, then (attained-service level,) then age.
    const auto level = [&](std::size_t i) {
      return config.order == QueueOrder::kAttainedService
                 ? las_level(config, pending[i].attained_gpu_seconds)
                 : 0;
    };
    fifo_ = queued;
    std::sort(fifo_.begin(), fifo_.end(), [&](std::size_t a, std::size_t b) {
      if (pending[a].request.tier != pending[b].request.tier) {
        return pending[a].request.tier > pending[b].request.tier;
      }
      if (level(a) != level(b)) return level(a) < level(b);
      return older(a, b);
    });
    std::reverse(fifo_.begin(), fifo_.end());
    return;
  }
  shares_ = effective_shares(s, active_tenants(s));
  std::map<std::int32_t, std::pair<std::vector<std::size_t>, std::vector<std::vector<std::size_t>>>,
           std::greater<>>
      tiers;
  // Inside a tenant: its starved jobs first, oldest first (so least attained service
  // cannot starve a tenant's long jobs behind its short ones), then the least attained
  // service in discrete levels (Tiresias' 2D-LAS: a new job goes ahead of a preempted
  // long one), then age.
  rank_.assign(pending.size(), 0);
  for (std::size_t i : queued) {
    auto& [tier_starved, per_tenant] = tiers[pending[i].request.tier];
    per_tenant.resize(s.tenants().size());
    if (starved[i]) tier_starved.push_back(i);
    rank_[i] = starved[i] ? -1 : las_level(config, pending[i].attained_gpu_seconds);
    per_tenant[*s.find_tenant(pending[i].request.tenant)].push_back(i);
  }
  const auto within_tenant = [&](std::size_t a, std::size_t b) {
    return rank_[a] != rank_[b] ? rank_[a] < rank_[b] : older(a, b);
  };
  served_.assign(pending.size(), false);
  for (std::size_t n = 0; n < s.nodes().size(); ++n) {
    const TypeIx type = s.topo()[n].type;
    if (type < 0) continue;
    capacity_milli_ += static_cast<double>(std::popcount(s.topo()[n].usable_mask) *
                                           usage_milli(s.gpu_types()[type]));
  }
  for (auto& [tier, lists] : tiers) {
    auto& [tier_starved, per_tenant] = lists;
    for (auto& jobs : per_tenant) std::sort(jobs.begin(), jobs.end(), within_tenant);
    std::sort(tier_starved.begin(), tier_starved.end(), older);
    std::reverse(tier_starved.begin(), tier_starved.end());
    starved_.push_back(std::move(tier_starved));
    by_tier_.push_back(std::move(per_tenant));
  }
}

bool JobQueue::may_promise(const Plan& plan, std::size_t ix) {
  while (promise_next_ < starved_by_age_.size()) {
    const std::size_t turn = starved_by_age_[promise_next_];
    const bool has_share = config_.order == QueueOrder::kFairShare &&
                           !under_share(plan, *s_.find_tenant(s_.pending()[turn].request.tenant));
    if (turn == ix && !has_share) return true;
    // ix itself was yielded just now: only the jobs before it in turn can have had theirs.
    const bool passed = turn == ix || yielded_[turn] || has_share;
    if (!passed) return false;  // an older starved job of an under-served tenant comes first
    ++promise_next_;
    if (turn == ix) return false;  // its tenant holds its share: passed over this cycle
  }
  return false;
}

bool JobQueue::under_share(const Plan& plan, TenantIx tenant) const {
  return static_cast<double>(plan.tenant_weighted_held_milli(tenant)) <
         shares_[tenant] * capacity_milli_;
}

double JobQueue::standing_of(const Plan& plan, TenantIx tenant) const {
  return standing(plan.tenant_weighted_held_milli(tenant), s_.usage()[tenant], shares_[tenant],
                  config_.usage_half_life);
}

void JobQueue::insert_ready(const Plan& plan, TenantIx tenant) {
  ready_key_.resize(s_.tenants().size());
  ready_key_[tenant] = standing_of(plan, tenant);
  ready_.insert({ready_key_[tenant], tenant});
}

void JobQueue::refresh(const Plan& plan, TenantIx tenant) {
  if (config_.order != QueueOrder::kFairShare || !tier_entered_) return;
  if (ready_.erase({ready_key_.size() > static_cast<size_t>(tenant) ? ready_key_[tenant] : 0,
                    tenant}) == 1) {
    insert_ready(plan, tenant);
  }
}

// Below strict fairness, every tenant whose standing is within the slack of the lowest
// may go next, and of those the tenant whose next job would go first in a queue without
// tenants (least attained service, then age) does: fairness 1 is strict weighted fair
// share, 0 ignores tenants. The slack is in fair shares of the fleet: (1 - f) / f of one.
std::set<std::pair<double, TenantIx>>::const_iterator JobQueue::pick_ready() const {
  auto pick = ready_.begin();
  if (config_.fairness >= 1.0) return pick;
  const double capacity = capacity_milli_ / 1000.0;
  const double slack = config_.fairness > 0 ? (1.0 - config_.fairness) / config_.fairness * capacity
                                            : std::numeric_limits<double>::infinity();
  const auto& pending = s_.pending();
  const auto next_job = [&](TenantIx t) { return by_tier_[tier_][t][cursor_[t]]; };
  const auto ahead = [&](std::size_t a, std::size_t b) {
    if (rank_[a] != rank_[b]) return rank_[a] < rank_[b];
    return std::tie(since_[a], pending[a].request.id) < std::tie(since_[b], pending[b].request.id);
  };
  for (auto it = std::next(ready_.begin()); it != ready_.end(); ++it) {
    if (it->first > ready_.begin()->first + slack) break;
    if (ahead(next_job(it->second), next_job(pick->second))) pick = it;
  }
  return pick;
}

void JobQueue::skip_served(TenantIx tenant) {
  const auto& jobs = by_tier_[tier_][tenant];
  while (cursor_[tenant] < jobs.size() && served_[jobs[cursor_[tenant]]]) ++cursor_[tenant];
}

void JobQueue::enter_tier(const Plan& plan) {
  const auto& per_tenant = by_tier_[tier_];
  cursor_.assign(per_tenant.size(), 0);
  ready_.clear();
  for (TenantIx t = 0; t < static_cast<TenantIx>(per_tenant.size()); ++t) {
    skip_served(t);
    if (cursor_[t] < per_tenant[t].size()) insert_ready(plan, t);
  }
  last_ = -1;
  tier_entered_ = true;
}

std::optional<std::pair<std::size_t, double>> JobQueue::next(const Plan& plan) {
  if (config_.order != QueueOrder::kFairShare) {
    if (fifo_.empty()) return std::nullopt;
    const std::size_t ix = fifo_.back();
    fifo_.pop_back();
    yielded_[ix] = true;
    return std::make_pair(ix, 0.0);
  }
  while (tier_ < by_tier_.size()) {
    // Starved jobs of under-served tenants first, oldest first; the tier's fair-share
    // standings are taken after them, so they see what those got. A starved job whose
    // tenant has its share waits for its tenant's turn like any other.
    while (!tier_entered_ && !starved_[tier_].empty()) {
      const std::size_t ix = starved_[tier_].back();
      starved_[tier_].pop_back();
      const TenantIx tenant = *s_.find_tenant(s_.pending()[ix].request.tenant);
      if (!under_share(plan, tenant)) continue;
      served_[ix] = true;
      yielded_[ix] = true;
      return std::make_pair(ix, standing_of(plan, tenant));
    }
    if (!tier_entered_) enter_tier(plan);
    // The tenant served last may have placed a job: put it back at its new standing.
    if (last_ != -1) skip_served(last_);
    if (last_ != -1 && cursor_[last_] < by_tier_[tier_][last_].size()) insert_ready(plan, last_);
    last_ = -1;
    if (ready_.empty()) {
      ++tier_;
      tier_entered_ = false;
      continue;
    }
    const auto pick = pick_ready();
    const auto [key, tenant] = *pick;
    ready_.erase(pick);
    last_ = tenant;
    const std::size_t ix = by_tier_[tier_][tenant][cursor_[tenant]++];
    served_[ix] = true;
    yielded_[ix] = true;
    return std::make_pair(ix, key);
  }
  return std::nullopt;
}

}  // namespace corral::sched::detail

namespace corral::sched {

std::vector<TenantShare> tenant_shares(const ClusterSnapshot& s, const SchedulerConfig& config) {
  const std::vector<bool> active = detail::active_tenants(s);
  const std::vector<double> shares = detail::effective_shares(s, active);
  std::vector<TenantShare> out;
  out.reserve(s.tenants().size());
  for (std::size_t t = 0; t < s.tenants().size(); ++t) {
    out.push_back({.tenant = s.tenants()[t].id,
                   .active = active[t],
                   .share = shares[t],
                   .usage_gpus = detail::usage_as_gpus(s.usage()[t], config.usage_half_life)});
  }
  return out;
}

}  // namespace corral::sched
