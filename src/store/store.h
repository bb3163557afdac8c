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
//   observed     what agents report: inventory, GPU conditions and their readings,
//                heartbeats (node_observations, gpu_conditions), never desired state
//   telemetry    telemetry_raw, with its 1-minute and 1-hour rollups (telemetry_rollup_1m,
//                telemetry_rollup_1h); best effort, written apart from everything else
//   checkpoints  checkpoint metadata (the bytes live at the uri)
//   billing      ledger_entries, append-only, one idempotency key per entry, with their
//                daily sums (ledger_daily), the accrual watermark (accrual_state) and
//                the GPU state history accrual reads (gpu_state_spans)
//   audit        audit_log, append-only, hash-chained (the chain is computed by the
//                server, which owns the hash function; the store keeps the head row)
//
// A transaction's operations are one interface per kind of state, each in its own header
// with the rows it uses (jobs_repo.h, allocations_repo.h, nodes_repo.h, rack_caps_repo.h,
// agents_repo.h, tenants_repo.h, checkpoints_repo.h, records_repo.h, ledger_repo.h, audit_repo.h,
// security_repo.h, scheduler_repo.h, ...); Tx hands each out by name (tx.jobs()).
//
// Note for posterity: Tx used to be one interface over every kind of state (60 methods,
// then 16 inherited repositories), so a fake or a fault-injecting wrapper had to know all
// of it and a reader could not see which state a controller touched. Now a caller names
// the repository it uses, and a wrapper wraps each repository on its own.
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
#include <string>
#include <string_view>

#include "core/result.h"
#include "core/status.h"
#include "store/agents_repo.h"
#include "store/allocations_repo.h"
#include "store/audit_repo.h"
#include "store/checkpoints_repo.h"
#include "store/datasets_repo.h"
#include "store/features_repo.h"
#include "store/jobs_repo.h"
#include "store/ledger_repo.h"
#include "store/models_repo.h"
#include "store/nodes_repo.h"
#include "store/rack_caps_repo.h"
#include "store/records_repo.h"
#include "store/runs_repo.h"
#include "store/scheduler_repo.h"
#include "store/security_repo.h"
#include "store/tenants_repo.h"

namespace corral::store {

// The operations available inside one transaction, one repository per kind of state:
// `tx.jobs().get_job(id)`, `tx.allocations().insert_allocation(row)`. A function that
// needs one kind of state takes that repository (`store::JobRepo&`), so its signature
// says what it touches; one that needs several takes the Tx. Reads see the
// transaction's own writes, whichever repository made them. Errors: AlreadyExists for a
// unique-key clash (a second active allocation of a GPU, a duplicate id), Aborted with
// ErrorReason::kRaced for a serialization conflict or a busy database (transact retries
// those) and with kStaleEpoch from check_epoch (final), Unavailable when the database
// cannot be reached, DataLoss when a stored value cannot be decoded (an unknown enum
// name, a number that is not one), naming the column and value.
class Tx {
 public:
  virtual ~Tx() = default;

  virtual JobRepo& jobs() = 0;
  virtual AllocationRepo& allocations() = 0;
  virtual NodeRepo& nodes() = 0;
  virtual RackCapRepo& rack_caps() = 0;
  virtual AgentRepo& agents() = 0;
  virtual TenantRepo& tenants() = 0;
  virtual CheckpointRepo& checkpoints() = 0;
  virtual RecordRepo& records() = 0;
  virtual LedgerRepo& ledger() = 0;
  virtual AuditRepo& audit() = 0;
  virtual SecurityRepo& security() = 0;
  virtual DatasetRepo& datasets() = 0;
  virtual RunRepo& runs() = 0;
  virtual ModelRepo& models() = 0;
  virtual FeatureRepo& features() = 0;
  virtual SchedulerRepo& scheduler() = 0;
};

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
