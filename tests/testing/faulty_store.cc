// FaultyStore (faulty_store.h): a Tx whose repositories each forward every method to the
// real transaction's, counting (and maybe failing) each mutating call first.
#include "testing/faulty_store.h"

#include <optional>
#include <string>
#include <vector>

namespace corral::testing {
namespace {

// Forwards to the real transaction's repository `inner_`; a mutating method first asks the
// store whether this write fails. cluster_id() counts as a read: it writes only on a
// store's very first call.
template <class Repo>
class Faulty : public Repo {
 public:
  Faulty(Repo& inner, FaultyStore& store) : inner_(inner), store_(store) {}

 protected:
  Repo& inner_;
  FaultyStore& store_;
};

class FaultyAgent final : public Faulty<store::AgentRepo> {
 public:
  using Faulty::Faulty;

  core::Status upsert_agent_session(const store::AgentSessionRow& row) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("upsert_agent_session"));
    return inner_.upsert_agent_session(row);
  }
  core::Result<std::optional<store::AgentSessionRow>> get_agent_session(
      const core::NodeId& node) override {
    return inner_.get_agent_session(node);
  }
  core::Result<std::vector<store::AgentSessionRow>> list_agent_sessions() override {
    return inner_.list_agent_sessions();
  }
  core::Status upsert_worker(const store::WorkerRow& row) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("upsert_worker"));
    return inner_.upsert_worker(row);
  }
  core::Result<std::vector<store::WorkerRow>> list_workers(core::JobId job) override {
    return inner_.list_workers(job);
  }
  core::Result<std::vector<store::WorkerRow>> list_workers_on(
      const core::NodeId& node, const std::vector<core::JobId>& jobs) override {
    return inner_.list_workers_on(node, jobs);
  }
  core::Result<std::string> cluster_id() override { return inner_.cluster_id(); }
};

class FaultyAllocation final : public Faulty<store::AllocationRepo> {
 public:
  using Faulty::Faulty;

  core::Status insert_allocation(const store::AllocationRow& row) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("insert_allocation"));
    return inner_.insert_allocation(row);
  }
  core::Result<std::int64_t> release_allocations(core::JobId job, core::Time now) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("release_allocations"));
    return inner_.release_allocations(job, now);
  }
  core::Result<std::vector<store::AllocationRow>> list_active_allocations() override {
    return inner_.list_active_allocations();
  }
  core::Result<std::vector<store::AllocationRow>> list_active_allocations_of(
      const std::vector<core::JobId>& jobs) override {
    return inner_.list_active_allocations_of(jobs);
  }
  core::Result<std::vector<store::AllocationRow>> list_allocations(core::JobId job) override {
    return inner_.list_allocations(job);
  }
  core::Result<std::vector<store::AllocationRow>> list_allocations_overlapping(
      core::Time from, core::Time to) override {
    return inner_.list_allocations_overlapping(from, to);
  }
  core::Result<std::vector<store::AllocationRow>> list_active_allocations_on(
      const core::NodeId& node) override {
    return inner_.list_active_allocations_on(node);
  }
  core::Result<std::int64_t> release_allocations_on(const core::NodeId& node,
                                                    core::Time now) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("release_allocations_on"));
    return inner_.release_allocations_on(node, now);
  }
};

class FaultyAudit final : public Faulty<store::AuditRepo> {
 public:
  using Faulty::Faulty;

  core::Result<store::AuditHead> lock_audit_head() override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("lock_audit_head"));
    return inner_.lock_audit_head();
  }
  core::Status insert_audit(const store::AuditRow& row) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("insert_audit"));
    return inner_.insert_audit(row);
  }
  core::Result<store::AuditHead> read_audit_head() override { return inner_.read_audit_head(); }
  core::Result<std::vector<store::AuditRow>> list_audit(std::int64_t after_seq,
                                                        std::int32_t limit) override {
    return inner_.list_audit(after_seq, limit);
  }
};

class FaultyCheckpoint final : public Faulty<store::CheckpointRepo> {
 public:
  using Faulty::Faulty;

  core::Status insert_checkpoint(const core::Checkpoint& checkpoint) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("insert_checkpoint"));
    return inner_.insert_checkpoint(checkpoint);
  }
  core::Result<std::optional<core::Checkpoint>> latest_checkpoint(core::JobId job) override {
    return inner_.latest_checkpoint(job);
  }
  core::Result<std::vector<core::Checkpoint>> list_checkpoints(core::JobId job) override {
    return inner_.list_checkpoints(job);
  }
  core::Result<std::vector<store::CheckpointTimeRow>> list_holders_checkpoint_times() override {
    return inner_.list_holders_checkpoint_times();
  }
  core::Status record_throughput(const store::ThroughputRow& row) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("record_throughput"));
    return inner_.record_throughput(row);
  }
  core::Result<std::vector<store::ThroughputRow>> list_observed_throughput() override {
    return inner_.list_observed_throughput();
  }
};

class FaultyJob final : public Faulty<store::JobRepo> {
 public:
  using Faulty::Faulty;

  core::Result<store::JobRow> insert_job(const store::NewJob& job) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("insert_job"));
    return inner_.insert_job(job);
  }
  core::Result<std::optional<store::JobRow>> get_job(core::JobId id) override {
    return inner_.get_job(id);
  }
  core::Result<std::vector<store::JobRow>> get_jobs(const std::vector<core::JobId>& ids) override {
    return inner_.get_jobs(ids);
  }
  core::Result<std::vector<store::JobRow>> list_jobs(const store::JobFilter& filter) override {
    return inner_.list_jobs(filter);
  }
  core::Result<std::vector<store::JobRow>> list_array_tasks(core::JobId array) override {
    return inner_.list_array_tasks(array);
  }
  core::Result<std::vector<store::JobProgress>> list_job_progress(
      const std::vector<core::JobId>& ids, const std::vector<core::JobId>& arrays) override {
    return inner_.list_job_progress(ids, arrays);
  }
  core::Result<std::optional<store::JobRow>> find_job_by_name(const core::TenantId& tenant,
                                                              std::string_view name) override {
    return inner_.find_job_by_name(tenant, name);
  }
  core::Result<std::vector<store::JobRow>> list_jobs_holding_gpus() override {
    return inner_.list_jobs_holding_gpus();
  }
  core::Result<bool> update_job(const store::JobRow& row, core::JobPhase expected) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("update_job"));
    return inner_.update_job(row, expected);
  }
  core::Result<std::string> get_job_secrets(core::JobId id) override {
    return inner_.get_job_secrets(id);
  }
  core::Result<std::vector<std::pair<core::JobId, std::string>>> list_job_secrets_without(
      std::string_view prefix, core::JobId after, std::int32_t limit) override {
    return inner_.list_job_secrets_without(prefix, after, limit);
  }
  core::Status replace_job_secrets(core::JobId id, std::string_view text) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("replace_job_secrets"));
    return inner_.replace_job_secrets(id, text);
  }
  core::Result<std::int64_t> count_pending_jobs(const core::TenantId& tenant) override {
    return inner_.count_pending_jobs(tenant);
  }
};

class FaultyNode final : public Faulty<store::NodeRepo> {
 public:
  using Faulty::Faulty;

  core::Status upsert_node(const store::NodeRow& row) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("upsert_node"));
    return inner_.upsert_node(row);
  }
  core::Result<std::optional<store::NodeRow>> get_node(const core::NodeId& id) override {
    return inner_.get_node(id);
  }
  core::Result<std::vector<store::NodeRow>> list_nodes() override { return inner_.list_nodes(); }
  core::Status delete_node(const core::NodeId& id) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("delete_node"));
    return inner_.delete_node(id);
  }
  core::Status upsert_observed(const store::ObservedNode& row) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("upsert_observed"));
    return inner_.upsert_observed(row);
  }
  core::Result<bool> update_observed(const core::NodeId& id,
                                     const std::optional<std::vector<store::GpuObservation>>& gpus,
                                     const std::vector<core::GpuHealth>& readings,
                                     core::Time heartbeat_at) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("update_observed"));
    return inner_.update_observed(id, gpus, readings, heartbeat_at);
  }
  core::Result<std::vector<store::GpuObservation>> list_gpu_conditions(
      const core::NodeId& id) override {
    return inner_.list_gpu_conditions(id);
  }
  core::Result<std::optional<store::ObservedNode>> get_observed(const core::NodeId& id) override {
    return inner_.get_observed(id);
  }
  core::Result<std::vector<store::ObservedNode>> list_observed() override {
    return inner_.list_observed();
  }
  core::Result<std::vector<store::ObservedNode>> list_observed_without_readings() override {
    return inner_.list_observed_without_readings();
  }
};

class FaultyRackCap final : public Faulty<store::RackCapRepo> {
 public:
  using Faulty::Faulty;

  core::Status put_rack_cap(const store::RackCapRow& row) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("put_rack_cap"));
    return inner_.put_rack_cap(row);
  }
  core::Status delete_rack_caps(std::string_view declared_by) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("delete_rack_caps"));
    return inner_.delete_rack_caps(declared_by);
  }
  core::Result<std::vector<store::RackCapRow>> list_rack_caps() override {
    return inner_.list_rack_caps();
  }
  core::Result<std::map<std::string, std::int64_t>> lock_rack_holdings(
      const std::vector<std::string>& racks, const std::vector<core::NodeId>& nodes) override {
    return inner_.lock_rack_holdings(racks, nodes);
  }
};

class FaultyRecord final : public Faulty<store::RecordRepo> {
 public:
  using Faulty::Faulty;

  core::Status append_job_event(const store::JobEventRow& event) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("append_job_event"));
    return inner_.append_job_event(event);
  }
  core::Result<std::vector<store::JobEventRow>> list_job_events(core::JobId job) override {
    return inner_.list_job_events(job);
  }
  core::Status insert_run(const store::RunRow& row, std::int32_t keep) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("insert_run"));
    return inner_.insert_run(row, keep);
  }
  core::Result<std::vector<store::RunRow>> list_runs(
      const std::vector<std::string>& names) override {
    return inner_.list_runs(names);
  }
  core::Status insert_telemetry_batch(const std::vector<store::TelemetryRow>& rows) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("insert_telemetry_batch"));
    return inner_.insert_telemetry_batch(rows);
  }
  core::Result<std::vector<store::TelemetryRow>> list_telemetry(const core::NodeId& node,
                                                                std::int32_t gpu_index,
                                                                core::Time from,
                                                                core::Time to) override {
    return inner_.list_telemetry(node, gpu_index, from, to);
  }
  core::Result<std::vector<store::TelemetryRollupRow>> list_telemetry_rollup(
      store::TelemetryResolution resolution, core::Time from, core::Time to,
      const std::optional<core::NodeId>& node) override {
    return inner_.list_telemetry_rollup(resolution, from, to, node);
  }
  core::Result<std::int64_t> delete_telemetry_before(
      const store::TelemetryCutoffs& cutoffs) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("delete_telemetry_before"));
    return inner_.delete_telemetry_before(cutoffs);
  }
  core::Status insert_usage_samples(const std::vector<store::UsageSampleRow>& rows) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("insert_usage_samples"));
    return inner_.insert_usage_samples(rows);
  }
  core::Result<std::vector<store::UsageSampleRow>> list_usage_samples(
      core::Time from, core::Time to, const std::optional<std::string>& tenant) override {
    return inner_.list_usage_samples(from, to, tenant);
  }
  core::Result<std::int64_t> delete_usage_samples_before(core::Time before) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("delete_usage_samples_before"));
    return inner_.delete_usage_samples_before(before);
  }
};

class FaultyLedger final : public Faulty<store::LedgerRepo> {
 public:
  using Faulty::Faulty;

  core::Result<std::int64_t> append_ledger(const std::vector<store::LedgerRow>& rows) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("append_ledger"));
    return inner_.append_ledger(rows);
  }
  core::Result<std::vector<store::LedgerRow>> list_ledger(const store::LedgerQuery& q) override {
    return inner_.list_ledger(q);
  }
  core::Result<std::vector<store::LedgerSum>> sum_ledger(const store::LedgerQuery& q) override {
    return inner_.sum_ledger(q);
  }
  core::Result<core::Time> accrued_until() override { return inner_.accrued_until(); }
  core::Status set_accrued_until(core::Time until) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("set_accrued_until"));
    return inner_.set_accrued_until(until);
  }
  core::Status open_gpu_state(const store::GpuStateSpan& span) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("open_gpu_state"));
    return inner_.open_gpu_state(span);
  }
  core::Status close_gpu_state(const core::NodeId& node, std::int32_t gpu_index,
                               const std::string& kind, core::Time end) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("close_gpu_state"));
    return inner_.close_gpu_state(node, gpu_index, kind, end);
  }
  core::Result<std::vector<store::GpuStateSpan>> list_gpu_states(core::Time from,
                                                                 core::Time to) override {
    return inner_.list_gpu_states(from, to);
  }
};

class FaultyScheduler final : public Faulty<store::SchedulerRepo> {
 public:
  using Faulty::Faulty;

  core::Result<std::int64_t> acquire_epoch(std::string_view shard,
                                           std::string_view holder) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("acquire_epoch"));
    return inner_.acquire_epoch(shard, holder);
  }
  core::Status check_epoch(std::string_view shard, std::int64_t epoch) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("check_epoch"));
    return inner_.check_epoch(shard, epoch);
  }
  core::Result<std::optional<std::int64_t>> claim_lease(std::string_view shard,
                                                        std::string_view holder, core::Time now,
                                                        core::Time expires_at) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("claim_lease"));
    return inner_.claim_lease(shard, holder, now, expires_at);
  }
  core::Status renew_lease(std::string_view shard, std::int64_t epoch,
                           core::Time expires_at) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("renew_lease"));
    return inner_.renew_lease(shard, epoch, expires_at);
  }
  core::Status release_lease(std::string_view shard, std::int64_t epoch) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("release_lease"));
    return inner_.release_lease(shard, epoch);
  }
  core::Status hand_over_lease(std::string_view shard, std::int64_t epoch, std::string_view to,
                               core::Time expires_at) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("hand_over_lease"));
    return inner_.hand_over_lease(shard, epoch, to, expires_at);
  }
  core::Result<std::vector<store::LeaseRow>> list_leases() override { return inner_.list_leases(); }
  core::Status put_replica(const store::ReplicaRow& row) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("put_replica"));
    return inner_.put_replica(row);
  }
  core::Result<std::vector<store::ReplicaRow>> list_replicas() override {
    return inner_.list_replicas();
  }
  core::Result<std::optional<store::SchedConfigRow>> get_sched_config() override {
    return inner_.get_sched_config();
  }
  core::Result<bool> replace_sched_config(const store::SchedConfigRow& row,
                                          std::string_view expected) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("replace_sched_config"));
    return inner_.replace_sched_config(row, expected);
  }
  core::Result<store::TenantTypeCounts> lock_tenant_holdings(
      const std::vector<core::TenantId>& tenants) override {
    return inner_.lock_tenant_holdings(tenants);
  }
  core::Status notify(std::string_view channel, std::string_view payload) override {
    return inner_.notify(channel, payload);
  }
  core::Status put_tenant_usage(const store::TenantUsageRow& row) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("put_tenant_usage"));
    return inner_.put_tenant_usage(row);
  }
  core::Result<std::vector<store::TenantUsageRow>> list_tenant_usage() override {
    return inner_.list_tenant_usage();
  }
  core::Status set_elastic_target(const store::ElasticTargetRow& row, core::Time now) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("set_elastic_target"));
    return inner_.set_elastic_target(row, now);
  }
  core::Status clear_elastic_target(core::JobId job) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("clear_elastic_target"));
    return inner_.clear_elastic_target(job);
  }
  core::Result<std::vector<store::ElasticTargetRow>> list_elastic_targets() override {
    return inner_.list_elastic_targets();
  }
};

class FaultySecurity final : public Faulty<store::SecurityRepo> {
 public:
  using Faulty::Faulty;

  core::Status insert_token(const store::TokenRow& row) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("insert_token"));
    return inner_.insert_token(row);
  }
  core::Result<std::optional<store::TokenRow>> find_token(std::string_view hash) override {
    return inner_.find_token(hash);
  }
  core::Result<std::optional<store::TokenRow>> find_token_by_name(std::string_view name) override {
    return inner_.find_token_by_name(name);
  }
  core::Result<std::vector<store::TokenRow>> list_tokens(std::string_view after,
                                                         std::int32_t limit) override {
    return inner_.list_tokens(after, limit);
  }
  core::Result<std::int64_t> count_tokens() override { return inner_.count_tokens(); }
  core::Status revoke_token(std::string_view name, core::Time at, std::string_view by) override {
    return inner_.revoke_token(name, at, by);
  }
  core::Status touch_token(std::string_view hash, core::Time at) override {
    return inner_.touch_token(hash, at);
  }
  core::Result<std::optional<store::IdempotencyRow>> get_idempotency(
      std::string_view scope, std::string_view key) override {
    return inner_.get_idempotency(scope, key);
  }
  core::Status put_idempotency(const store::IdempotencyRow& row) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("put_idempotency"));
    return inner_.put_idempotency(row);
  }
  core::Result<std::vector<store::DataKeyRow>> list_data_keys() override {
    return inner_.list_data_keys();
  }
  core::Result<bool> insert_data_key(const store::DataKeyRow& row) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("insert_data_key"));
    return inner_.insert_data_key(row);
  }
  core::Status rewrap_data_key(const store::DataKeyRow& row) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("rewrap_data_key"));
    return inner_.rewrap_data_key(row);
  }
};

class FaultyDataset final : public Faulty<store::DatasetRepo> {
 public:
  using Faulty::Faulty;

  core::Status insert_dataset_version(const core::DatasetVersion& v) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("insert_dataset_version"));
    return inner_.insert_dataset_version(v);
  }
  core::Result<std::optional<core::DatasetVersion>> get_dataset_version(
      const core::DatasetRef& ref) override {
    return inner_.get_dataset_version(ref);
  }
  core::Result<std::optional<core::TenantId>> dataset_owner(std::string_view dataset) override {
    return inner_.dataset_owner(dataset);
  }
  core::Result<std::vector<core::DatasetVersion>> list_dataset_versions(
      std::string_view dataset, std::string_view after, std::int32_t limit) override {
    return inner_.list_dataset_versions(dataset, after, limit);
  }
  core::Result<std::vector<store::DatasetSummary>> list_datasets(
      const std::optional<core::TenantId>& visible_to, std::string_view after,
      std::int32_t limit) override {
    return inner_.list_datasets(visible_to, after, limit);
  }
  core::Status set_dataset_status(const core::DatasetRef& ref, core::QualityStatus status,
                                  std::string_view reason, std::string_view by,
                                  core::Time at) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("set_dataset_status"));
    return inner_.set_dataset_status(ref, status, reason, by, at);
  }
  core::Status record_job_datasets(core::JobId job,
                                   const std::vector<core::DatasetRef>& refs) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("record_job_datasets"));
    return inner_.record_job_datasets(job, refs);
  }
  core::Result<std::vector<core::JobId>> list_jobs_using(const core::DatasetRef& ref,
                                                         core::JobId after,
                                                         std::int32_t limit) override {
    return inner_.list_jobs_using(ref, after, limit);
  }
  core::Result<std::vector<store::DatasetHold>> list_dataset_holds() override {
    return inner_.list_dataset_holds();
  }
};

class FaultyRun final : public Faulty<store::RunRepo> {
 public:
  using Faulty::Faulty;

  core::Status put_run_attempt(const store::RunAttemptRow& row) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("put_run_attempt"));
    return inner_.put_run_attempt(row);
  }
  core::Result<std::vector<store::RunAttemptRow>> list_run_attempts(core::JobId job) override {
    return inner_.list_run_attempts(job);
  }
  core::Result<std::int64_t> put_metrics(core::JobId job, std::int32_t attempt,
                                         const std::vector<core::MetricPoint>& points,
                                         core::Time at) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("put_metrics"));
    return inner_.put_metrics(job, attempt, points, at);
  }
  core::Result<std::int64_t> count_metric_points(core::JobId job) override {
    return inner_.count_metric_points(job);
  }
  core::Result<std::vector<store::MetricRow>> list_metrics(core::JobId job, std::string_view name,
                                                           std::string_view after_name,
                                                           std::int64_t after_step,
                                                           std::int32_t limit) override {
    return inner_.list_metrics(job, name, after_name, after_step, limit);
  }
  core::Result<std::vector<store::MetricSummary>> summarize_metrics(core::JobId job) override {
    return inner_.summarize_metrics(job);
  }
  core::Result<std::vector<std::pair<core::JobId, store::MetricRow>>> list_last_metric(
      core::JobId array, std::string_view name) override {
    return inner_.list_last_metric(array, name);
  }
  core::Result<bool> insert_sweep_rung(const store::SweepRungRow& row) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("insert_sweep_rung"));
    return inner_.insert_sweep_rung(row);
  }
  core::Result<std::vector<store::SweepRungRow>> list_sweep_rungs(
      core::JobId sweep, std::optional<std::int32_t> rung) override {
    return inner_.list_sweep_rungs(sweep, rung);
  }
  core::Result<std::vector<store::SweepRungRow>> list_trial_rungs(core::JobId trial) override {
    return inner_.list_trial_rungs(trial);
  }
  core::Result<bool> insert_artifact(const store::ArtifactRow& row) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("insert_artifact"));
    return inner_.insert_artifact(row);
  }
  core::Result<std::vector<store::ArtifactRow>> list_artifacts(core::JobId job) override {
    return inner_.list_artifacts(job);
  }
  core::Status set_run_origin(core::JobId job, core::JobId of) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("set_run_origin"));
    return inner_.set_run_origin(job, of);
  }
  core::Result<std::optional<core::JobId>> run_origin(core::JobId job) override {
    return inner_.run_origin(job);
  }
};

class FaultyModel final : public Faulty<store::ModelRepo> {
 public:
  using Faulty::Faulty;

  core::Status insert_model_version(const store::ModelVersionRow& row) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("insert_model_version"));
    return inner_.insert_model_version(row);
  }
  core::Result<std::optional<store::ModelVersionRow>> get_model_version(
      std::string_view model, std::string_view version) override {
    return inner_.get_model_version(model, version);
  }
  core::Result<std::vector<store::ModelVersionRow>> list_model_versions(
      std::string_view model) override {
    return inner_.list_model_versions(model);
  }
  core::Result<std::vector<store::ModelSummary>> list_models(
      const std::optional<core::TenantId>& tenant, std::string_view after,
      std::int32_t limit) override {
    return inner_.list_models(tenant, after, limit);
  }
  core::Result<bool> insert_model_approval(const store::ModelApprovalRow& row) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("insert_model_approval"));
    return inner_.insert_model_approval(row);
  }
  core::Result<std::vector<store::ModelApprovalRow>> list_model_approvals(
      std::string_view model, std::string_view version) override {
    return inner_.list_model_approvals(model, version);
  }
  core::Result<std::optional<store::ModelAliasRow>> get_model_alias(
      std::string_view model, std::string_view alias) override {
    return inner_.get_model_alias(model, alias);
  }
  core::Result<std::vector<store::ModelAliasRow>> list_model_aliases(
      std::string_view model) override {
    return inner_.list_model_aliases(model);
  }
  core::Result<bool> put_model_alias(const store::ModelAliasRow& row,
                                     const std::optional<std::string>& expected) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("put_model_alias"));
    return inner_.put_model_alias(row, expected);
  }
  core::Status append_alias_move(const store::AliasMoveRow& row) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("append_alias_move"));
    return inner_.append_alias_move(row);
  }
  core::Result<std::vector<store::AliasMoveRow>> list_alias_moves(std::string_view model,
                                                                  std::string_view alias) override {
    return inner_.list_alias_moves(model, alias);
  }
  core::Status put_drift_reference(std::string_view model, std::string_view version,
                                   std::string_view reference, std::string_view by,
                                   core::Time at) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("put_drift_reference"));
    return inner_.put_drift_reference(model, version, reference, by, at);
  }
  core::Result<std::optional<std::string>> drift_reference(std::string_view model,
                                                           std::string_view version) override {
    return inner_.drift_reference(model, version);
  }
  core::Result<std::int64_t> append_drift_report(const store::DriftReportRow& row) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("append_drift_report"));
    return inner_.append_drift_report(row);
  }
  core::Result<std::vector<store::DriftReportRow>> list_drift_reports(std::string_view model,
                                                                      std::string_view version,
                                                                      std::int32_t limit) override {
    return inner_.list_drift_reports(model, version, limit);
  }
  core::Result<std::vector<std::string>> list_drift_samples(
      const store::DriftWindow& window) override {
    return inner_.list_drift_samples(window);
  }
  core::Result<std::vector<store::DriftPredictionRow>> get_drift_predictions(
      std::string_view model, std::string_view version,
      const std::vector<std::string>& ids) override {
    return inner_.get_drift_predictions(model, version, ids);
  }
  core::Result<std::int64_t> insert_drift_predictions(
      const std::vector<store::DriftPredictionRow>& rows) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("insert_drift_predictions"));
    return inner_.insert_drift_predictions(rows);
  }
  core::Status label_drift_prediction(std::string_view model, std::string_view version,
                                      std::string_view id, double label, core::Time at) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("label_drift_prediction"));
    return inner_.label_drift_prediction(model, version, id, label, at);
  }
  core::Result<std::vector<store::DriftPredictionRow>> list_drift_predictions(
      const store::DriftWindow& window) override {
    return inner_.list_drift_predictions(window);
  }
  core::Status put_retraining_template(const store::RetrainingTemplateRow& row) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("put_retraining_template"));
    return inner_.put_retraining_template(row);
  }
  core::Result<std::optional<store::RetrainingTemplateRow>> get_retraining_template(
      std::string_view model) override {
    return inner_.get_retraining_template(model);
  }
  core::Result<bool> delete_retraining_template(std::string_view model) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("delete_retraining_template"));
    return inner_.delete_retraining_template(model);
  }
  core::Status lock_retraining_template(std::string_view model) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("lock_retraining_template"));
    return inner_.lock_retraining_template(model);
  }
  core::Status insert_retraining_job(const store::RetrainingJobRow& row) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("insert_retraining_job"));
    return inner_.insert_retraining_job(row);
  }
  core::Result<std::vector<store::RetrainingJobRow>> list_retraining_jobs(
      std::string_view model, std::int32_t limit) override {
    return inner_.list_retraining_jobs(model, limit);
  }
  core::Result<std::vector<store::RetrainingJobRow>> list_open_retraining_jobs() override {
    return inner_.list_open_retraining_jobs();
  }
  core::Result<std::vector<store::AllocationRow>> list_retraining_allocations(
      const core::TenantId& tenant, core::Time since) override {
    return inner_.list_retraining_allocations(tenant, since);
  }
};

class FaultyFeature final : public Faulty<store::FeatureRepo> {
 public:
  using Faulty::Faulty;

  core::Status insert_feature_set(const store::FeatureSetRow& row) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("insert_feature_set"));
    return inner_.insert_feature_set(row);
  }
  core::Result<std::optional<store::FeatureSetRow>> get_feature_set(
      std::string_view name, std::string_view version) override {
    return inner_.get_feature_set(name, version);
  }
  core::Result<std::vector<store::FeatureSetRow>> list_feature_sets(
      const std::optional<core::TenantId>& tenant) override {
    return inner_.list_feature_sets(tenant);
  }
  core::Status append_feature_values(std::string_view name, std::string_view version,
                                     const std::vector<core::FeatureValue>& values,
                                     core::Time at) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("append_feature_values"));
    return inner_.append_feature_values(name, version, values, at);
  }
  core::Result<std::vector<core::FeatureValue>> feature_values(std::string_view name,
                                                               std::string_view version,
                                                               std::string_view entity,
                                                               std::int64_t from_ms,
                                                               std::int64_t to_ms) override {
    return inner_.feature_values(name, version, entity, from_ms, to_ms);
  }
  core::Status raise_watermarks(std::string_view name, std::string_view version,
                                const std::map<std::string, std::int64_t>& marks) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("raise_watermarks"));
    return inner_.raise_watermarks(name, version, marks);
  }
  core::Result<std::map<std::string, std::int64_t>> watermarks(std::string_view name,
                                                               std::string_view version) override {
    return inner_.watermarks(name, version);
  }
  core::Status record_run_feature_lookup(const store::RunFeatureRow& use) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("record_run_feature_lookup"));
    return inner_.record_run_feature_lookup(use);
  }
  core::Result<std::vector<store::RunFeatureRow>> list_run_features(core::JobId job) override {
    return inner_.list_run_features(job);
  }
};

class FaultyTenant final : public Faulty<store::TenantRepo> {
 public:
  using Faulty::Faulty;

  core::Status put_tenant(const store::TenantRow& row) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("put_tenant"));
    return inner_.put_tenant(row);
  }
  core::Result<std::optional<store::TenantRow>> get_tenant(const core::TenantId& id) override {
    return inner_.get_tenant(id);
  }
  core::Result<std::vector<store::TenantRow>> list_tenants() override {
    return inner_.list_tenants();
  }
  core::Status delete_tenant(const core::TenantId& id) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("delete_tenant"));
    return inner_.delete_tenant(id);
  }
  core::Status lock_tenants(std::vector<core::TenantId> tenants, store::TenantLock mode) override {
    return inner_.lock_tenants(std::move(tenants), mode);
  }
  core::Result<store::SubmitBucketRow> lock_submit_bucket(
      const store::SubmitBucketRow& fresh) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("lock_submit_bucket"));
    return inner_.lock_submit_bucket(fresh);
  }
  core::Status put_submit_bucket(const store::SubmitBucketRow& row) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("put_submit_bucket"));
    return inner_.put_submit_bucket(row);
  }
  core::Status delete_reservation(const core::ReservationId& id) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("delete_reservation"));
    return inner_.delete_reservation(id);
  }
  core::Status insert_reservation(const store::ReservationRow& row) override {
    CORRAL_RETURN_IF_ERROR(store_.count_write("insert_reservation"));
    return inner_.insert_reservation(row);
  }
  core::Result<std::vector<store::ReservationRow>> list_reservations() override {
    return inner_.list_reservations();
  }
};

// The real transaction with every repository wrapped.
class FaultyTx final : public store::Tx {
 public:
  FaultyTx(store::Tx& inner, FaultyStore& store)
      : agents_(inner.agents(), store),
        allocations_(inner.allocations(), store),
        audit_(inner.audit(), store),
        checkpoints_(inner.checkpoints(), store),
        jobs_(inner.jobs(), store),
        nodes_(inner.nodes(), store),
        rack_caps_(inner.rack_caps(), store),
        records_(inner.records(), store),
        ledger_(inner.ledger(), store),
        scheduler_(inner.scheduler(), store),
        security_(inner.security(), store),
        datasets_(inner.datasets(), store),
        runs_(inner.runs(), store),
        models_(inner.models(), store),
        features_(inner.features(), store),
        tenants_(inner.tenants(), store) {}

  store::AgentRepo& agents() override { return agents_; }
  store::AllocationRepo& allocations() override { return allocations_; }
  store::AuditRepo& audit() override { return audit_; }
  store::CheckpointRepo& checkpoints() override { return checkpoints_; }
  store::JobRepo& jobs() override { return jobs_; }
  store::NodeRepo& nodes() override { return nodes_; }
  store::RackCapRepo& rack_caps() override { return rack_caps_; }
  store::RecordRepo& records() override { return records_; }
  store::LedgerRepo& ledger() override { return ledger_; }
  store::SchedulerRepo& scheduler() override { return scheduler_; }
  store::SecurityRepo& security() override { return security_; }
  store::DatasetRepo& datasets() override { return datasets_; }
  store::RunRepo& runs() override { return runs_; }
  store::ModelRepo& models() override { return models_; }
  store::FeatureRepo& features() override { return features_; }
  store::TenantRepo& tenants() override { return tenants_; }

 private:
  FaultyAgent agents_;
  FaultyAllocation allocations_;
  FaultyAudit audit_;
  FaultyCheckpoint checkpoints_;
  FaultyJob jobs_;
  FaultyNode nodes_;
  FaultyRackCap rack_caps_;
  FaultyRecord records_;
  FaultyLedger ledger_;
  FaultyScheduler scheduler_;
  FaultySecurity security_;
  FaultyDataset datasets_;
  FaultyRun runs_;
  FaultyModel models_;
  FaultyFeature features_;
  FaultyTenant tenants_;
};

}  // namespace

core::Status FaultyStore::count_write(std::string_view what) {
  if (!fault_.only.empty() && !what.starts_with(fault_.only)) return core::Status();
  const std::int64_t n = writes_.fetch_add(1) + 1;
  if (n < fault_.nth || (n > fault_.nth && !fault_.persistent)) return core::Status();
  failures_.fetch_add(1);
  return core::Status(core::StatusCode::kUnavailable, "faulty store: write " + std::to_string(n) +
                                                          " (" + std::string(what) +
                                                          ") failed by injection");
}

core::Status FaultyStore::transact(const std::function<core::Status(store::Tx&)>& fn) {
  if (fault_.unit == Fault::Unit::kTransact) {
    // The callback runs against the real transaction; a failing write then rolls it all
    // back, as a commit lost to the database would. The count is taken per attempt, so a
    // race the inner store retries counts once per retry, as the database sees it.
    return inner_.transact([&](store::Tx& tx) -> core::Status {
      CORRAL_RETURN_IF_ERROR(fn(tx));
      return count_write("transact");
    });
  }
  return inner_.transact([&](store::Tx& tx) {
    FaultyTx faulty(tx, *this);
    return fn(faulty);
  });
}

}  // namespace corral::testing
