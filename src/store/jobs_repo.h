// JobRepo: desired job state (ARCHITECTURE.md's "desired" row): the job rows, their
// secrets and the per-tenant pending counter. Written by the API (user intent) and the
// scheduler and controllers (phase changes); read by everyone.
//
// One of the repositories store::Tx is made of (store.h): a consumer that needs only jobs
// can take a JobRepo&, and a fake of it has seven methods, not fifty.
//
// Thread safety: as Tx (used only by the thread running the transaction, only during it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/ids.h"
#include "core/job_phase.h"
#include "core/result.h"
#include "core/time.h"

namespace corral::store {

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
  // A task of a job array: the array's id (its first task's id) and the task's index;
  // 0 and 0 for a job in no array (core::ArraySpec).
  core::JobId array_job{0};
  std::int32_t array_index = 0;
  // Of `restarts`, those for lost nodes and for the out-of-memory killer
  // (core::RetryPolicy), and the category of the last retry: "node", "oom", "exit" or "".
  std::int32_t node_restarts = 0;
  std::int32_t oom_restarts = 0;
  std::string retry_category;
  core::Time first_started{};  // when it was first placed (epoch 0: never)
  // Who submitted it: the token's owner, else "token:<name>" (server/http/token_auth.h);
  // '' for jobs from before it was kept. Set at insert, never changed.
  std::string submitted_by;
};

// What a dependency on a job needs to know of it (server/controllers/job_dependencies.h),
// without its spec: read every cycle for the jobs pending jobs depend on.
struct JobProgress {
  core::JobId id;
  core::TenantId tenant;
  core::JobId array_job{0};
  std::int32_t array_index = 0;
  core::JobPhase phase = core::JobPhase::kPending;
  std::int32_t attempt = 0;
  core::Time updated_at;
  core::Time first_started{};
  std::int64_t attained_gpu_ms = 0;  // as JobRow's
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
  // A task of an array: its index, and its array's id, 0 for the first task (whose own
  // id names the array).
  std::optional<std::int32_t> array_index;
  core::JobId array_job{0};
  std::string submitted_by;  // JobRow::submitted_by
};

struct JobFilter {
  std::optional<core::TenantId> tenant;
  std::vector<core::JobPhase> phases;  // empty: any phase
  std::int64_t after_id = 0;           // ids greater than this (pagination)
  std::int32_t limit = 1000;
};

class JobRepo {
 public:
  virtual ~JobRepo() = default;

  virtual core::Result<JobRow> insert_job(const NewJob& job) = 0;
  virtual core::Result<std::optional<JobRow>> get_job(core::JobId id) = 0;
  // The jobs of `ids` that exist, by id, each once: a few queries however many ids, for
  // the loops over a node's or a cycle's jobs.
  virtual core::Result<std::vector<JobRow>> get_jobs(const std::vector<core::JobId>& ids) = 0;
  virtual core::Result<std::vector<JobRow>> list_jobs(const JobFilter& filter) = 0;
  // The tasks of the array `array` names (its first task's id), by index; empty for a
  // job that is not an array's first task.
  virtual core::Result<std::vector<JobRow>> list_array_tasks(core::JobId array) = 0;
  // The jobs of `ids` and every task of the arrays `arrays` name (their first tasks' ids),
  // each once, by id: two queries (per thousand ids) however many there are.
  virtual core::Result<std::vector<JobProgress>> list_job_progress(
      const std::vector<core::JobId>& ids, const std::vector<core::JobId>& arrays) = 0;
  // `tenant`'s latest job named `name` (the highest id), if any.
  virtual core::Result<std::optional<JobRow>> find_job_by_name(const core::TenantId& tenant,
                                                               std::string_view name) = 0;
  // Every job that holds an active allocation, whatever its phase (running jobs, stopping
  // ones, and ended ones whose GPUs await their agents' confirmation), by id. One query.
  virtual core::Result<std::vector<JobRow>> list_jobs_holding_gpus() = 0;
  // Writes every mutable field of `row` if the job is still in `expected`; false (and
  // nothing written) when its phase changed meanwhile (compare-and-set).
  virtual core::Result<bool> update_job(const JobRow& row, core::JobPhase expected) = 0;
  // The job's secret environment as stored (sealed: server/controllers/job_secrets.h); NotFound for
  // an unknown job.
  virtual core::Result<std::string> get_job_secrets(core::JobId id) = 0;
  // The jobs after `after` whose secrets text is not empty and does not start with
  // `prefix`, at most `limit`, by id: those a key rotation must seal again
  // (server/controllers/job_secrets.h).
  virtual core::Result<std::vector<std::pair<core::JobId, std::string>>> list_job_secrets_without(
      std::string_view prefix, core::JobId after, std::int32_t limit) = 0;
  virtual core::Status replace_job_secrets(core::JobId id, std::string_view text) = 0;
  // How many of `tenant`'s jobs are pending: one row read (a counter kept by
  // insert_job and update_job), not a count over the queue.
  virtual core::Result<std::int64_t> count_pending_jobs(const core::TenantId& tenant) = 0;
};

}  // namespace corral::store
