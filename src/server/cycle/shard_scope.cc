#include "server/cycle/shard_scope.h"

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

namespace corral::server {

std::set<std::string> narrow_to_shard(sched::SnapshotInput& in, const ShardMap& map, int shard) {
  std::set<std::string> own;
  for (auto& node : in.nodes) {
    if (map.shard_of(node) == shard) {
      own.insert(node.id.value);
    } else {
      node.admin = core::NodeAdminState::kCordoned;  // its own shard drains it, not us
    }
  }
  std::erase_if(in.pending, [&](const sched::PendingJob& job) {
    return map.route(route_query(job.request)).shard != shard;
  });
  return own;
}

std::int64_t drop_placements(sched::Decisions& d,
                             const std::function<bool(const sched::Placement&)>& drop) {
  std::set<std::int64_t> dropped;
  std::erase_if(d.placements, [&](const sched::Placement& p) {
    if (!drop(p)) return false;
    dropped.insert(p.job.value);
    return true;
  });
  if (dropped.empty()) return 0;
  // A victim stays if a placement that is kept waits for it.
  std::set<std::int64_t> awaited;
  for (const auto& p : d.placements) {
    for (const auto& j : p.waits_for) awaited.insert(j.value);
  }
  std::erase_if(d.preemptions, [&](const sched::Preemption& x) {
    return dropped.contains(x.for_job.value) && !awaited.contains(x.victim.value);
  });
  std::erase_if(d.resizes, [&](const sched::Resize& r) {
    return r.for_job && dropped.contains(r.for_job->value) && !awaited.contains(r.job.value);
  });
  return static_cast<std::int64_t>(dropped.size());
}

std::int64_t keep_own_decisions(sched::Decisions& d, const sched::ClusterSnapshot& snapshot,
                                const std::set<std::string>& own_nodes) {
  std::set<std::int64_t> foreign;
  for (const auto& job : snapshot.running()) {
    const bool own = std::all_of(job.gpus.begin(), job.gpus.end(), [&](const sched::GpuRef& g) {
      return own_nodes.contains(g.node.value);
    });
    if (!own) foreign.insert(job.request.id.value);
  }
  if (foreign.empty()) return 0;
  std::int64_t count = 0;
  count += std::erase_if(
      d.preemptions, [&](const sched::Preemption& x) { return foreign.contains(x.victim.value); });
  count += std::erase_if(d.resizes,
                         [&](const sched::Resize& r) { return foreign.contains(r.job.value); });
  count += drop_placements(d, [&](const sched::Placement& p) {
    return std::any_of(p.waits_for.begin(), p.waits_for.end(),
                       [&](const core::JobId& j) { return foreign.contains(j.value); });
  });
  return count;
}

namespace {
// What a placement holds, in thousandths of a GPU.
std::int64_t placed_milli(const sched::Placement& p) {
  return static_cast<std::int64_t>(p.gpus.size()) * (p.share_milli > 0 ? p.share_milli : 1000);
}
}  // namespace

core::Result<QuotaRecount> recount_quotas(store::SchedulerRepo& scheduler, sched::Decisions& d,
                                          const sched::ClusterSnapshot& snapshot,
                                          const StoreView& view) {
  QuotaRecount out;
  if (d.placements.empty()) return out;
  using Key = std::pair<std::string, std::string>;  // (tenant, GPU type)
  std::map<std::int64_t, const core::TenantId*> tenant_of;
  for (const auto& job : snapshot.pending()) tenant_of[job.request.id.value] = &job.request.tenant;
  const auto key_of = [&](const sched::Placement& p) -> std::optional<Key> {
    const auto t = tenant_of.find(p.job.value);
    if (t == tenant_of.end()) return std::nullopt;
    return Key{t->second->value, p.gpu_type.value};
  };
  // What this cycle placed, and what it saw held, by (tenant, type), in thousandths of a
  // GPU (a share counts its share).
  std::map<Key, std::int64_t> placed, seen;
  std::vector<core::TenantId> tenants;
  for (const auto& p : d.placements) {
    const auto key = key_of(p);
    if (!key) continue;
    placed[*key] += placed_milli(p);
    tenants.emplace_back(key->first);
  }
  std::map<std::int64_t, const core::TenantId*> holder_tenant;
  for (const auto& job : view.holding) holder_tenant[job.id.value] = &job.tenant;
  for (const auto& a : view.allocations) {
    const auto t = holder_tenant.find(a.job.value);
    if (t != holder_tenant.end()) seen[{t->second->value, a.gpu_type.value}] += a.milli();
  }
  CORRAL_ASSIGN_OR_RETURN(const store::TenantTypeCounts now,
                          scheduler.lock_tenant_holdings(tenants));
  // Per (tenant, type) whose GPUs grew unseen: what the store says it holds now.
  std::map<Key, std::int64_t> grew;
  std::set<Key> over;
  for (const auto& [key, milli] : placed) {
    const auto held = now.find(key);
    const std::int64_t held_now = held == now.end() ? 0 : held->second;
    const auto was = seen.find(key);
    const std::int64_t held_seen = was == seen.end() ? 0 : was->second;
    // decide() itself keeps within the quota of what it saw (sched::check() says so).
    if (held_now <= held_seen) continue;
    grew[key] = held_now;
    const auto tenant = snapshot.find_tenant(core::TenantId(key.first));
    if (!tenant) continue;
    const core::Quota& q = snapshot.tenants()[*tenant].quota_for(core::GpuTypeId(key.second));
    if (held_now + milli > q.max_total_milli()) over.insert(key);
  }
  if (grew.empty()) return out;
  out.dropped = drop_placements(d, [&](const sched::Placement& p) {
    const auto key = key_of(p);
    return key && over.contains(*key);
  });
  for (auto& p : d.placements) {
    const auto key = key_of(p);
    const auto held = key ? grew.find(*key) : grew.end();
    if (held == grew.end()) continue;
    held->second += placed_milli(p);  // with the ones before it
    const auto tenant = snapshot.find_tenant(core::TenantId(key->first));
    if (p.borrowed || !tenant) continue;
    const core::Quota& q = snapshot.tenants()[*tenant].quota_for(p.gpu_type);
    if (held->second > q.guaranteed_milli) {
      p.borrowed = true;
      ++out.borrowed;
    }
  }
  return out;
}

core::Result<std::int64_t> drop_over_rack_power(store::RackCapRepo& rack_caps, sched::Decisions& d,
                                                const sched::ClusterSnapshot& snapshot,
                                                const StoreView& view) {
  const auto& topo = snapshot.topo();
  // A GPU draws its watts once, however many shares are on it.
  std::set<std::pair<std::string, std::int32_t>> held_gpus;
  for (const auto& a : view.allocations) held_gpus.emplace(a.node.value, a.gpu_index);
  // What this cycle places on each capped rack, in watts: GPUs that were idle.
  std::map<sched::RackIx, std::int64_t> placed;
  std::set<std::pair<std::string, std::int32_t>> placed_gpus;
  for (const auto& p : d.placements) {
    for (const auto& g : p.gpus) {
      const auto node = snapshot.find_node(g.node);
      if (!node || snapshot.rack_power_cap_watts(topo[*node].rack) <= 0) continue;
      const std::pair<std::string, std::int32_t> gpu{g.node.value, g.index};
      if (held_gpus.contains(gpu) || !placed_gpus.insert(gpu).second) continue;
      placed[topo[*node].rack] += topo[*node].gpu_watts;
    }
  }
  if (placed.empty()) return std::int64_t{0};
  // Their nodes, and the watts this cycle saw held there.
  std::vector<std::string> racks;
  for (const auto& [rack, watts] : placed) racks.push_back(snapshot.rack_name(rack));
  std::vector<core::NodeId> nodes;
  for (std::size_t n = 0; n < topo.size(); ++n) {
    if (placed.contains(topo[n].rack)) nodes.push_back(snapshot.nodes()[n].id);
  }
  std::map<sched::RackIx, std::int64_t> seen, now;
  for (const auto& [name, index] : held_gpus) {
    const auto node = snapshot.find_node(core::NodeId(name));
    if (node && placed.contains(topo[*node].rack)) seen[topo[*node].rack] += topo[*node].gpu_watts;
  }
  CORRAL_ASSIGN_OR_RETURN(const auto held, rack_caps.lock_rack_holdings(racks, nodes));
  for (const auto& [name, gpus] : held) {
    const auto node = snapshot.find_node(core::NodeId(name));
    if (node) now[topo[*node].rack] += gpus * topo[*node].gpu_watts;
  }
  std::set<sched::RackIx> over;
  for (const auto& [rack, watts] : placed) {
    // Over only because of GPUs this cycle did not see: another shard's. (decide() itself
    // keeps within the cap of what it saw; sched::check() says so.)
    if (now[rack] > seen[rack] && now[rack] + watts > snapshot.rack_power_cap_watts(rack)) {
      over.insert(rack);
    }
  }
  if (over.empty()) return std::int64_t{0};
  return drop_placements(d, [&](const sched::Placement& p) {
    return std::any_of(p.gpus.begin(), p.gpus.end(), [&](const sched::GpuRef& g) {
      const auto node = snapshot.find_node(g.node);
      return node && over.contains(topo[*node].rack);
    });
  });
}

}  // namespace corral::server
