// corrald's snapshot adapter: store rows in, a complete sched::SnapshotInput out.
//
// One contract, two adapters (ARCHITECTURE.md, "The scheduling cycle"): corral-sim fills
// the same SnapshotInput from its fleet model (sim/snapshot_from_fleet.h), and
// tests/server/cycle/snapshot_contract_test.cc builds one small cluster through both and
// compares the results field by field. A field added to the snapshot must be filled here
// and there, or that test fails.
//
// The read is a fixed number of batch queries in one read transaction, whatever the size
// of the fleet (read_store_view); the pending queue, the decayed fair-share usage and the
// run history are kept in memory by the scheduler loop and passed in (StoreFacts).
//
// Thread safety: free functions; RequestCache needs external synchronization.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"
#include "core/time.h"
#include "sched/estimate.h"
#include "sched/snapshot.h"
#include "server/base/spec_cache.h"
#include "store/store.h"

namespace corral::server {

// What an elastic job's workers reported: per GPU type, its throughput at each size (by
// size), and the type of its newest report.
struct ObservedScaling {
  core::GpuTypeId newest;
  std::map<core::GpuTypeId, std::vector<core::ScalingPoint>> by_type;
};

// Everything one cycle reads from the store but the pending queue.
struct StoreView {
  std::vector<store::NodeRow> nodes;
  std::map<std::string, store::ObservedNode> observed;     // by node
  std::map<std::string, store::AgentSessionRow> sessions;  // by node
  std::vector<store::TenantRow> tenants;
  std::vector<store::ReservationRow> reservations;
  std::vector<store::RackCapRow> rack_caps;
  std::vector<store::JobRow> holding;                    // jobs holding GPUs, whatever their phase
  std::vector<store::AllocationRow> allocations;         // active ones
  std::map<std::int64_t, core::Time> last_checkpoint;    // holders' newest checkpoint
  std::map<std::int64_t, std::int32_t> elastic_targets;  // job -> size after a resize
  // job -> the throughput its workers reported at each size, per GPU type
  std::map<std::int64_t, ObservedScaling> observed_scaling;
  // The facts of pending jobs' dependencies, by job (server/controllers/job_dependencies.h):
  // read with the queue, by read_dependency_facts().
  std::map<std::int64_t, std::vector<sched::DependencyFact>> dependencies;
  // The GPU-ms held by the ended attempts of every trial of each sweep with a pending
  // trial (by the sweep's id): read with the queue, by read_sweep_service(). A sweep is
  // one workload to fair share (core::SweepSpec), so its pending trials' attained service
  // is the sweep's, this and its running trials' current attempts.
  std::map<std::int64_t, std::int64_t> sweep_service;
  // Pending jobs held out of the cycle, with the reason: by a dataset version that has
  // not passed (server/controllers/dataset_gate.h; the first such version's reason), or by their
  // tenant's retraining budget (server/controllers/retraining_budget.h).
  std::map<std::int64_t, std::string> held;
};

// `now` places the retraining budget's period.
core::Result<StoreView> read_store_view(store::Tx& tx, core::Time now);

// StoreView::observed_scaling from the store's rows.
std::map<std::int64_t, ObservedScaling> observed_scaling(
    const std::vector<store::ThroughputRow>& rows);

// Parsed job requests by job id: a stored spec is decoded once per process (specs never
// change), not once per cycle. The decode is the SpecCache's, and a job's decoded spec
// goes to the SpecCache when the scheduler places the job (share()), so the agents'
// assignments and the lifecycle controllers never decode it a second time.
class RequestCache {
 public:
  explicit RequestCache(SpecCache& specs) : specs_(specs) {}

  // The job's request; null when its stored spec does not parse (never for a row this
  // server wrote: specs are validated before they are stored).
  const sched::JobRequest* get(const store::JobRow& job);
  // The job's dependencies as its stored spec resolved them (core::JobSpec::depends_on);
  // null when it has none or its spec does not parse.
  const std::vector<core::Dependency>* dependencies(const store::JobRow& job);
  // Whether the job is a trial of a sweep (its spec has one); false when it does not parse.
  bool sweep_trial(const store::JobRow& job);
  // Hands the job's decoded spec to the SpecCache (it was just placed).
  void share(core::JobId job);
  // Forgets every job not in `live`.
  void retain(const std::set<std::int64_t>& live);

 private:
  struct Entry {
    sched::JobRequest request;
    SpecCache::Decoded spec;
  };
  SpecCache& specs_;
  std::map<std::int64_t, Entry> requests_;
};

// StoreView::dependencies of `pending` (the queue, by id).
core::Result<std::map<std::int64_t, std::vector<sched::DependencyFact>>> read_dependency_facts(
    store::JobRepo& jobs, const std::map<std::int64_t, store::JobRow>& pending,
    RequestCache& requests);

// StoreView::sweep_service of the sweeps with a trial in `pending`.
core::Result<std::map<std::int64_t, std::int64_t>> read_sweep_service(
    store::JobRepo& jobs, const std::map<std::int64_t, store::JobRow>& pending,
    RequestCache& requests);

// From the store's rows (latest first per name, as Tx::list_runs() returns them).
sched::RunHistory run_history_from(const std::vector<store::RunRow>& rows);

// What the scheduler loop keeps in memory beside the view.
struct StoreFacts {
  const std::map<std::int64_t, store::JobRow>& pending;  // the queue, by id
  const std::map<core::TenantId, double>& usage;         // decayed fair-share usage at `now`
  const sched::RunHistory& runs;
};

// The SnapshotInput of the cycle at `now`. Rows the snapshot cannot use are left out
// rather than stalling the cycle: a node or tenant whose stored JSON does not parse, a
// job of an unknown tenant, a pending job in restart backoff (its reason says until when)
// or held by a dataset version (server/controllers/dataset_gate.h; its reason names the version).
sched::SnapshotInput snapshot_from_store(const StoreView& view, const StoreFacts& facts,
                                         RequestCache& requests, core::Time now);

// The rack power caps in force: the admin config's where it names the rack, else the
// smallest cap any node's agent declared. Racks without a cap are absent.
std::vector<core::Rack> racks_from(const std::vector<store::RackCapRow>& caps);

}  // namespace corral::server
