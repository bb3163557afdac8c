// Store: Corral's durable state behind one narrow interface.
//
// Two implementations sit behind it: SQLite (sqlite/, the embedded default: one file,
// WAL, synchronous=FULL) and PostgreSQL (postgres/, libpq). Both run the same versioned
// schema migrations (migrations/NNNN_*.sql) at open, and the same conformance suite
// (tests/store/store_conformance_test.cc).
//
// State is kept apart by writer, as ARCHITECTURE.md's table says:
//   desired      jobs (spec, phase, attempt, reason), allocations, node admin state,
//                tenants, reservations
//   observed     node inventory and heartbeats (node_inventory), never desired state
//   telemetry    telemetry_samples
//   checkpoints  checkpoint metadata (the bytes live at the uri)
//   billing      billing_ledger, append-only, one idempotency key per entry
//   audit        audit_log, append-only, hash-chained (the chain is computed by the
//                server, which owns the hash function; the store keeps the head row)
//
// Every change happens inside Store::transact(): the callback gets a Tx, and its
// writes commit together, durably, before transact() returns OK; or none do. The store
// refuses a second active allocation of one GPU with a unique index, whatever the
// caller believes, and fences scheduler writes by epoch (check_epoch).
//
// Thread safety: a Store is safe for concurrent use; transact() may be called from any
// thread. A Tx is used only by the thread running the callback, only during it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/checkpoint.h"
#include "core/ids.h"
#include "core/job_phase.h"
#include "core/result.h"
#include "core/status.h"
#include "core/time.h"
#include "core/topology.h"

namespace corral::store {

// ---- desired state -------------------------------------------------------------------

struct JobRow {
  core::JobId id;
  core::TenantId tenant;
  std::string name;
  std::string priority_class;
  std::int32_t tier = 1;
  std::int32_t gpus = 0;
  std::string spec_json;  // normalized spec with secret values masked
  core::JobPhase phase = core::JobPhase::kPending;
  std::int32_t attempt = 0;
  std::string reason;               // why it is where it is (pending reason, cancel note, ...)
  std::string pending_kind;         // the scheduler's PendingKind name while pending, else empty
  std::int32_t queue_position = 0;  // 1-based while pending, else 0
  core::Time created_at;
  core::Time updated_at;
  core::Time queued_at;              // when it (re-)entered the queue
  std::int32_t restarts = 0;         // failed or lost attempts restarted so far (spec.maxRestarts)
  core::Time not_before{};           // restart backoff: not placed before this (0: no wait)
  std::int32_t preemptions = 0;      // times the scheduler preempted it
  std::int64_t attained_gpu_ms = 0;  // GPU-ms held by its ended attempts (store-maintained)
  std::int64_t stop_grace_ms = 0;    // grace of the stop last asked of it (0: agents' default)
  // While pending: its planned start, forecast and at the latest (epoch 0: none).
  core::Time planned_start{};
  core::Time planned_latest{};
};

// What insert_job() needs; the id and timestamps come from the store and `now`.
struct NewJob {
  core::TenantId tenant;
  std::string name;
  std::string priority_class;
  std::int32_t tier = 1;
  std::int32_t gpus = 0;
  std::string spec_json;
  std::string secret_env_json = "{}";  // kept in its own table, read only to launch
  core::Time now;
};

struct JobFilter {
  std::optional<core::TenantId> tenant;
  std::vector<core::JobPhase> phases;  // empty: any phase
  std::int64_t after_id = 0;           // ids greater than this (pagination)
  std::int32_t limit = 1000;
};

struct JobEventRow {
  std::int64_t id = 0;  // assigned by the store
  core::JobId job;
  core::Time time;
  std::string kind;  // "submitted", "placed", "pending", "cancelled", ...
  std::string message;
};

// One GPU held by one job attempt. Released rows stay as history (active = false).
struct AllocationRow {
  std::int64_t id = 0;  // assigned by the store
  core::JobId job;
  std::int32_t attempt = 0;
  core::NodeId node;
  std::int32_t gpu_index = 0;
  core::GpuTypeId gpu_type;
  std::int64_t epoch = 0;  // the scheduler epoch that made it
  bool active = true;
  bool borrowed = false;
  core::Time created_at;
  std::optional<core::Time> released_at;
};

// A node as registered: its place in the fleet and its admin state (desired).
struct NodeRow {
  core::NodeId id;
  std::string spec_json;  // labels, cpus, memory, GPUs as registered
  core::NodeAdminState admin = core::NodeAdminState::kActive;
  std::string admin_reason;  // why cordoned/draining ("" when active)
  core::Time created_at;
  core::Time updated_at;
};

struct TenantRow {
  core::TenantId id;
  std::string config_json;  // weight, parent, quotas, admission limits
  core::Time updated_at;
};

struct ReservationRow {
  core::ReservationId id;
  core::TenantId tenant;
  std::string spec_json;
  core::Time created_at;
};

// ---- observations, telemetry, billing -------------------------------------------------

// What a node's agent last reported. Never overwrites NodeRow.
struct InventoryRow {
  core::NodeId node;
  std::string inventory_json;  // GPUs with health as observed
  core::Time heartbeat_at;
};

// A node's agent as corrald knows it (docs/agent-protocol.md). Written by corrald when
// the agent joins or heartbeats and by the node-health controller when it declares the
// node lost (epoch + 1, lost = true), which fences every later report of that agent.
struct AgentSessionRow {
  core::NodeId node;
  std::int64_t epoch = 1;
  std::string agent_url;
  std::string log_key;  // secret; never returned by an API read
  core::Time joined_at;
  core::Time heartbeat_at;
  bool lost = false;
};

// One worker process as its agent reported it (observed state).
struct WorkerRow {
  core::JobId job;
  std::int32_t attempt = 0;
  std::int32_t rank = 0;
  core::NodeId node;
  std::int64_t pid = 0;
  std::string state;  // "running" or "exited"
  std::int32_t exit_code = 0;
  std::int32_t signal = 0;
  core::Time started_at;
  core::Time exited_at;
};

struct TelemetrySample {
  core::NodeId node;
  std::int32_t gpu_index = 0;
  core::Time time;
  double utilization = 0;  // 0..1
  double power_watts = 0;
};

struct LedgerEntry {
  std::string idempotency_key;  // a second entry with the same key is ignored
  core::TenantId tenant;
  core::JobId job;
  core::GpuTypeId gpu_type;
  std::int64_t gpu_ms = 0;
  std::int64_t amount_micros = 0;
  core::Time start;
  core::Time end;
};

// ---- auth, idempotency, audit ---------------------------------------------------------

struct TokenRow {
  std::string hash;  // hex SHA-256 of the bearer token; the token itself is never stored
  std::string role;  // "admin", "member", "agent"
  std::string tenant;
  std::string node;
  core::Time created_at;
};

// The first answer to a mutating request, returned again to every retry with the same
// key. `scope` is the caller's identity so keys of different callers never collide.
struct IdempotencyRow {
  std::string scope;
  std::string key;
  std::string request_hash;
  std::int32_t status = 0;
  std::string response_body;
  core::Time created_at;
};

struct AuditRow {
  std::int64_t seq = 0;  // 1, 2, 3, ... with no gaps
  core::Time time;
  std::string actor;
  std::string action;
  std::string target;
  std::string before;  // summaries, never secrets
  std::string after;
  std::string request_id;
  std::string prev_hash;  // the hash of entry seq-1 ("" for the first)
  std::string hash;
};

// The chain's head, locked for the rest of the transaction by lock_audit_head().
struct AuditHead {
  std::int64_t next_seq = 1;
  std::string prev_hash;
};

// ---- transactions ---------------------------------------------------------------------

// Scheduler state kept across restarts (migration 4); written only by the scheduler loop.
struct TenantUsageRow {
  core::TenantId tenant;
  double gpu_seconds = 0;  // weighted GPU-seconds, decayed to as_of
  core::Time as_of;
};

// A rack's power cap as one party declared it (an agent at join, or the admin config).
struct RackCapRow {
  std::string rack;
  std::string declared_by;  // "config" or "node/<id>"
  std::int64_t power_cap_watts = 0;
  core::Time updated_at;
};

// One successful run of a job: how long its attempts held GPUs, for run-time estimates.
struct RunRow {
  core::TenantId tenant;
  std::string name;
  core::JobId job;
  core::Duration run{0};
  core::Time finished_at;
};

// The latest confirmed checkpoint of a job holding GPUs.
struct CheckpointTimeRow {
  core::JobId job;
  core::Time time;
};

struct ElasticTargetRow {
  core::JobId job;
  std::int32_t gpus = 0;  // the size the job restarts at
};

// The operations available inside one transaction. Reads see the transaction's own
// writes. Errors: AlreadyExists for a unique-key clash (a second active allocation of a
// GPU, a duplicate id), Aborted with ErrorReason::kRaced for a serialization conflict or
// a busy database (transact retries those) and with kStaleEpoch from check_epoch (final),
// Unavailable when the database cannot be reached.
class Tx {
 public:
  virtual ~Tx() = default;

  // Jobs.
  virtual core::Result<JobRow> insert_job(const NewJob& job) = 0;
  virtual core::Result<std::optional<JobRow>> get_job(core::JobId id) = 0;
  virtual core::Result<std::vector<JobRow>> list_jobs(const JobFilter& filter) = 0;
  // Every job that holds an active allocation, whatever its phase (running jobs, stopping
  // ones, and ended ones whose GPUs await their agents' confirmation), by id.
  virtual core::Result<std::vector<JobRow>> list_jobs_holding_gpus() = 0;
  // Writes every mutable field of `row` if the job is still in `expected`; false (and
  // nothing written) when its phase changed meanwhile (compare-and-set).
  virtual core::Result<bool> update_job(const JobRow& row, core::JobPhase expected) = 0;
  virtual core::Result<std::string> get_job_secrets(core::JobId id) = 0;
  // How many of `tenant`'s jobs are pending: one row read (a counter kept by
  // insert_job and update_job), not a count over the queue.
  virtual core::Result<std::int64_t> count_pending_jobs(const core::TenantId& tenant) = 0;
  virtual core::Status append_job_event(const JobEventRow& event) = 0;
  virtual core::Result<std::vector<JobEventRow>> list_job_events(core::JobId job) = 0;

  // Allocations, one row per GPU.
  virtual core::Status insert_allocation(const AllocationRow& row) = 0;
  // Marks every active allocation of `job` released at `now`; returns how many. Each
  // released GPU's held time is added to the job's attained_gpu_ms (here as below).
  virtual core::Result<std::int64_t> release_allocations(core::JobId job, core::Time now) = 0;
  virtual core::Result<std::vector<AllocationRow>> list_active_allocations() = 0;
  virtual core::Result<std::vector<AllocationRow>> list_allocations(core::JobId job) = 0;
  // Active allocations on one node, by GPU index.
  virtual core::Result<std::vector<AllocationRow>> list_active_allocations_on(
      const core::NodeId& node) = 0;
  // Marks every active allocation on `node` released (the node was fenced); returns how
  // many.
  virtual core::Result<std::int64_t> release_allocations_on(const core::NodeId& node,
                                                            core::Time now) = 0;

  // Nodes: admin state (desired) and inventory (observed).
  virtual core::Status upsert_node(const NodeRow& row) = 0;
  virtual core::Result<std::optional<NodeRow>> get_node(const core::NodeId& id) = 0;
  virtual core::Result<std::vector<NodeRow>> list_nodes() = 0;
  virtual core::Status upsert_inventory(const InventoryRow& row) = 0;
  virtual core::Result<std::optional<InventoryRow>> get_inventory(const core::NodeId& id) = 0;
  virtual core::Result<std::vector<InventoryRow>> list_inventory() = 0;
  // Replaces the cap `row.declared_by` declared for `row.rack`.
  virtual core::Status put_rack_cap(const RackCapRow& row) = 0;
  // Removes every cap declared by `declared_by` (the config's, before it writes its own).
  virtual core::Status delete_rack_caps(std::string_view declared_by) = 0;
  virtual core::Result<std::vector<RackCapRow>> list_rack_caps() = 0;

  // Node agents (observed workers, fencing epochs).
  virtual core::Status upsert_agent_session(const AgentSessionRow& row) = 0;
  virtual core::Result<std::optional<AgentSessionRow>> get_agent_session(
      const core::NodeId& node) = 0;
  virtual core::Result<std::vector<AgentSessionRow>> list_agent_sessions() = 0;
  virtual core::Status upsert_worker(const WorkerRow& row) = 0;
  // Every reported worker of `job`, by (attempt, rank).
  virtual core::Result<std::vector<WorkerRow>> list_workers(core::JobId job) = 0;

  // Tenants and reservations.
  virtual core::Status put_tenant(const TenantRow& row) = 0;
  virtual core::Result<std::optional<TenantRow>> get_tenant(const core::TenantId& id) = 0;
  virtual core::Result<std::vector<TenantRow>> list_tenants() = 0;
  virtual core::Status insert_reservation(const ReservationRow& row) = 0;
  virtual core::Result<std::vector<ReservationRow>> list_reservations() = 0;

  // Checkpoints, telemetry, billing.
  virtual core::Status insert_checkpoint(const core::Checkpoint& checkpoint) = 0;
  virtual core::Result<std::optional<core::Checkpoint>> latest_checkpoint(core::JobId job) = 0;
  // Every checkpoint of `job`, oldest first (by time, then insertion).
  virtual core::Result<std::vector<core::Checkpoint>> list_checkpoints(core::JobId job) = 0;
  // The time of the newest checkpoint of each job that holds an active allocation.
  virtual core::Result<std::vector<CheckpointTimeRow>> list_holders_checkpoint_times() = 0;
  // Records a successful run, keeping the latest `keep` of its (tenant, name).
  virtual core::Status insert_run(const RunRow& row, std::int32_t keep) = 0;
  // The recorded runs of the given job names (any tenant), latest first per name.
  virtual core::Result<std::vector<RunRow>> list_runs(const std::vector<std::string>& names) = 0;
  virtual core::Status insert_telemetry(const TelemetrySample& sample) = 0;
  // False when an entry with the same idempotency key exists (nothing written).
  virtual core::Result<bool> insert_ledger_entry(const LedgerEntry& entry) = 0;
  virtual core::Result<std::vector<LedgerEntry>> list_ledger(const core::TenantId& tenant) = 0;

  // Auth and idempotency.
  virtual core::Status insert_token(const TokenRow& row) = 0;
  virtual core::Result<std::optional<TokenRow>> find_token(std::string_view hash) = 0;
  virtual core::Result<std::int64_t> count_tokens() = 0;
  virtual core::Result<std::optional<IdempotencyRow>> get_idempotency(std::string_view scope,
                                                                      std::string_view key) = 0;
  // AlreadyExists when (scope, key) is taken, e.g. by a concurrent first attempt.
  virtual core::Status put_idempotency(const IdempotencyRow& row) = 0;

  // Audit. lock_audit_head() serializes appenders until the transaction ends; the
  // caller computes the entry's hash and inserts it with insert_audit().
  virtual core::Result<AuditHead> lock_audit_head() = 0;
  virtual core::Status insert_audit(const AuditRow& row) = 0;
  // The head as it stands, without locking it (for verification).
  virtual core::Result<AuditHead> read_audit_head() = 0;
  virtual core::Result<std::vector<AuditRow>> list_audit(std::int64_t after_seq,
                                                         std::int32_t limit) = 0;

  // Scheduler fencing. acquire_epoch() bumps and returns the shard's epoch: every
  // earlier holder is fenced. check_epoch() is Aborted with ErrorReason::kStaleEpoch
  // unless `epoch` is current (is_stale_epoch() below: another holder took the shard;
  // not retried), and holds the lease row for the rest of the transaction.
  virtual core::Result<std::int64_t> acquire_epoch(std::string_view shard,
                                                   std::string_view holder) = 0;
  virtual core::Status check_epoch(std::string_view shard, std::int64_t epoch) = 0;

  // Scheduler state kept across restarts. put_tenant_usage() replaces the tenant's row.
  virtual core::Status put_tenant_usage(const TenantUsageRow& row) = 0;
  virtual core::Result<std::vector<TenantUsageRow>> list_tenant_usage() = 0;
  // An elastic job's size after a resize until it is placed again; set replaces.
  virtual core::Status set_elastic_target(const ElasticTargetRow& row, core::Time now) = 0;
  virtual core::Status clear_elastic_target(core::JobId job) = 0;
  virtual core::Result<std::vector<ElasticTargetRow>> list_elastic_targets() = 0;

  // The cluster's identity (migration 6): 32 lowercase hex digits, random, made by the
  // first call on a store and the same for every later call, reopen and replica (two
  // first calls at once agree on one). It scopes what agents keep on their nodes.
  virtual core::Result<std::string> cluster_id() = 0;
};

// True when `s` is check_epoch()'s refusal: this holder's epoch is stale, another holder
// took the shard. Decided by the reason alone, never the message.
inline bool is_stale_epoch(const core::Status& s) { return s.is(core::ErrorReason::kStaleEpoch); }

class Store {
 public:
  virtual ~Store() = default;

  // Runs `fn` in one transaction and commits when it returns OK; rolls back otherwise
  // and returns its Status. Retries `fn` (from the start, so it must be repeatable) a
  // few times when it fails with ErrorReason::kRaced: the database reported a
  // serialization conflict, or `fn` lost a compare-and-set (core::raced()). Any other
  // failure is returned at once. OK means durable.
  // Both stores group concurrent calls into one commit (each `fn` in its own savepoint, so
  // one failing rolls back only its own writes); each call still returns only after
  // the commit that holds its writes is durable.
  virtual core::Status transact(const std::function<core::Status(Tx&)>& fn) = 0;

  // Runs `fn` in a read-only transaction: a consistent snapshot that does not wait for
  // writers (SQLite reads on their own WAL connections). REQUIRES: `fn` only reads.
  virtual core::Status read(const std::function<core::Status(Tx&)>& fn) { return transact(fn); }

  // "sqlite" or "postgresql".
  virtual std::string_view kind() const = 0;
  // The schema version the database is at after open's migrations.
  virtual std::int64_t schema_version() const = 0;
};

// Opens (creating if missing) the SQLite database at `path` and migrates it.
core::Result<std::unique_ptr<Store>> open_sqlite_store(const std::string& path);
// Connects to PostgreSQL at `url` (postgresql://user@host:port/db) with a pool of
// `connections`, and migrates the schema.
core::Result<std::unique_ptr<Store>> open_postgres_store(const std::string& url,
                                                         int connections = 4);
// postgresql:// or postgres:// URLs go to PostgreSQL; anything else is a SQLite path.
core::Result<std::unique_ptr<Store>> open_store(const std::string& url_or_path);

// The schema version this build migrates to.
std::int64_t latest_schema_version();

}  // namespace corral::store
