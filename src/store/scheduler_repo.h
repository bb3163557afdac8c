// SchedulerRepo: what the scheduler loops write: their shard leases with the fencing
// epoch (migration 13 adds the lease's expiry and the replicas' rows), the state they
// keep across restarts (decayed tenant usage, elastic jobs' target sizes; migration 4),
// and the cross-shard quota count a commit is checked against.
//
// One of the repositories store::Tx is made of (store.h).
// Thread safety: as Tx (used only by the thread running the transaction, only during it).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/ids.h"
#include "core/result.h"
#include "core/status.h"
#include "core/time.h"

namespace corral::store {

struct TenantUsageRow {
  core::TenantId tenant;
  double gpu_seconds = 0;  // weighted GPU-seconds, decayed to as_of
  core::Time as_of;
};

struct ElasticTargetRow {
  core::JobId job;
  std::int32_t gpus = 0;  // the size the job restarts at
};

// A shard's lease: who holds it, at which epoch, until when (0: released or never
// renewed, so anyone may claim it).
struct LeaseRow {
  std::string shard;
  std::int64_t epoch = 0;
  std::string holder;
  core::Time expires_at;
};

// A corrald replica, alive while expires_at is in the future.
struct ReplicaRow {
  std::string name;
  std::string address;  // host:port of its API
  core::Time started_at;
  core::Time expires_at;
  std::string config_fingerprint;  // the scheduling config it runs (migration 22)
};

// The scheduling config the replicas agree on (server/cycle/config_agreement.h): its
// fingerprint, a short summary people read (the shard names), who stored it and when.
struct SchedConfigRow {
  std::string fingerprint;
  std::string summary;
  std::string set_by;
  core::Time set_at;
};

// What a tenant holds (active allocations) in thousandths of a GPU, by tenant and GPU type
// name.
using TenantTypeCounts = std::map<std::pair<std::string, std::string>, std::int64_t>;

class SchedulerRepo {
 public:
  virtual ~SchedulerRepo() = default;

  // Fencing. acquire_epoch() bumps and returns the shard's epoch: every earlier holder is
  // fenced. check_epoch() is Aborted with ErrorReason::kStaleEpoch unless `epoch` is
  // current (is_stale_epoch() below: another holder took the shard; not retried), and
  // holds the lease row for the rest of the transaction.
  virtual core::Result<std::int64_t> acquire_epoch(std::string_view shard,
                                                   std::string_view holder) = 0;
  virtual core::Status check_epoch(std::string_view shard, std::int64_t epoch) = 0;

  // Leases with an expiry (several replicas; server/cycle/scheduler.h). claim_lease() takes
  // the shard, bumping its epoch, when nobody holds it, its lease lapsed (expires_at <=
  // now), or `holder` holds it already (the same replica restarted); it returns the new
  // epoch, or nullopt while another holder's lease is live. renew_lease() moves the
  // expiry of the lease at `epoch`, kStaleEpoch when another holder took it since;
  // release_lease() lets it lapse at once (a replica stopping), a no-op when it is no
  // longer ours. hand_over_lease() keeps it live until `expires_at` but names `to` its
  // holder, so only `to` may claim it before then (claim_lease: the holder's own); a
  // no-op when it is no longer ours.
  virtual core::Result<std::optional<std::int64_t>> claim_lease(std::string_view shard,
                                                                std::string_view holder,
                                                                core::Time now,
                                                                core::Time expires_at) = 0;
  virtual core::Status renew_lease(std::string_view shard, std::int64_t epoch,
                                   core::Time expires_at) = 0;
  virtual core::Status release_lease(std::string_view shard, std::int64_t epoch) = 0;
  virtual core::Status hand_over_lease(std::string_view shard, std::int64_t epoch,
                                       std::string_view to, core::Time expires_at) = 0;
  virtual core::Result<std::vector<LeaseRow>> list_leases() = 0;  // by shard
  // put_replica() replaces the replica's row.
  virtual core::Status put_replica(const ReplicaRow& row) = 0;
  virtual core::Result<std::vector<ReplicaRow>> list_replicas() = 0;  // by name
  // The stored scheduling config; nullopt on a fresh database.
  virtual core::Result<std::optional<SchedConfigRow>> get_sched_config() = 0;
  // Stores `row` when the stored fingerprint is `expected` ("": none stored yet), and
  // says whether it did: of two replicas replacing the same config at once, one wins.
  virtual core::Result<bool> replace_sched_config(const SchedConfigRow& row,
                                                  std::string_view expected) = 0;

  // What each of `tenants` holds now, every shard's, by GPU type, in thousandths of a GPU
  // (a share counts its share, a whole GPU 1000); first it locks
  // those tenants' rows (lock_tenants(), TenantLock::kRecount), so two shards that
  // place for one tenant at once count one after the other and the second sees the
  // first's GPUs. SQLite has one writer: there the lock is the transaction itself.
  virtual core::Result<TenantTypeCounts> lock_tenant_holdings(
      const std::vector<core::TenantId>& tenants) = 0;
  // Tells the other replicas (PostgreSQL LISTEN/NOTIFY on `channel`) once this
  // transaction commits; nothing if it rolls back. SQLite: a no-op (one process).
  virtual core::Status notify(std::string_view channel, std::string_view payload) = 0;

  // put_tenant_usage() replaces the tenant's row.
  virtual core::Status put_tenant_usage(const TenantUsageRow& row) = 0;
  virtual core::Result<std::vector<TenantUsageRow>> list_tenant_usage() = 0;  // by tenant
  // An elastic job's size after a resize until it is placed again; set replaces.
  virtual core::Status set_elastic_target(const ElasticTargetRow& row, core::Time now) = 0;
  virtual core::Status clear_elastic_target(core::JobId job) = 0;
  virtual core::Result<std::vector<ElasticTargetRow>> list_elastic_targets() = 0;  // by job
};

// True when `s` is check_epoch()'s refusal: this holder's epoch is stale, another holder
// took the shard. Decided by the reason alone, never the message.
inline bool is_stale_epoch(const core::Status& s) { return s.is(core::ErrorReason::kStaleEpoch); }

}  // namespace corral::store
