#include "sched/snapshot.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "sched/internal/held_gpus.h"
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
  const auto less = [&](const T& a, const T& b) { return key(a) < key(b); };
  // Adapters usually pass lists already in id order; checking is cheaper than sorting.
  if (!std::is_sorted(items.begin(), items.end(), less))
    std::sort(items.begin(), items.end(), less);
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
  r.gpu_milli = spec.resources.gpu_milli;
  r.gpu_memory_mib = spec.resources.gpu_memory_mib;
  r.gpu_types = spec.resources.gpu_types;
  r.gpu_speed = spec.resources.gpu_speed;
  r.gpus_per_node = spec.resources.gpus_per_node;
  r.cpus_per_gpu = spec.resources.cpus_per_gpu;
  r.memory_per_gpu_mib = spec.resources.memory_per_gpu_mib;
  r.region = spec.resources.region;
  r.topology = spec.topology;
  r.elastic = spec.elastic;
  r.preemptible = spec.preemptible;
  r.max_runtime = spec.max_runtime;
  if (spec.checkpoint) {
    r.checkpoint_interval = spec.checkpoint->interval;
    r.restore_time = spec.checkpoint->restore_time;
  }
  r.reservation = spec.reservation;
  if (spec.expected_runtime.count() > 0) {
    r.estimate = {.runtime = spec.expected_runtime, .basis = EstimateBasis::kSpec};
  }
  return r;
}

std::string_view to_string(EstimateBasis basis) {
  switch (basis) {
    case EstimateBasis::kMaxRuntime:
      return "maxRuntime";
    case EstimateBasis::kSpec:
      return "expectedRuntime";
    case EstimateBasis::kHistory:
      return "history";
  }
  return "maxRuntime";
}

std::optional<TypeIx> ClusterSnapshot::find_type(const core::GpuTypeId& id) const {
  const auto& types = fleet_->gpu_types;
  const auto it = std::lower_bound(types.begin(), types.end(), id,
                                   [](const core::GpuType& t, const auto& k) { return t.id < k; });
  if (it == types.end() || it->id != id) return std::nullopt;
  return static_cast<TypeIx>(it - types.begin());
}

std::optional<NodeIx> ClusterSnapshot::find_node(const core::NodeId& id) const {
  const auto it = fleet_->node_index.find(id.value);
  if (it == fleet_->node_index.end()) return std::nullopt;
  return it->second;
}

RegionIx ClusterSnapshot::region_of(const JobRequest& r) const {
  if (r.region.empty()) return kAnyRegion;
  const auto& names = fleet_->region_names;
  const auto it = std::find(names.begin(), names.end(), r.region);
  return it == names.end() ? kNoSuchRegion : static_cast<RegionIx>(it - names.begin());
}

std::optional<TenantIx> ClusterSnapshot::find_tenant(const core::TenantId& id) const {
  const auto& tenants = fleet_->tenants;
  const auto it = std::lower_bound(tenants.begin(), tenants.end(), id,
                                   [](const core::Tenant& t, const auto& k) { return t.id < k; });
  if (it == tenants.end() || it->id != id) return std::nullopt;
  return static_cast<TenantIx>(it - tenants.begin());
}

namespace {

// Checks a job's request against the fleet's vocabulary; sets `tenant` to its tenant.
// `field` is only called on error: naming the field costs more than the checks.
template <typename Field>
Status check_request(const ClusterSnapshot& s, const JobRequest& r, Field field_of,
                     TenantIx& tenant) {
  const auto ix = s.find_tenant(r.tenant);
  if (!ix) return bad(field_of() + ".tenant", cat("unknown tenant ", r.tenant.value));
  tenant = *ix;
  if (!s.tenant_tree()[*ix].children.empty()) {
    return bad(field_of() + ".tenant",
               cat("tenant ", r.tenant.value, " has sub-tenants; jobs belong to a leaf tenant"));
  }
  if (r.gpus < 1) return bad(field_of() + ".gpus", cat("must be at least 1, got ", r.gpus));
  if (r.gpu_milli < 0 || r.gpu_milli > 999) {
    return bad(
        field_of() + ".gpu_milli",
        cat("must be between 1 and 999 thousandths of a GPU (0: whole GPUs), got ", r.gpu_milli));
  }
  if (r.gpu_memory_mib < 0 || (r.gpu_memory_mib > 0 && !is_share(r))) {
    return bad(field_of() + ".gpu_memory_mib",
               cat("must be at least 0, and only with a share of a GPU, got ", r.gpu_memory_mib));
  }
  if (is_share(r) &&
      (r.elastic || r.gpus_per_node > 0 || r.topology.mode == core::TopologyMode::kRequired)) {
    return bad(field_of() + ".gpu_milli",
               "shares of a GPU go one per GPU: a job of shares cannot be elastic, set "
               "gpus_per_node or require a topology");
  }
  if (r.gpus_per_node < 0 || (r.gpus_per_node > 0 && r.gpus % r.gpus_per_node != 0)) {
    return bad(field_of() + ".gpus_per_node", cat("must divide gpus, got ", r.gpus_per_node));
  }
  for (const auto& t : r.gpu_types) {
    if (!s.find_type(t)) return bad(field_of() + ".gpu_types", cat("unknown GPU type ", t.value));
  }
  for (const auto& [t, speed] : r.gpu_speed) {
    if (!s.find_type(t)) return bad(field_of() + ".gpu_speed", cat("unknown GPU type ", t.value));
    if (!(speed >= 1e-9 && speed <= 1e15)) {
      return bad(field_of() + ".gpu_speed", cat(t.value, ": speed must be between 1e-9 and 1e15"));
    }
  }
  if (r.elastic) {
    // decide() takes logs of throughputs and interpolates between sizes in order.
    const auto& curve = r.elastic->scaling;
    for (std::size_t i = 0; i < curve.size(); ++i) {
      if (curve[i].gpus < 1 || !(curve[i].throughput >= 1e-9 && curve[i].throughput <= 1e15) ||
          (i > 0 && curve[i].gpus <= curve[i - 1].gpus)) {
        return bad(field_of() + ".elastic.scaling",
                   cat("point ", i,
                       ": sizes must be >= 1 and increasing, throughputs between 1e-9 and "
                       "1e15"));
      }
    }
  }
  return core::ok_status();
}

}  // namespace

Result<ClusterSnapshot> build_snapshot(SnapshotInput in) {
  ClusterSnapshot s;
  auto fleet = std::make_shared<ClusterSnapshot::Fleet>();
  s.fleet_ = fleet;
  ClusterSnapshot::Fleet& f = *fleet;
  const auto by_id = [](const auto& x) -> const auto& { return x.id; };

  // 1. Sort every list by id and refuse duplicates.
  CORRAL_RETURN_IF_ERROR(sort_unique(in.gpu_types, by_id, "gpu_types"));
  CORRAL_RETURN_IF_ERROR(sort_unique(in.nodes, by_id, "nodes"));
  CORRAL_RETURN_IF_ERROR(sort_unique(in.tenants, by_id, "tenants"));
  CORRAL_RETURN_IF_ERROR(sort_unique(in.reservations, by_id, "reservations"));
  const auto by_job = [](const auto& j) -> const auto& { return j.request.id; };
  CORRAL_RETURN_IF_ERROR(sort_unique(in.running, by_job, "running"));
  CORRAL_RETURN_IF_ERROR(sort_unique(in.pending, by_job, "pending"));
  f.gpu_types = std::move(in.gpu_types);
  f.nodes = std::move(in.nodes);
  f.tenants = std::move(in.tenants);

  for (const core::GpuType& t : f.gpu_types) {
    if (t.usage_factor <= 0) return bad("gpu_types", cat(t.id.value, ": usage factor must be > 0"));
  }

  // 2. Tenants: parents exist, no cycles, positive weights.
  f.tenant_tree.resize(f.tenants.size());
  for (size_t i = 0; i < f.tenants.size(); ++i) {
    const core::Tenant& t = f.tenants[i];
    if (!(t.weight > 0)) return bad("tenants", cat(t.id.value, ": weight must be > 0"));
    if (!t.parent) continue;
    const auto parent = s.find_tenant(*t.parent);
    if (!parent) return bad("tenants", cat(t.id.value, ": unknown parent ", t.parent->value));
    f.tenant_tree[i].parent = *parent;
    f.tenant_tree[*parent].children.push_back(static_cast<TenantIx>(i));
  }
  for (size_t i = 0; i < f.tenants.size(); ++i) {
    TenantIx at = static_cast<TenantIx>(i);
    for (size_t depth = 0; at != -1; ++depth, at = f.tenant_tree[at].parent) {
      if (depth > f.tenants.size()) {
        return bad("tenants", cat(f.tenants[i].id.value, ": parent chain has a cycle"));
      }
    }
  }

  // 3. Topology: intern regions, clusters, spines, leaves, racks and NVLink racks in node
  //    order. Names below the region are scoped by it, so no domain spans two regions
  //    and a region-bound job can skip whole domains.
  Interner regions, clusters, spines, leaves, racks, nvl_racks;
  std::map<std::string, std::int64_t> caps;
  for (const core::Rack& r : in.racks) {
    if (r.power_cap_watts < 0) return bad("racks", cat(r.name, ": power cap must be >= 0"));
    caps[r.name] = r.power_cap_watts;
  }
  f.max_node_gpus.assign(f.gpu_types.size(), 0);
  f.total_gpus.assign(f.gpu_types.size(), 0);
  f.topo.resize(f.nodes.size());
  f.node_index.reserve(f.nodes.size());
  for (size_t n = 0; n < f.nodes.size(); ++n) {
    f.node_index.emplace(f.nodes[n].id.value, static_cast<NodeIx>(n));
  }
  for (size_t n = 0; n < f.nodes.size(); ++n) {
    core::Node& node = f.nodes[n];
    NodeTopo& topo = f.topo[n];
    const std::string field = cat("nodes[", node.id.value, "]");
    if (node.gpus.size() > static_cast<size_t>(kMaxGpusPerNode)) {
      return bad(field, cat("has ", node.gpus.size(), " GPUs, at most ", kMaxGpusPerNode));
    }
    std::sort(node.gpus.begin(), node.gpus.end(),
              [](const core::Gpu& a, const core::Gpu& b) { return a.index < b.index; });
    const core::TopologyLabels& l = node.labels;
    const std::string cluster_key = l.region + "/" + l.cluster;
    const std::string spine_key = cluster_key + "/" + l.spine;
    topo.region = regions.intern(l.region);
    topo.cluster = clusters.intern(cluster_key);
    if (topo.cluster == static_cast<ClusterIx>(f.cluster_region.size())) {
      f.cluster_region.push_back(topo.region);
    }
    topo.spine = spines.intern(spine_key);
    topo.leaf = leaves.intern(spine_key + "/" + l.leaf);
    if (topo.spine == static_cast<SpineIx>(f.spine_cluster.size())) {
      f.spine_cluster.push_back(topo.cluster);
    }
    if (topo.leaf == static_cast<LeafIx>(f.leaf_spine.size())) f.leaf_spine.push_back(topo.spine);
    topo.rack = racks.intern(l.rack);
    topo.nvl_rack = l.nvlink_rack.empty() ? -1 : nvl_racks.intern(l.region + "/" + l.nvlink_rack);
    if (topo.nvl_rack == static_cast<NvlRackIx>(f.nvl_rack_region.size())) {
      f.nvl_rack_region.push_back(topo.region);
    }
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
      if (gpu.healthy && !node.lost && node.admin == core::NodeAdminState::kActive) {
        topo.usable_mask |= bit;
      }
      if (topo.domain_masks.size() <= static_cast<size_t>(gpu.nvlink_domain)) {
        topo.domain_masks.resize(gpu.nvlink_domain + 1, 0);
      }
      topo.domain_masks[gpu.nvlink_domain] |= bit;
    }
    if (topo.type != -1) {
      topo.gpu_watts = core::node_gpu_watts(node, f.gpu_types[topo.type]);
      f.max_node_gpus[topo.type] =
          std::max(f.max_node_gpus[topo.type], static_cast<std::int32_t>(node.gpus.size()));
      f.total_gpus[topo.type] += static_cast<std::int32_t>(node.gpus.size());
    }
  }
  f.region_names = regions.take_names();
  f.cluster_names = clusters.take_names();
  f.spine_names = spines.take_names();
  f.leaf_names = leaves.take_names();
  f.rack_names = racks.take_names();
  f.nvl_rack_names = nvl_racks.take_names();
  for (const std::string& rack : f.rack_names) {
    const auto it = caps.find(rack);
    f.rack_caps.push_back(it == caps.end() ? 0 : it->second);
  }

  // 4. Usage, reservations and jobs.
  CORRAL_RETURN_IF_ERROR(ClusterSnapshot::attach_jobs(s, in));
  return s;
}

Result<ClusterSnapshot> rebuild_snapshot(const ClusterSnapshot& same_fleet, SnapshotInput in) {
  if (!in.gpu_types.empty() || !in.nodes.empty() || !in.racks.empty() || !in.tenants.empty()) {
    return bad("input", "rebuild_snapshot takes the fleet from the base snapshot; pass only jobs");
  }
  ClusterSnapshot s;
  s.fleet_ = same_fleet.fleet_;
  const auto by_id = [](const auto& x) -> const auto& { return x.id; };
  CORRAL_RETURN_IF_ERROR(sort_unique(in.reservations, by_id, "reservations"));
  const auto by_job = [](const auto& j) -> const auto& { return j.request.id; };
  CORRAL_RETURN_IF_ERROR(sort_unique(in.running, by_job, "running"));
  CORRAL_RETURN_IF_ERROR(sort_unique(in.pending, by_job, "pending"));
  CORRAL_RETURN_IF_ERROR(ClusterSnapshot::attach_jobs(s, in));
  return s;
}

namespace {

Status attach_usage(const ClusterSnapshot& s, const std::map<core::TenantId, double>& usage,
                    std::vector<double>& out) {
  out.assign(s.tenants().size(), 0.0);
  for (const auto& [tenant, value] : usage) {
    const auto ix = s.find_tenant(tenant);
    if (!ix) return bad("usage", cat("unknown tenant ", tenant.value));
    if (!(value >= 0)) return bad("usage", cat(tenant.value, ": usage must be >= 0"));
    out[*ix] = value;
  }
  return core::ok_status();
}

// Checks a running job and derives its GPUs as (node, mask), marking them held
// (held_gpus.h).
Status attach_running(const ClusterSnapshot& s, const RunningJob& r,
                      std::vector<std::uint64_t>& held, SharedGpus& shared,
                      std::vector<NodeGpus>& out, TenantIx& tenant) {
  const auto field = [&] { return cat("running[", r.request.id.value, "]"); };
  CORRAL_RETURN_IF_ERROR(check_request(s, r.request, field, tenant));
  return detail::hold_gpus(s, r, held, shared, out);
}

// Both lists sorted by id: one merge finds a job that is both running and pending.
Status check_disjoint(const std::vector<RunningJob>& running,
                      const std::vector<PendingJob>& pending) {
  size_t ri = 0;
  for (const PendingJob& p : pending) {
    while (ri < running.size() && running[ri].request.id < p.request.id) ++ri;
    if (ri < running.size() && running[ri].request.id == p.request.id) {
      return bad(cat("pending[", p.request.id.value, "]"), "job is also running");
    }
  }
  return core::ok_status();
}

}  // namespace

// The lists in `in` are sorted by id.
Status ClusterSnapshot::attach_jobs(ClusterSnapshot& s, SnapshotInput& in) {
  CORRAL_RETURN_IF_ERROR(attach_usage(s, in.usage, s.usage_));
  s.reservations_ = std::move(in.reservations);

  // Jobs: known tenants and types; running GPUs exist and none is held twice (one bit
  // mask per node records what is held).
  s.held_.assign(s.nodes().size(), 0);
  s.shared_.clear();
  s.running_gpus_.resize(in.running.size());
  s.running_tenant_.resize(in.running.size());
  for (size_t j = 0; j < in.running.size(); ++j) {
    CORRAL_RETURN_IF_ERROR(attach_running(s, in.running[j], s.held_, s.shared_, s.running_gpus_[j],
                                          s.running_tenant_[j]));
  }
  s.pending_tenant_.resize(in.pending.size());
  for (size_t j = 0; j < in.pending.size(); ++j) {
    const PendingJob& p = in.pending[j];
    const auto field = [&] { return cat("pending[", p.request.id.value, "]"); };
    CORRAL_RETURN_IF_ERROR(check_request(s, p.request, field, s.pending_tenant_[j]));
  }
  CORRAL_RETURN_IF_ERROR(check_disjoint(in.running, in.pending));
  s.running_ = std::move(in.running);
  s.pending_ = std::move(in.pending);
  return core::ok_status();
}

Result<ClusterSnapshot> rebuild_snapshot(ClusterSnapshot&& previous, JobsDelta delta) {
  ClusterSnapshot& p = previous;
  ClusterSnapshot s;
  s.fleet_ = p.fleet_;
  const auto by_id = [](const auto& x) -> const auto& { return x.id; };
  const auto by_job = [](const auto& j) -> const auto& { return j.request.id; };
  const auto self = [](const core::JobId& id) -> const core::JobId& { return id; };
  CORRAL_RETURN_IF_ERROR(sort_unique(delta.reservations, by_id, "reservations"));
  CORRAL_RETURN_IF_ERROR(sort_unique(delta.stopped, self, "stopped"));
  CORRAL_RETURN_IF_ERROR(sort_unique(delta.started, by_job, "started"));
  CORRAL_RETURN_IF_ERROR(sort_unique(delta.dequeued, self, "dequeued"));
  CORRAL_RETURN_IF_ERROR(sort_unique(delta.queued, by_job, "queued"));
  CORRAL_RETURN_IF_ERROR(sort_unique(delta.progress, by_id, "progress"));
  CORRAL_RETURN_IF_ERROR(attach_usage(s, delta.usage, s.usage_));
  s.reservations_ = std::move(delta.reservations);
  s.held_ = std::move(p.held_);
  s.shared_ = std::move(p.shared_);

  // Running: drop the stopped (freeing their GPUs), update the ones that stay, then check
  // the started against what is held, and merge the two by id.
  std::vector<RunningJob> kept;
  std::vector<std::vector<NodeGpus>> kept_gpus;
  std::vector<TenantIx> kept_tenant;
  kept.reserve(p.running_.size());
  kept_gpus.reserve(p.running_.size());
  kept_tenant.reserve(p.running_.size());
  size_t si = 0, pi = 0;
  for (size_t j = 0; j < p.running_.size(); ++j) {
    const core::JobId id = p.running_[j].request.id;
    if (si < delta.stopped.size() && delta.stopped[si] < id) {
      return bad("stopped", cat("job ", delta.stopped[si].value, " was not running"));
    }
    if (si < delta.stopped.size() && delta.stopped[si] == id) {
      ++si;
      detail::release_gpus(p.running_[j].request, p.running_gpus_[j], s.held_, s.shared_);
      continue;
    }
    if (pi >= delta.progress.size() || delta.progress[pi].id != id) {
      return bad("progress", cat("expected running job ", id.value, " next"));
    }
    RunningJob& r = p.running_[j];
    const RunningProgress& now = delta.progress[pi++];
    r.last_checkpoint_at = now.last_checkpoint_at;
    r.preemptions = now.preemptions;
    r.attained_gpu_seconds = now.attained_gpu_seconds;
    kept.push_back(std::move(r));
    kept_gpus.push_back(std::move(p.running_gpus_[j]));
    kept_tenant.push_back(p.running_tenant_[j]);
  }
  if (si < delta.stopped.size()) {
    return bad("stopped", cat("job ", delta.stopped[si].value, " was not running"));
  }
  if (pi < delta.progress.size()) {
    return bad("progress", cat("job ", delta.progress[pi].id.value, " is not running"));
  }
  std::vector<std::vector<NodeGpus>> started_gpus(delta.started.size());
  std::vector<TenantIx> started_tenant(delta.started.size());
  for (size_t j = 0; j < delta.started.size(); ++j) {
    CORRAL_RETURN_IF_ERROR(attach_running(s, delta.started[j], s.held_, s.shared_, started_gpus[j],
                                          started_tenant[j]));
  }
  const size_t running_count = kept.size() + delta.started.size();
  s.running_.reserve(running_count);
  s.running_gpus_.reserve(running_count);
  s.running_tenant_.reserve(running_count);
  for (size_t k = 0, n = 0; k < kept.size() || n < delta.started.size();) {
    const bool take_new = k == kept.size() || (n < delta.started.size() &&
                                               delta.started[n].request.id < kept[k].request.id);
    if (!take_new && n < delta.started.size() &&
        delta.started[n].request.id == kept[k].request.id) {
      return bad(cat("started[", kept[k].request.id.value, "]"), "job is already running");
    }
    if (take_new) {
      s.running_.push_back(std::move(delta.started[n]));
      s.running_gpus_.push_back(std::move(started_gpus[n]));
      s.running_tenant_.push_back(started_tenant[n]);
      ++n;
    } else {
      s.running_.push_back(std::move(kept[k]));
      s.running_gpus_.push_back(std::move(kept_gpus[k]));
      s.running_tenant_.push_back(kept_tenant[k]);
      ++k;
    }
  }

  // Pending: the same, without GPUs.
  std::vector<PendingJob> kept_pending;
  std::vector<TenantIx> kept_pending_tenant;
  kept_pending.reserve(p.pending_.size());
  kept_pending_tenant.reserve(p.pending_.size());
  size_t di = 0;
  for (size_t j = 0; j < p.pending_.size(); ++j) {
    const core::JobId id = p.pending_[j].request.id;
    if (di < delta.dequeued.size() && delta.dequeued[di] < id) {
      return bad("dequeued", cat("job ", delta.dequeued[di].value, " was not pending"));
    }
    if (di < delta.dequeued.size() && delta.dequeued[di] == id) {
      ++di;
      continue;
    }
    kept_pending.push_back(std::move(p.pending_[j]));
    kept_pending_tenant.push_back(p.pending_tenant_[j]);
  }
  if (di < delta.dequeued.size()) {
    return bad("dequeued", cat("job ", delta.dequeued[di].value, " was not pending"));
  }
  std::vector<TenantIx> queued_tenant(delta.queued.size());
  for (size_t j = 0; j < delta.queued.size(); ++j) {
    const PendingJob& q = delta.queued[j];
    const auto field = [&] { return cat("pending[", q.request.id.value, "]"); };
    CORRAL_RETURN_IF_ERROR(check_request(s, q.request, field, queued_tenant[j]));
  }
  const size_t pending_count = kept_pending.size() + delta.queued.size();
  s.pending_.reserve(pending_count);
  s.pending_tenant_.reserve(pending_count);
  for (size_t k = 0, n = 0; k < kept_pending.size() || n < delta.queued.size();) {
    const bool take_new =
        k == kept_pending.size() ||
        (n < delta.queued.size() && delta.queued[n].request.id < kept_pending[k].request.id);
    if (!take_new && n < delta.queued.size() &&
        delta.queued[n].request.id == kept_pending[k].request.id) {
      return bad(cat("queued[", kept_pending[k].request.id.value, "]"), "job is already pending");
    }
    if (take_new) {
      s.pending_.push_back(std::move(delta.queued[n]));
      s.pending_tenant_.push_back(queued_tenant[n]);
      ++n;
    } else {
      s.pending_.push_back(std::move(kept_pending[k]));
      s.pending_tenant_.push_back(kept_pending_tenant[k]);
      ++k;
    }
  }
  CORRAL_RETURN_IF_ERROR(check_disjoint(s.running_, s.pending_));
  return s;
}

}  // namespace corral::sched
