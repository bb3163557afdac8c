#include "sched/internal/plan.h"

#include <bit>
#include <cmath>

#include "core/check.h"

namespace corral::sched::detail {

std::int32_t DomainStats::nodes_with_at_least(std::int32_t k) const {
  std::int32_t n = 0;
  for (std::int32_t c = std::max(k, 0); c <= kMaxGpusPerNode; ++c) n += nodes_by_free[c];
  return n;
}

Plan::Plan(const ClusterSnapshot& snapshot)
    : s_(snapshot), type_count_(static_cast<std::int32_t>(snapshot.gpu_types().size())) {
  const auto& nodes = s_.nodes();
  const auto& topo = s_.topo();
  const size_t node_count = nodes.size();

  // 1. Every usable GPU starts free; GPUs of running jobs are then taken back out.
  free_mask_.resize(node_count);
  free_count_.reserve(node_count);
  free_cpus_.resize(node_count);
  free_mem_.resize(node_count);
  for (size_t n = 0; n < node_count; ++n) {
    free_mask_[n] = topo[n].usable_mask;
    free_count_.push_back(std::popcount(free_mask_[n]));
    free_cpus_[n] = nodes[n].cpus;
    free_mem_[n] = nodes[n].memory_mib;
  }
  std::int32_t rack_count = 0;
  for (const NodeTopo& t : topo) rack_count = std::max(rack_count, t.rack + 1);
  rack_watts_.assign(rack_count, 0);
  type_free_.assign(type_count_, 0);
  split_types_.assign(type_count_, false);
  for (const NodeTopo& t : topo) {
    if (t.type >= 0 && t.domain_masks.size() > 1) split_types_[t.type] = true;
  }
  tenant_used_milli_.assign(s_.tenants().size() * type_count_, 0);
  weighted_held_milli_.assign(s_.tenants().size(), 0);

  const std::array<std::int32_t, kLevelCount> domain_counts = {s_.nvl_rack_count(), s_.leaf_count(),
                                                               s_.spine_count(), s_.cluster_count(),
                                                               s_.region_count()};
  for (std::int32_t l = 0; l < kLevelCount; ++l) {
    stats_[l].assign(static_cast<size_t>(domain_counts[l]) * type_count_, DomainStats{});
    nodes_[l].assign(static_cast<size_t>(domain_counts[l]) * type_count_, {});
  }
  buckets_.resize(type_count_);
  for (auto& by_free : buckets_) {
    for (NodeSet& set : by_free) set.resize(node_count);
  }

  // 2. Aggregates over the free GPUs, per level, domain and type.
  for (size_t n = 0; n < node_count; ++n) {
    const NodeIx node = static_cast<NodeIx>(n);
    const TypeIx type = topo[n].type;
    if (type < 0) continue;
    const std::int32_t free = std::popcount(free_mask_[n]);
    type_free_[type] += free;
    buckets_[type][free].insert(node);
    for (std::int32_t l = 0; l < kLevelCount; ++l) {
      const std::int32_t d = domain_of(static_cast<Level>(l), node);
      if (d < 0) continue;
      DomainStats& st = stats_mut(static_cast<Level>(l), d, type);
      st.free += free;
      st.nodes_by_free[free] += 1;
      nodes_[l][static_cast<size_t>(d) * type_count_ + type].push_back(node);
    }
  }

  // 3. What running jobs hold: their GPUs leave the free pool (if they were in it), and
  //    count toward their tenant's quota, fair share, node CPUs/memory and rack power.
  const auto& running = s_.running();
  for (size_t j = 0; j < running.size(); ++j) {
    const JobRequest& r = running[j].request;
    for (const NodeGpus& g : s_.running_gpus(j)) {
      apply({g.node, g.mask, s_.running_tenant(j), r.cpus_per_gpu, r.memory_per_gpu_mib, +1,
             r.gpu_milli, r.gpu_memory_mib},
            +1);
    }
  }
  journal_.clear();  // the starting state is not something to roll back
}

std::int64_t usage_milli(const core::GpuType& type) {
  return std::llround(type.usage_factor * 1000);
}

std::int32_t Plan::domain_of(Level level, NodeIx node) const {
  const NodeTopo& t = s_.topo()[node];
  switch (level) {
    case Level::kNvlRack:
      return t.nvl_rack;
    case Level::kLeaf:
      return t.leaf;
    case Level::kSpine:
      return t.spine;
    case Level::kCluster:
      return t.cluster;
    case Level::kRegion:
      return t.region;
  }
  return -1;
}

RegionIx Plan::domain_region(Level level, std::int32_t domain) const {
  switch (level) {
    case Level::kNvlRack:
      return s_.region_of_nvl_rack(domain);
    case Level::kLeaf:
      return s_.region_of_cluster(s_.cluster_of_spine(s_.spine_of_leaf(domain)));
    case Level::kSpine:
      return s_.region_of_cluster(s_.cluster_of_spine(domain));
    case Level::kCluster:
      return s_.region_of_cluster(domain);
    case Level::kRegion:
      return domain;
  }
  return -1;
}

std::int32_t Plan::domain_count(Level level) const {
  return static_cast<std::int32_t>(stats_[static_cast<size_t>(level)].size()) / type_count_;
}

const DomainStats& Plan::stats(Level level, std::int32_t domain, TypeIx type) const {
  return stats_[static_cast<size_t>(level)][static_cast<size_t>(domain) * type_count_ + type];
}

DomainStats& Plan::stats_mut(Level level, std::int32_t domain, TypeIx type) {
  return stats_[static_cast<size_t>(level)][static_cast<size_t>(domain) * type_count_ + type];
}

const std::vector<NodeIx>& Plan::domain_nodes(Level level, std::int32_t domain, TypeIx type) const {
  return nodes_[static_cast<size_t>(level)][static_cast<size_t>(domain) * type_count_ + type];
}

std::int64_t Plan::tenant_used_milli(TenantIx tenant, TypeIx type) const {
  return tenant_used_milli_[static_cast<size_t>(tenant) * type_count_ + type];
}

ShareUse Plan::share_room(NodeIx node, std::int32_t gpu) const {
  const std::uint64_t bit = std::uint64_t{1} << gpu;
  const std::int64_t memory = s_.gpu_types()[s_.topo()[node].type].memory_mib;
  if ((free_mask_[node] & bit) != 0) return {.milli = 1000, .memory_mib = memory};
  const auto at = shared_.find({node, gpu});
  if (at == shared_.end() || (s_.topo()[node].usable_mask & bit) == 0) return {};
  return {.milli = 1000 - at->second.milli, .memory_mib = memory - at->second.memory_mib};
}

void Plan::take_share(NodeIx node, std::int32_t gpu, TenantIx tenant, const JobRequest& r) {
  const ShareUse room = share_room(node, gpu);
  CORRAL_CHECK(is_share(r) && room.milli >= r.gpu_milli);
  const Entry e{node,           std::uint64_t{1} << gpu, tenant,
                r.cpus_per_gpu, r.memory_per_gpu_mib,    +1,
                r.gpu_milli,    r.gpu_memory_mib};
  apply(e, +1);
  journal_.push_back(e);
}

void Plan::take(const std::vector<Take>& takes, TenantIx tenant, std::int32_t cpus_per_gpu,
                std::int64_t memory_per_gpu_mib) {
  for (const Take& t : takes) {
    CORRAL_CHECK((t.mask & ~free_mask_[t.node]) == 0);  // only free GPUs can be taken
  }
  record(takes, tenant, cpus_per_gpu, memory_per_gpu_mib, +1);
}

void Plan::give_back(const std::vector<Take>& takes, TenantIx tenant, std::int32_t cpus_per_gpu,
                     std::int64_t memory_per_gpu_mib) {
  for (const Take& t : takes) {
    CORRAL_CHECK((t.mask & free_mask_[t.node]) == 0);  // only held GPUs can be given back
  }
  record(takes, tenant, cpus_per_gpu, memory_per_gpu_mib, -1);
}

void Plan::block(const std::vector<Take>& takes) { take(takes, -1, 0, 0); }

void Plan::unblock(const std::vector<Take>& takes) { give_back(takes, -1, 0, 0); }

void Plan::record(const std::vector<Take>& takes, TenantIx tenant, std::int32_t cpus,
                  std::int64_t memory_mib, int sign) {
  for (const Take& t : takes) {
    const Entry e{t.node, t.mask, tenant, cpus, memory_mib, sign};  // whole GPUs
    apply(e, sign);
    journal_.push_back(e);
  }
}

void Plan::rollback(Mark mark) {
  CORRAL_CHECK(mark <= journal_.size());
  while (journal_.size() > mark) {
    apply(journal_.back(), -journal_.back().sign);
    journal_.pop_back();
  }
}

void Plan::apply(const Entry& e, int sign) {
  const NodeTopo& topo = s_.topo()[e.node];
  const TypeIx type = topo.type;
  const std::int32_t gpus = std::popcount(e.mask);
  // Running jobs may hold GPUs that are no longer usable (unhealthy, node draining):
  // those were never in the free pool, so only the usable part moves in or out of it.
  std::uint64_t pool_part = e.mask & topo.usable_mask;
  // A shared GPU leaves the pool, and draws its watts, with its first share; it comes
  // back with its last.
  std::int32_t powered = gpus;
  if (e.share_milli > 0) {
    const auto key = std::make_pair(e.node, std::countr_zero(e.mask));
    ShareUse& use = shared_[key];
    const bool was_empty = use.milli == 0;
    use.milli += sign * e.share_milli;
    use.memory_mib += sign * e.share_memory;
    const bool now_empty = use.milli == 0;
    if (now_empty) shared_.erase(key);
    if (was_empty == now_empty) {
      pool_part = 0;
      powered = 0;
    }
  }
  const std::int32_t before = std::popcount(free_mask_[e.node]);
  if (sign > 0) {
    free_mask_[e.node] &= ~pool_part;
  } else {
    free_mask_[e.node] |= pool_part;
  }
  const std::int32_t after = std::popcount(free_mask_[e.node]);
  free_count_[e.node] = after;
  if (before != after) {
    type_free_[type] += after - before;
    buckets_[type][before].erase(e.node);
    buckets_[type][after].insert(e.node);
    for (std::int32_t l = 0; l < kLevelCount; ++l) {
      const std::int32_t d = domain_of(static_cast<Level>(l), e.node);
      if (d < 0) continue;
      DomainStats& st = stats_mut(static_cast<Level>(l), d, type);
      st.free += after - before;
      st.nodes_by_free[before] -= 1;
      st.nodes_by_free[after] += 1;
    }
  }
  if (e.tenant < 0) return;  // a block: nobody is charged
  free_cpus_[e.node] -= sign * gpus * e.cpus;
  free_mem_[e.node] -= sign * gpus * e.memory_mib;
  rack_watts_[topo.rack] += sign * powered * topo.gpu_watts;
  const std::int64_t milli = e.share_milli > 0 ? e.share_milli : std::int64_t{1000} * gpus;
  tenant_used_milli_[static_cast<size_t>(e.tenant) * type_count_ + type] += sign * milli;
  weighted_held_milli_[e.tenant] += sign * milli * usage_milli(s_.gpu_types()[type]) / 1000;
}

bool overlaps(const std::vector<Plan::Take>& a, const std::vector<Plan::Take>& b) {
  for (const Plan::Take& x : a) {
    for (const Plan::Take& y : b) {
      if (x.node == y.node && (x.mask & y.mask) != 0) return true;
    }
  }
  return false;
}

}  // namespace corral::sched::detail
