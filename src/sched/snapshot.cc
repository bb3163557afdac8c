#include "sched/snapshot.h"

#include <algorithm>
#include <bit>
#include <set>
#include <string>
#include <utility>

#include "sched/internal/text.h"

namespace corral::sched {
namespace {

using core::Result;
using core::Status;
using detail::cat;

Status bad(std::string field, std::string message) {
  return core::invalid_argument(std::move(field), std::move(message));
}

// Interns names into dense indices in order of first appearance; the caller visits
// inputs in sorted order, so the indices are deterministic.
class Interner {
 public:
  std::int32_t intern(const std::string& key) {
    const auto [it, inserted] = index_.emplace(key, static_cast<std::int32_t>(names_.size()));
    if (inserted) names_.push_back(key);
    return it->second;
  }
  std::vector<std::string> take_names() { return std::move(names_); }

 private:
  std::map<std::string, std::int32_t> index_;
  std::vector<std::string> names_;
};

template <typename T, typename Key>
Status sort_unique(std::vector<T>& items, Key key, const char* what) {
  std::sort(items.begin(), items.end(), [&](const T& a, const T& b) { return key(a) < key(b); });
  for (size_t i = 1; i < items.size(); ++i) {
    if (key(items[i - 1]) == key(items[i])) {
      return bad(what, cat("duplicate id ", detail::id_text(key(items[i]))));
    }
  }
  return core::ok_status();
}

}  // namespace

JobRequest job_request_from_spec(core::JobId id, const core::JobSpec& spec, std::int32_t tier) {
  JobRequest r;
  r.id = id;
  r.tenant = spec.tenant;
  r.tier = tier;
  r.gpus = spec.resources.gpus;
  r.gpu_types = spec.resources.gpu_types;
  r.gpus_per_node = spec.resources.gpus_per_node;
  r.cpus_per_gpu = spec.resources.cpus_per_gpu;
  r.memory_per_gpu_mib = spec.resources.memory_per_gpu_mib;
  r.topology = spec.topology;
  r.elastic = spec.elastic;
  r.preemptible = spec.preemptible;
  r.max_runtime = spec.max_runtime;
  if (spec.checkpoint) {
    r.checkpoint_interval = spec.checkpoint->interval;
    r.restore_time = spec.checkpoint->restore_time;
  }
  r.reservation = spec.reservation;
  return r;
}

std::optional<TypeIx> ClusterSnapshot::find_type(const core::GpuTypeId& id) const {
  const auto it = std::lower_bound(gpu_types_.begin(), gpu_types_.end(), id,
                                   [](const core::GpuType& t, const auto& k) { return t.id < k; });
  if (it == gpu_types_.end() || it->id != id) return std::nullopt;
  return static_cast<TypeIx>(it - gpu_types_.begin());
}

std::optional<NodeIx> ClusterSnapshot::find_node(const core::NodeId& id) const {
  const auto it = std::lower_bound(nodes_.begin(), nodes_.end(), id,
                                   [](const core::Node& n, const auto& k) { return n.id < k; });
  if (it == nodes_.end() || it->id != id) return std::nullopt;
  return static_cast<NodeIx>(it - nodes_.begin());
}

std::optional<TenantIx> ClusterSnapshot::find_tenant(const core::TenantId& id) const {
  const auto it = std::lower_bound(tenants_.begin(), tenants_.end(), id,
                                   [](const core::Tenant& t, const auto& k) { return t.id < k; });
  if (it == tenants_.end() || it->id != id) return std::nullopt;
  return static_cast<TenantIx>(it - tenants_.begin());
}

namespace {

// Checks a job's request against the fleet's vocabulary.
Status check_request(const ClusterSnapshot& s, const JobRequest& r, const std::string& field) {
  if (!s.find_tenant(r.tenant))
    return bad(field + ".tenant", cat("unknown tenant ", r.tenant.value));
  if (!s.tenant_tree()[*s.find_tenant(r.tenant)].children.empty()) {
    return bad(field + ".tenant",
               cat("tenant ", r.tenant.value, " has sub-tenants; jobs belong to a leaf tenant"));
  }
  if (r.gpus < 1) return bad(field + ".gpus", cat("must be at least 1, got ", r.gpus));
  if (r.gpus_per_node < 0 || (r.gpus_per_node > 0 && r.gpus % r.gpus_per_node != 0)) {
    return bad(field + ".gpus_per_node", cat("must divide gpus, got ", r.gpus_per_node));
  }
  for (const auto& t : r.gpu_types) {
    if (!s.find_type(t)) return bad(field + ".gpu_types", cat("unknown GPU type ", t.value));
  }
  return core::ok_status();
}

}  // namespace

Result<ClusterSnapshot> build_snapshot(SnapshotInput in) {
  ClusterSnapshot s;
  const auto by_id = [](const auto& x) -> const auto& { return x.id; };

  // 1. Sort every list by id and refuse duplicates.
  CORRAL_RETURN_IF_ERROR(sort_unique(in.gpu_types, by_id, "gpu_types"));
  CORRAL_RETURN_IF_ERROR(sort_unique(in.nodes, by_id, "nodes"));
  CORRAL_RETURN_IF_ERROR(sort_unique(in.tenants, by_id, "tenants"));
  CORRAL_RETURN_IF_ERROR(sort_unique(in.reservations, by_id, "reservations"));
  const auto by_job = [](const auto& j) -> const auto& { return j.request.id; };
  CORRAL_RETURN_IF_ERROR(sort_unique(in.running, by_job, "running"));
  CORRAL_RETURN_IF_ERROR(sort_unique(in.pending, by_job, "pending"));
  s.gpu_types_ = std::move(in.gpu_types);
  s.nodes_ = std::move(in.nodes);
  s.tenants_ = std::move(in.tenants);
  s.reservations_ = std::move(in.reservations);

  for (const core::GpuType& t : s.gpu_types_) {
    if (t.usage_factor <= 0) return bad("gpu_types", cat(t.id.value, ": usage factor must be > 0"));
  }

  // 2. Tenants: parents exist, no cycles, positive weights.
  s.tenant_tree_.resize(s.tenants_.size());
  for (size_t i = 0; i < s.tenants_.size(); ++i) {
    const core::Tenant& t = s.tenants_[i];
    if (!(t.weight > 0)) return bad("tenants", cat(t.id.value, ": weight must be > 0"));
    if (!t.parent) continue;
    const auto parent = s.find_tenant(*t.parent);
    if (!parent) return bad("tenants", cat(t.id.value, ": unknown parent ", t.parent->value));
    s.tenant_tree_[i].parent = *parent;
    s.tenant_tree_[*parent].children.push_back(static_cast<TenantIx>(i));
  }
  for (size_t i = 0; i < s.tenants_.size(); ++i) {
    TenantIx at = static_cast<TenantIx>(i);
    for (size_t depth = 0; at != -1; ++depth, at = s.tenant_tree_[at].parent) {
      if (depth > s.tenants_.size()) {
        return bad("tenants", cat(s.tenants_[i].id.value, ": parent chain has a cycle"));
      }
    }
  }
  s.usage_.assign(s.tenants_.size(), 0.0);
  for (const auto& [tenant, value] : in.usage) {
    const auto ix = s.find_tenant(tenant);
    if (!ix) return bad("usage", cat("unknown tenant ", tenant.value));
    if (!(value >= 0)) return bad("usage", cat(tenant.value, ": usage must be >= 0"));
    s.usage_[*ix] = value;
  }

  // 3. Topology: intern clusters, spines, leaves, racks and NVLink racks in node order.
  Interner clusters, spines, leaves, racks, nvl_racks;
  std::map<std::string, std::int64_t> caps;
  for (const core::Rack& r : in.racks) {
    if (r.power_cap_watts < 0) return bad("racks", cat(r.name, ": power cap must be >= 0"));
    caps[r.name] = r.power_cap_watts;
  }
  s.max_node_gpus_.assign(s.gpu_types_.size(), 0);
  s.total_gpus_.assign(s.gpu_types_.size(), 0);
  s.topo_.resize(s.nodes_.size());
  for (size_t n = 0; n < s.nodes_.size(); ++n) {
    core::Node& node = s.nodes_[n];
    NodeTopo& topo = s.topo_[n];
    const std::string field = cat("nodes[", node.id.value, "]");
    if (node.gpus.size() > static_cast<size_t>(kMaxGpusPerNode)) {
      return bad(field, cat("has ", node.gpus.size(), " GPUs, at most ", kMaxGpusPerNode));
    }
    std::sort(node.gpus.begin(), node.gpus.end(),
              [](const core::Gpu& a, const core::Gpu& b) { return a.index < b.index; });
    const core::TopologyLabels& l = node.labels;
    const std::string cluster_key = l.region + "/" + l.cluster;
    const std::string spine_key = cluster_key + "/" + l.spine;
    topo.cluster = clusters.intern(cluster_key);
    topo.spine = spines.intern(spine_key);
    topo.leaf = leaves.intern(spine_key + "/" + l.leaf);
    if (topo.spine == static_cast<SpineIx>(s.spine_cluster_.size())) {
      s.spine_cluster_.push_back(topo.cluster);
    }
    if (topo.leaf == static_cast<LeafIx>(s.leaf_spine_.size())) s.leaf_spine_.push_back(topo.spine);
    topo.rack = racks.intern(l.rack);
    topo.nvl_rack = l.nvlink_rack.empty() ? -1 : nvl_racks.intern(l.nvlink_rack);
    for (size_t g = 0; g < node.gpus.size(); ++g) {
      const core::Gpu& gpu = node.gpus[g];
      if (gpu.index != static_cast<std::int32_t>(g)) {
        return bad(field,
                   cat("GPU indices must be 0..", node.gpus.size() - 1, ", got ", gpu.index));
      }
      const auto type = s.find_type(gpu.type);
      if (!type) return bad(field, cat("GPU ", g, " has unknown type ", gpu.type.value));
      if (topo.type != -1 && topo.type != *type) {
        return bad(field, "all GPUs on a node must be one type");
      }
      topo.type = *type;
      if (gpu.nvlink_domain < 0 || gpu.nvlink_domain >= kMaxGpusPerNode) {
        return bad(field, cat("GPU ", g, " NVLink domain must be 0..63, got ", gpu.nvlink_domain));
      }
      const std::uint64_t bit = std::uint64_t{1} << g;
      topo.all_mask |= bit;
      if (gpu.healthy && node.admin == core::NodeAdminState::kActive) topo.usable_mask |= bit;
      if (topo.domain_masks.size() <= static_cast<size_t>(gpu.nvlink_domain)) {
        topo.domain_masks.resize(gpu.nvlink_domain + 1, 0);
      }
      topo.domain_masks[gpu.nvlink_domain] |= bit;
    }
    if (topo.type != -1) {
      s.max_node_gpus_[topo.type] =
          std::max(s.max_node_gpus_[topo.type], static_cast<std::int32_t>(node.gpus.size()));
      s.total_gpus_[topo.type] += static_cast<std::int32_t>(node.gpus.size());
    }
  }
  s.cluster_names_ = clusters.take_names();
  s.spine_names_ = spines.take_names();
  s.leaf_names_ = leaves.take_names();
  s.rack_names_ = racks.take_names();
  s.nvl_rack_names_ = nvl_racks.take_names();
  for (const std::string& rack : s.rack_names_) {
    const auto it = caps.find(rack);
    s.rack_caps_.push_back(it == caps.end() ? 0 : it->second);
  }

  // 4. Jobs: known tenants and types; running GPUs exist and none is held twice.
  std::set<GpuRef> held;
  for (size_t j = 0; j < in.running.size(); ++j) {
    const RunningJob& r = in.running[j];
    const std::string field = cat("running[", r.request.id.value, "]");
    CORRAL_RETURN_IF_ERROR(check_request(s, r.request, field));
    for (const GpuRef& g : r.gpus) {
      const auto node = s.find_node(g.node);
      if (!node || g.index < 0 ||
          g.index >= static_cast<std::int32_t>(s.nodes_[*node].gpus.size())) {
        return bad(field, cat("holds unknown GPU ", g.node.value, "/", g.index));
      }
      if (!held.insert(g).second) {
        return bad(field, cat("GPU ", g.node.value, "/", g.index, " is held by two jobs"));
      }
    }
  }
  std::set<core::JobId> running_ids;
  for (const RunningJob& r : in.running) running_ids.insert(r.request.id);
  for (const PendingJob& p : in.pending) {
    const std::string field = cat("pending[", p.request.id.value, "]");
    CORRAL_RETURN_IF_ERROR(check_request(s, p.request, field));
    if (running_ids.count(p.request.id)) return bad(field, "job is also running");
  }
  s.running_ = std::move(in.running);
  s.pending_ = std::move(in.pending);
  return s;
}

}  // namespace corral::sched
