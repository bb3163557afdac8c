#include "sched/internal/order.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace corral::sched::detail {

std::vector<bool> active_tenants(const ClusterSnapshot& s) {
  std::vector<bool> active(s.tenants().size(), false);
  const auto mark = [&](const core::TenantId& id) {
    for (TenantIx t = *s.find_tenant(id); t != -1 && !active[t]; t = s.tenant_tree()[t].parent) {
      active[t] = true;
    }
  };
  for (const RunningJob& j : s.running()) mark(j.request.tenant);
  for (const PendingJob& j : s.pending()) mark(j.request.tenant);
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

double standing(std::int64_t held_milli, double usage, double share, core::Duration half_life) {
  // Decayed usage U of a tenant that has held g weighted GPUs forever tends to
  // g * half_life / ln 2; dividing by that factor expresses U as an average GPU count,
  // in the same unit as what the tenant holds now.
  const double half_life_s = static_cast<double>(half_life.count()) / 1000.0;
  const double usage_gpus = half_life_s > 0 ? usage * std::log(2.0) / half_life_s : 0.0;
  const double held = static_cast<double>(held_milli) / 1000.0;
  return (held + usage_gpus) / share;
}

JobQueue::JobQueue(const ClusterSnapshot& s, const SchedulerConfig& config)
    : s_(s), config_(config) {
  const auto& pending = s.pending();
  const auto older = [&](std::size_t a, std::size_t b) {
    if (pending[a].queued_at != pending[b].queued_at) {
      return pending[a].queued_at < pending[b].queued_at;
    }
    return pending[a].request.id < pending[b].request.id;
  };
  if (config.order == QueueOrder::kFifo) {
    for (std::size_t i = 0; i < pending.size(); ++i) fifo_.push_back(i);
    std::sort(fifo_.begin(), fifo_.end(), [&](std::size_t a, std::size_t b) {
      if (pending[a].request.tier != pending[b].request.tier) {
        return pending[a].request.tier > pending[b].request.tier;
      }
      return older(a, b);
    });
    std::reverse(fifo_.begin(), fifo_.end());  // consumed from the back
    return;
  }
  shares_ = effective_shares(s, active_tenants(s));
  std::map<std::int32_t, std::vector<std::vector<std::size_t>>, std::greater<>> tiers;
  for (std::size_t i = 0; i < pending.size(); ++i) {
    auto& per_tenant = tiers[pending[i].request.tier];
    per_tenant.resize(s.tenants().size());
    per_tenant[*s.find_tenant(pending[i].request.tenant)].push_back(i);
  }
  for (auto& [tier, per_tenant] : tiers) {
    for (auto& jobs : per_tenant) std::sort(jobs.begin(), jobs.end(), older);
    by_tier_.push_back(std::move(per_tenant));
  }
}

double JobQueue::standing_of(const Plan& plan, TenantIx tenant) const {
  return standing(plan.tenant_weighted_held_milli(tenant), s_.usage()[tenant], shares_[tenant],
                  config_.usage_half_life);
}

void JobQueue::enter_tier(const Plan& plan) {
  const auto& per_tenant = by_tier_[tier_];
  cursor_.assign(per_tenant.size(), 0);
  ready_.clear();
  for (TenantIx t = 0; t < static_cast<TenantIx>(per_tenant.size()); ++t) {
    if (!per_tenant[t].empty()) ready_.insert({standing_of(plan, t), t});
  }
  last_ = -1;
  tier_entered_ = true;
}

std::optional<std::pair<std::size_t, double>> JobQueue::next(const Plan& plan) {
  if (config_.order == QueueOrder::kFifo) {
    if (fifo_.empty()) return std::nullopt;
    const std::size_t ix = fifo_.back();
    fifo_.pop_back();
    return std::make_pair(ix, 0.0);
  }
  while (tier_ < by_tier_.size()) {
    if (!tier_entered_) enter_tier(plan);
    // The tenant served last may have placed a job: put it back at its new standing.
    if (last_ != -1 && cursor_[last_] < by_tier_[tier_][last_].size()) {
      ready_.insert({standing_of(plan, last_), last_});
    }
    last_ = -1;
    if (ready_.empty()) {
      ++tier_;
      tier_entered_ = false;
      continue;
    }
    const auto [key, tenant] = *ready_.begin();
    ready_.erase(ready_.begin());
    last_ = tenant;
    return std::make_pair(by_tier_[tier_][tenant][cursor_[tenant]++], key);
  }
  return std::nullopt;
}

}  // namespace corral::sched::detail
