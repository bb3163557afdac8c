// ClusterSnapshot: everything decide() may know, as plain data validated once.
//
// Both adapters (corrald from its store, corral-sim from its fleet model) fill a
// SnapshotInput and call build_snapshot(), which checks consistency (no GPU held twice,
// known GPU types, tenants and nodes, a tenant tree without cycles) and derives the
// indices the scheduler works with: dense vectors sorted by id and addressed by index,
// and the topology (region > cluster > spine > leaf > node > NVLink domain) as index
// arrays. Every domain lies inside one region: cluster, spine and leaf names are scoped
// by their region, and so are NVLink racks.
//
// A ClusterSnapshot is immutable; it is safe to share across threads.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/gpu_type.h"
#include "core/ids.h"
#include "core/job_spec.h"
#include "core/priority.h"
#include "core/reservation.h"
#include "core/result.h"
#include "core/tenant.h"
#include "core/time.h"
#include "core/topology.h"

namespace corral::sched {

// Indices into the snapshot's sorted vectors. -1 means none.
using NodeIx = std::int32_t;
using TypeIx = std::int32_t;
using TenantIx = std::int32_t;
using LeafIx = std::int32_t;
using SpineIx = std::int32_t;
using ClusterIx = std::int32_t;
using RackIx = std::int32_t;
using NvlRackIx = std::int32_t;
using RegionIx = std::int32_t;

// What a job's region resolves to when it is not a region of the fleet: kAnyRegion for a
// job that names none, kNoSuchRegion for one that names a region no node is in (it can
// never be placed; that is a pending reason, not a bad snapshot).
inline constexpr RegionIx kAnyRegion = -1;
inline constexpr RegionIx kNoSuchRegion = -2;

// A node's GPUs are tracked as a bit mask, so a node has at most this many GPUs.
inline constexpr std::int32_t kMaxGpusPerNode = 64;

// One GPU, named as the outside world names it.
struct GpuRef {
  core::NodeId node;
  std::int32_t index = 0;
  friend auto operator<=>(const GpuRef&, const GpuRef&) = default;
  friend bool operator==(const GpuRef&, const GpuRef&) = default;
};

// What a job's run time is expected to be, and what the figure rests on: it sets the
// planned start shown to the jobs waiting behind it (decide.cc). max_runtime stays the
// bound that backfill protects; an estimate only makes the forecast sharper.
enum class EstimateBasis {
  kMaxRuntime,  // nothing better known: the job's limit, shown as a bound
  kSpec,        // the job's own expectedRuntime
  kHistory,     // the median of its tenant's recent successful runs of the same name
};
std::string_view to_string(EstimateBasis basis);

struct RuntimeEstimate {
  core::Duration runtime{0};  // 0 with kMaxRuntime: max_runtime stands
  EstimateBasis basis = EstimateBasis::kMaxRuntime;
  std::int32_t runs = 0;  // kHistory: how many earlier runs it comes from
  friend bool operator==(const RuntimeEstimate&, const RuntimeEstimate&) = default;
};

// A task of a job array that limits how many of its tasks run at once: at most
// `max_running` jobs carrying the same `array` hold GPUs (core::ArraySpec).
struct ArrayLimit {
  core::JobId array;  // the array's id: its first task's job id
  std::int32_t max_running = 0;
  friend bool operator==(const ArrayLimit&, const ArrayLimit&) = default;
};

// What the scheduler needs to know of a job: its spec's resource-related fields plus
// the tier of its priority class. job_request_from_spec() fills one from a JobSpec.
struct JobRequest {
  core::JobId id;
  core::TenantId tenant;
  std::int32_t tier = 1;
  std::int32_t gpus = 1;
  // A share of a GPU, in thousandths (1-999), for a job that needs less than a GPU per
  // worker: `gpus` such shares, each on a GPU of its own (a gang of shares, all or
  // nothing); 0: whole GPUs. Shares are placed beside others on a GPU (place_share.cc) and
  // count toward quota and fair share as their thousandths.
  std::int32_t gpu_milli = 0;
  // With a share: the GPU memory each share needs on its GPU (the shares on a GPU never
  // promise more than it has); 0: none stated.
  std::int64_t gpu_memory_mib = 0;
  std::vector<core::GpuTypeId> gpu_types;  // acceptable types, preferred first; empty: any
  // Relative speed per GPU by type (core::Resources::gpu_speed): when given, the types
  // are tried by speed per unit of usage factor instead (candidate_types in decide.cc).
  std::map<core::GpuTypeId, double> gpu_speed;
  std::int32_t gpus_per_node = 0;  // 0: the scheduler chooses the split
  std::int32_t cpus_per_gpu = 0;
  std::int64_t memory_per_gpu_mib = 0;
  // The region every GPU must be in (a node's labels.region); empty: any.
  std::string region;
  core::TopologyConstraint topology;
  std::optional<core::ElasticRange> elastic;
  // An elastic job's scaling curve as measured on a GPU type (corrald: its workers'
  // reports there, merged with the declared curve), by type. The elastic allocator takes
  // a running job's speedups from the curve of the type it runs on, and `elastic->scaling`
  // where that type has none (a faster type is not better scaling: only the shape counts).
  std::map<core::GpuTypeId, std::vector<core::ScalingPoint>> scaling_by_type;
  bool preemptible = false;
  core::Duration max_runtime = core::seconds(72 * 3600);
  core::Duration checkpoint_interval{0};  // 0: the job does not checkpoint
  core::Duration restore_time{0};
  std::optional<core::ReservationId> reservation;
  // The best estimate of its run time (from the spec; an adapter may put history here).
  RuntimeEstimate estimate;
  // Set for a task of an array with a maxRunning limit (the adapter knows the array).
  std::optional<ArrayLimit> array;
  // Who submitted an interactive session (corrald: the submitting token's owner, else the
  // token's name), for the per-user session limit; empty for every other job (no rule reads
  // it), and for a session whose user is not known (all such count as one user).
  std::string user;
  // How long it has to run, by the estimate when there is one, else by its limit.
  core::Duration expected_runtime() const {
    return estimate.runtime.count() > 0 ? std::min(estimate.runtime, max_runtime) : max_runtime;
  }
  friend bool operator==(const JobRequest&, const JobRequest&) = default;
};

JobRequest job_request_from_spec(core::JobId id, const core::JobSpec& spec, std::int32_t tier);

// A job that asks for a share of one GPU rather than whole GPUs.
inline bool is_share(const JobRequest& r) { return r.gpu_milli > 0; }
// What `r` holds at `gpus` GPUs, in thousandths of a GPU: its share on each, or 1000 each.
inline std::int64_t gpu_milli_of(const JobRequest& r, std::int32_t gpus) {
  return (is_share(r) ? r.gpu_milli : std::int64_t{1000}) * gpus;
}

// An interactive session (core::kInteractiveTier): started only inside its tenant's
// guarantee and within its user's session limit, and never a preemption's victim.
inline bool is_session(const JobRequest& r) { return r.tier == core::kInteractiveTier; }

// Where a job that a pending job depends on stands, as the adapter found it in its store
// or model (core::Dependency): the facts decide() judges (dependencies.h). For a whole
// array the adapter sums up its tasks; for an elementwise dependency it names the task
// with the pending task's index.
struct DependencyFact {
  core::JobId job;
  core::DependencyCondition on = core::DependencyCondition::kSuccess;
  bool started = false;    // it (a task of it) has started running, whether or not it ended
  bool ended = false;      // it (every task of it) has ended
  bool succeeded = false;  // it (every task of it) ended in success
  // When it first started (for an array, its first task to start) and when it ended (its
  // last task); epoch 0 while it has not. A job whose dependencies are met counts as
  // queued from when the last of them was met (Slurm's eligible time): the start for
  // `on: start`, the end otherwise. Waiting on a dependency is not waiting in line.
  core::Time started_at{};
  core::Time ended_at{};
  friend bool operator==(const DependencyFact&, const DependencyFact&) = default;
};

struct PendingJob {
  JobRequest request;
  core::Time queued_at;             // when it (re-)entered the queue
  std::int32_t attempt = 0;         // launches so far
  std::int32_t preemptions = 0;     // times it was preempted so far
  double attained_gpu_seconds = 0;  // service received in earlier attempts (Tiresias)
  // Requeued by a resize (corrald's elastic_targets): the size decide() gave it, which its
  // request is capped at; 0: none. It waits for GPUs that jobs still stopping give up
  // when they would seat it at that size (the shrink it grows into) rather than restart
  // smaller.
  std::int32_t resize_target = 0;
  // What it waits for before it may be queued at all (core::JobSpec::depends_on).
  std::vector<DependencyFact> dependencies;
  friend bool operator==(const PendingJob&, const PendingJob&) = default;
};

struct RunningJob {
  JobRequest request;
  core::Time started_at;
  std::optional<core::Time> last_checkpoint_at;
  std::int32_t preemptions = 0;     // times this job has been preempted so far
  std::vector<GpuRef> gpus;         // for an elastic job, its current size
  bool borrowed = false;            // placed on capacity lent beyond its tenant's guarantee
  bool stopping = false;            // already asked to stop (preempting, cancelled, draining)
  double attained_gpu_seconds = 0;  // service so far, this attempt included (Tiresias)
  std::optional<core::ReservationId> reservation;  // placed inside this reservation
  friend bool operator==(const RunningJob&, const RunningJob&) = default;
};

// The builder's input: what the caller knows, in any order.
struct SnapshotInput {
  std::vector<core::GpuType> gpu_types;
  std::vector<core::Node> nodes;
  std::vector<core::Rack> racks;  // power caps; racks named by nodes but absent here are uncapped
  std::vector<core::Tenant> tenants;
  // Each tenant's fair-share usage: GPU-seconds weighted by the GPU type's usage factor
  // and decayed to the decision time (see usage.h). Absent tenants have none.
  std::map<core::TenantId, double> usage;
  std::vector<core::Reservation> reservations;
  std::vector<RunningJob> running;
  std::vector<PendingJob> pending;
  friend bool operator==(const SnapshotInput&, const SnapshotInput&) = default;
};

// What changed in the jobs since a snapshot was built, for the delta form of
// rebuild_snapshot(): the caller names the jobs that left each list and gives the ones
// that entered it, plus the fields of the jobs that stayed running that move with time.
// A job may leave and re-enter a list in one delta (stopped and started, say).
struct RunningProgress {
  core::JobId id;
  std::optional<core::Time> last_checkpoint_at;
  std::int32_t preemptions = 0;
  double attained_gpu_seconds = 0;
};

struct JobsDelta {
  std::map<core::TenantId, double> usage;       // every tenant's, as in SnapshotInput
  std::vector<core::Reservation> reservations;  // all of them, as in SnapshotInput
  std::vector<core::JobId> stopped;             // running jobs that no longer run
  std::vector<RunningJob> started;              // jobs running now that were not (or stopped first)
  std::vector<core::JobId> dequeued;            // pending jobs that are no longer pending
  std::vector<PendingJob> queued;  // jobs pending now that were not (or dequeued first)
  // For each running job that stays: exactly the jobs of the previous snapshot's running
  // list, less `stopped`. Every list here may come in any order.
  std::vector<RunningProgress> progress;
};

// Per-node facts derived once.
struct NodeTopo {
  TypeIx type = -1;  // a node's GPUs are all one type (-1: the node has no GPUs)
  RegionIx region = -1;
  ClusterIx cluster = -1;
  SpineIx spine = -1;
  LeafIx leaf = -1;
  RackIx rack = -1;
  NvlRackIx nvl_rack = -1;
  std::int64_t gpu_watts = 0;     // what each GPU counts against its rack's cap (node_gpu_watts)
  std::uint64_t all_mask = 0;     // every GPU on the node
  std::uint64_t usable_mask = 0;  // healthy GPUs on an active (not cordoned/draining) node
  std::vector<std::uint64_t> domain_masks;  // one per NVLink domain, by domain number
};

struct TenantInfo {
  TenantIx parent = -1;
  std::vector<TenantIx> children;
};

// One running job's GPUs on one node, by index: what the scheduler works with.
struct NodeGpus {
  NodeIx node = -1;
  std::uint64_t mask = 0;
};

// What the running shares hold of each GPU that shares are on, by (node, GPU index).
struct ShareUse {
  std::int64_t milli = 0;
  std::int64_t memory_mib = 0;
};
using SharedGpus = std::map<std::pair<NodeIx, std::int32_t>, ShareUse>;

class ClusterSnapshot {
 public:
  const std::vector<core::GpuType>& gpu_types() const { return fleet_->gpu_types; }
  const std::vector<core::Node>& nodes() const { return fleet_->nodes; }
  const std::vector<NodeTopo>& topo() const { return fleet_->topo; }
  const std::vector<core::Tenant>& tenants() const { return fleet_->tenants; }
  const std::vector<TenantInfo>& tenant_tree() const { return fleet_->tenant_tree; }
  const std::vector<double>& usage() const { return usage_; }  // by TenantIx
  const std::vector<core::Reservation>& reservations() const { return reservations_; }
  const std::vector<RunningJob>& running() const { return running_; }  // sorted by id
  const std::vector<PendingJob>& pending() const { return pending_; }  // sorted by id
  // running()[j]'s GPUs as (node, mask), one entry per node in node order (a job of shares:
  // one per GPU), and its tenant: derived once here so that decide() never looks a GPU's
  // node up by name.
  const std::vector<NodeGpus>& running_gpus(std::size_t j) const { return running_gpus_[j]; }
  TenantIx running_tenant(std::size_t j) const { return running_tenant_[j]; }
  TenantIx pending_tenant(std::size_t j) const { return pending_tenant_[j]; }

  std::int32_t region_count() const {
    return static_cast<std::int32_t>(fleet_->region_names.size());
  }
  std::int32_t cluster_count() const {
    return static_cast<std::int32_t>(fleet_->cluster_names.size());
  }
  std::int32_t spine_count() const { return static_cast<std::int32_t>(fleet_->spine_names.size()); }
  std::int32_t leaf_count() const { return static_cast<std::int32_t>(fleet_->leaf_names.size()); }
  std::int32_t nvl_rack_count() const {
    return static_cast<std::int32_t>(fleet_->nvl_rack_names.size());
  }
  const std::string& region_name(RegionIx ix) const { return fleet_->region_names[ix]; }
  const std::string& leaf_name(LeafIx ix) const { return fleet_->leaf_names[ix]; }
  const std::string& spine_name(SpineIx ix) const { return fleet_->spine_names[ix]; }
  const std::string& rack_name(RackIx ix) const { return fleet_->rack_names[ix]; }
  std::int64_t rack_power_cap_watts(RackIx ix) const { return fleet_->rack_caps[ix]; }  // 0: none
  SpineIx spine_of_leaf(LeafIx ix) const { return fleet_->leaf_spine[ix]; }
  ClusterIx cluster_of_spine(SpineIx ix) const { return fleet_->spine_cluster[ix]; }
  RegionIx region_of_cluster(ClusterIx ix) const { return fleet_->cluster_region[ix]; }
  RegionIx region_of_nvl_rack(NvlRackIx ix) const { return fleet_->nvl_rack_region[ix]; }

  // The region `r` must run in: kAnyRegion when it names none, kNoSuchRegion when no node
  // is in the one it names. O(regions): a fleet has a handful.
  RegionIx region_of(const JobRequest& r) const;

  std::optional<TypeIx> find_type(const core::GpuTypeId& id) const;
  std::optional<NodeIx> find_node(const core::NodeId& id) const;
  std::optional<TenantIx> find_tenant(const core::TenantId& id) const;

  // The largest number of GPUs any node of `type` has.
  std::int32_t max_node_gpus(TypeIx type) const { return fleet_->max_node_gpus[type]; }
  // GPUs of `type` in the fleet, usable or not.
  std::int32_t total_gpus(TypeIx type) const { return fleet_->total_gpus[type]; }

 private:
  friend core::Result<ClusterSnapshot> build_snapshot(SnapshotInput input);

  // The same as build_snapshot() of `jobs` with `same_fleet`'s GPU types, nodes, racks and
  // tenants, without validating and indexing those again: `jobs` carries only usage,
  // reservations, running and pending jobs (its other lists must be empty). For a caller
  // that builds a snapshot every cycle on a fleet that has not changed (corral-sim); the
  // result is equal to the full build's, which tests/sched checks.
  core::Result<ClusterSnapshot> rebuild_snapshot(const ClusterSnapshot& same_fleet,
                                                 SnapshotInput jobs);
  friend core::Result<ClusterSnapshot> rebuild_snapshot(const ClusterSnapshot& same_fleet,
                                                        SnapshotInput jobs);
  // Validates and attaches usage, reservations and jobs to a snapshot whose fleet is set.
  static core::Status attach_jobs(ClusterSnapshot& s, SnapshotInput& in);
  friend core::Result<ClusterSnapshot> rebuild_snapshot(ClusterSnapshot&& previous,
                                                        JobsDelta delta);

  // What depends only on the fleet and the tenants. Shared, never changed once built, by
  // the snapshots rebuild_snapshot() derives from one another.
  struct Fleet {
    std::vector<core::GpuType> gpu_types;
    std::vector<core::Node> nodes;
    std::unordered_map<std::string, NodeIx> node_index;  // by id: find_node() per GPU is hot
    std::vector<NodeTopo> topo;
    std::vector<core::Tenant> tenants;
    std::vector<TenantInfo> tenant_tree;
    std::vector<std::string> region_names, cluster_names, spine_names, leaf_names, rack_names,
        nvl_rack_names;
    std::vector<SpineIx> leaf_spine;
    std::vector<ClusterIx> spine_cluster;
    std::vector<RegionIx> cluster_region;
    std::vector<RegionIx> nvl_rack_region;
    std::vector<std::int64_t> rack_caps;
    std::vector<std::int32_t> max_node_gpus;
    std::vector<std::int32_t> total_gpus;
  };

  std::shared_ptr<const Fleet> fleet_;
  std::vector<double> usage_;
  std::vector<core::Reservation> reservations_;
  std::vector<RunningJob> running_;
  std::vector<PendingJob> pending_;
  std::vector<std::vector<NodeGpus>> running_gpus_;
  std::vector<TenantIx> running_tenant_;
  std::vector<TenantIx> pending_tenant_;
  std::vector<std::uint64_t> held_;  // [node] GPUs held by running jobs
  SharedGpus shared_;                // also marked in held_ while any share holds them
};

// Validates `input` and derives the indices. InvalidArgument names the first problem
// (a GPU held by two running jobs, an unknown GPU type, a tenant cycle, ...).
core::Result<ClusterSnapshot> build_snapshot(SnapshotInput input);

// The same as build_snapshot() of `jobs` with `same_fleet`'s GPU types, nodes, racks and
// tenants, without validating and indexing those again: `jobs` carries only usage,
// reservations, running and pending jobs (its other lists must be empty). For a caller
// that builds a snapshot every cycle on a fleet that has not changed (corral-sim); the
// result equals the full build's (tests/sched/snapshot_test.cc).
core::Result<ClusterSnapshot> rebuild_snapshot(const ClusterSnapshot& same_fleet,
                                               SnapshotInput jobs);

// The same again, from the previous snapshot (consumed) and what changed since: jobs that
// stayed are moved, not copied or validated again; only the ones that entered a list are
// checked, as build_snapshot() would. The result equals build_snapshot() of the whole
// lists (tests/sched/snapshot_test.cc). InvalidArgument names the field when the delta
// does not fit `previous` (a stopped job that was not running, progress for the wrong
// jobs, ...); `previous` is then left unusable.
core::Result<ClusterSnapshot> rebuild_snapshot(ClusterSnapshot&& previous, JobsDelta delta);

}  // namespace corral::sched
