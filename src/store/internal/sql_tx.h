// SqlTx: store::Tx over one SQL connection, written once for both databases. Its methods
// are defined by repository, one file each (sql_jobs.cc, sql_allocations.cc, sql_nodes.cc,
// sql_agents.cc, sql_tenants.cc, sql_checkpoints.cc, sql_records.cc, sql_ledger.cc, sql_audit.cc,
// sql_security.cc, sql_scheduler.cc); the transaction machinery that makes one is in
// sql_store.cc. Row decoding goes through RowReader (internal/sql_rows.h), so a stored
// value that does not decode is DataLoss, never a guess.
//
// Thread safety: needs external synchronization; used by the thread running one
// transaction, only during it. It does not own the connection.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/internal/sql.h"
#include "store/store.h"

namespace corral::store::detail {

// One object is every repository: they share the connection and the transaction, so a
// read through one sees the writes of another.
class SqlTx final : public Tx,
                    public JobRepo,
                    public AllocationRepo,
                    public NodeRepo,
                    public RackCapRepo,
                    public AgentRepo,
                    public TenantRepo,
                    public CheckpointRepo,
                    public RecordRepo,
                    public LedgerRepo,
                    public AuditRepo,
                    public SecurityRepo,
                    public DatasetRepo,
                    public RunRepo,
                    public ModelRepo,
                    public FeatureRepo,
                    public SchedulerRepo {
 public:
  explicit SqlTx(SqlConn& conn) : conn_(conn) {}

  JobRepo& jobs() override { return *this; }
  AllocationRepo& allocations() override { return *this; }
  NodeRepo& nodes() override { return *this; }
  RackCapRepo& rack_caps() override { return *this; }
  AgentRepo& agents() override { return *this; }
  TenantRepo& tenants() override { return *this; }
  CheckpointRepo& checkpoints() override { return *this; }
  RecordRepo& records() override { return *this; }
  LedgerRepo& ledger() override { return *this; }
  AuditRepo& audit() override { return *this; }
  SecurityRepo& security() override { return *this; }
  DatasetRepo& datasets() override { return *this; }
  RunRepo& runs() override { return *this; }
  ModelRepo& models() override { return *this; }
  FeatureRepo& features() override { return *this; }
  SchedulerRepo& scheduler() override { return *this; }

  // JobRepo (sql_jobs.cc).
  core::Result<JobRow> insert_job(const NewJob& job) override;
  core::Result<std::optional<JobRow>> get_job(core::JobId id) override;
  core::Result<std::vector<JobRow>> get_jobs(const std::vector<core::JobId>& ids) override;
  core::Result<std::vector<JobRow>> list_jobs(const JobFilter& filter) override;
  core::Result<std::vector<JobRow>> list_array_tasks(core::JobId array) override;
  core::Result<std::vector<JobProgress>> list_job_progress(
      const std::vector<core::JobId>& ids, const std::vector<core::JobId>& arrays) override;
  core::Result<std::optional<JobRow>> find_job_by_name(const core::TenantId& tenant,
                                                       std::string_view name) override;
  core::Result<std::vector<JobRow>> list_jobs_holding_gpus() override;
  core::Result<bool> update_job(const JobRow& row, core::JobPhase expected) override;
  core::Result<std::string> get_job_secrets(core::JobId id) override;
  core::Result<std::vector<std::pair<core::JobId, std::string>>> list_job_secrets_without(
      std::string_view prefix, core::JobId after, std::int32_t limit) override;
  core::Status replace_job_secrets(core::JobId id, std::string_view text) override;
  core::Result<std::int64_t> count_pending_jobs(const core::TenantId& tenant) override;

  // AllocationRepo (sql_allocations.cc).
  core::Status insert_allocation(const AllocationRow& row) override;
  core::Result<std::int64_t> release_allocations(core::JobId job, core::Time now) override;
  core::Result<std::vector<AllocationRow>> list_active_allocations() override;
  core::Result<std::vector<AllocationRow>> list_active_allocations_of(
      const std::vector<core::JobId>& jobs) override;
  core::Result<std::vector<AllocationRow>> list_allocations(core::JobId job) override;
  core::Result<std::vector<AllocationRow>> list_allocations_overlapping(core::Time from,
                                                                        core::Time to) override;
  core::Result<std::vector<AllocationRow>> list_active_allocations_on(
      const core::NodeId& node) override;
  core::Result<std::int64_t> release_allocations_on(const core::NodeId& node,
                                                    core::Time now) override;

  // NodeRepo and RackCapRepo (sql_nodes.cc).
  core::Status upsert_node(const NodeRow& row) override;
  core::Result<std::optional<NodeRow>> get_node(const core::NodeId& id) override;
  core::Result<std::vector<NodeRow>> list_nodes() override;
  core::Status delete_node(const core::NodeId& id) override;
  core::Status upsert_observed(const ObservedNode& row) override;
  core::Result<bool> update_observed(const core::NodeId& id,
                                     const std::optional<std::vector<GpuObservation>>& gpus,
                                     const std::vector<core::GpuHealth>& readings,
                                     core::Time heartbeat_at) override;
  core::Result<std::vector<GpuObservation>> list_gpu_conditions(const core::NodeId& id) override;
  core::Result<std::optional<ObservedNode>> get_observed(const core::NodeId& id) override;
  core::Result<std::vector<ObservedNode>> list_observed() override;
  core::Result<std::vector<ObservedNode>> list_observed_without_readings() override;
  core::Status put_rack_cap(const RackCapRow& row) override;
  core::Status delete_rack_caps(std::string_view declared_by) override;
  core::Result<std::vector<RackCapRow>> list_rack_caps() override;
  core::Result<std::map<std::string, std::int64_t>> lock_rack_holdings(
      const std::vector<std::string>& racks, const std::vector<core::NodeId>& nodes) override;

  // AgentRepo (sql_agents.cc).
  core::Status upsert_agent_session(const AgentSessionRow& row) override;
  core::Result<std::optional<AgentSessionRow>> get_agent_session(const core::NodeId& node) override;
  core::Result<std::vector<AgentSessionRow>> list_agent_sessions() override;
  core::Status upsert_worker(const WorkerRow& row) override;
  core::Result<std::vector<WorkerRow>> list_workers(core::JobId job) override;
  core::Result<std::vector<WorkerRow>> list_workers_on(
      const core::NodeId& node, const std::vector<core::JobId>& jobs) override;
  core::Result<std::string> cluster_id() override;

  // TenantRepo (sql_tenants.cc).
  core::Status put_tenant(const TenantRow& row) override;
  core::Result<std::optional<TenantRow>> get_tenant(const core::TenantId& id) override;
  core::Result<std::vector<TenantRow>> list_tenants() override;
  core::Status insert_reservation(const ReservationRow& row) override;
  core::Status delete_tenant(const core::TenantId& id) override;
  core::Status lock_tenants(std::vector<core::TenantId> tenants, TenantLock mode) override;
  core::Result<SubmitBucketRow> lock_submit_bucket(const SubmitBucketRow& fresh) override;
  core::Status put_submit_bucket(const SubmitBucketRow& row) override;
  core::Status delete_reservation(const core::ReservationId& id) override;
  core::Result<std::vector<ReservationRow>> list_reservations() override;

  // CheckpointRepo (sql_checkpoints.cc).
  core::Status insert_checkpoint(const core::Checkpoint& checkpoint) override;
  core::Result<std::optional<core::Checkpoint>> latest_checkpoint(core::JobId job) override;
  core::Result<std::vector<core::Checkpoint>> list_checkpoints(core::JobId job) override;
  core::Result<std::vector<CheckpointTimeRow>> list_holders_checkpoint_times() override;
  core::Status record_throughput(const ThroughputRow& row) override;
  core::Result<std::vector<ThroughputRow>> list_observed_throughput() override;

  // RecordRepo (sql_records.cc).
  core::Status append_job_event(const JobEventRow& event) override;
  core::Result<std::vector<JobEventRow>> list_job_events(core::JobId job) override;
  core::Status insert_run(const RunRow& row, std::int32_t keep) override;
  core::Result<std::vector<RunRow>> list_runs(const std::vector<std::string>& names) override;
  core::Status insert_telemetry_batch(const std::vector<TelemetryRow>& rows) override;
  core::Result<std::vector<TelemetryRow>> list_telemetry(const core::NodeId& node,
                                                         std::int32_t gpu_index, core::Time from,
                                                         core::Time to) override;
  core::Result<std::vector<TelemetryRollupRow>> list_telemetry_rollup(
      TelemetryResolution resolution, core::Time from, core::Time to,
      const std::optional<core::NodeId>& node) override;
  core::Result<std::int64_t> delete_telemetry_before(const TelemetryCutoffs& cutoffs) override;
  core::Status insert_usage_samples(const std::vector<UsageSampleRow>& rows) override;
  core::Result<std::vector<UsageSampleRow>> list_usage_samples(
      core::Time from, core::Time to, const std::optional<std::string>& tenant) override;
  core::Result<std::int64_t> delete_usage_samples_before(core::Time before) override;

  // LedgerRepo (sql_ledger.cc).
  core::Result<std::int64_t> append_ledger(const std::vector<LedgerRow>& rows) override;
  core::Result<std::vector<LedgerRow>> list_ledger(const LedgerQuery& query) override;
  core::Result<std::vector<LedgerSum>> sum_ledger(const LedgerQuery& query) override;
  core::Result<core::Time> accrued_until() override;
  core::Status set_accrued_until(core::Time until) override;
  core::Status open_gpu_state(const GpuStateSpan& span) override;
  core::Status close_gpu_state(const core::NodeId& node, std::int32_t gpu_index,
                               const std::string& kind, core::Time end) override;
  core::Result<std::vector<GpuStateSpan>> list_gpu_states(core::Time from, core::Time to) override;

  // AuditRepo (sql_audit.cc).
  core::Result<AuditHead> lock_audit_head() override;
  core::Status insert_audit(const AuditRow& row) override;
  core::Result<AuditHead> read_audit_head() override;
  core::Result<std::vector<AuditRow>> list_audit(std::int64_t after_seq,
                                                 std::int32_t limit) override;

  // SecurityRepo (sql_security.cc).
  core::Status insert_token(const TokenRow& row) override;
  core::Result<std::optional<TokenRow>> find_token(std::string_view hash) override;
  core::Result<std::optional<TokenRow>> find_token_by_name(std::string_view name) override;
  core::Result<std::vector<TokenRow>> list_tokens(std::string_view after,
                                                  std::int32_t limit) override;
  core::Result<std::int64_t> count_tokens() override;
  core::Status revoke_token(std::string_view name, core::Time at, std::string_view by) override;
  core::Status touch_token(std::string_view hash, core::Time at) override;
  core::Result<std::optional<IdempotencyRow>> get_idempotency(std::string_view scope,
                                                              std::string_view key) override;
  core::Status put_idempotency(const IdempotencyRow& row) override;
  core::Result<std::vector<DataKeyRow>> list_data_keys() override;
  core::Result<bool> insert_data_key(const DataKeyRow& row) override;
  core::Status rewrap_data_key(const DataKeyRow& row) override;

  // DatasetRepo (sql_datasets.cc).
  core::Status insert_dataset_version(const core::DatasetVersion& v) override;
  core::Result<std::optional<core::DatasetVersion>> get_dataset_version(
      const core::DatasetRef& ref) override;
  core::Result<std::optional<core::TenantId>> dataset_owner(std::string_view dataset) override;
  core::Result<std::vector<core::DatasetVersion>> list_dataset_versions(
      std::string_view dataset, std::string_view after, std::int32_t limit) override;
  core::Result<std::vector<DatasetSummary>> list_datasets(
      const std::optional<core::TenantId>& visible_to, std::string_view after,
      std::int32_t limit) override;
  core::Status set_dataset_status(const core::DatasetRef& ref, core::QualityStatus status,
                                  std::string_view reason, std::string_view by,
                                  core::Time at) override;
  core::Status record_job_datasets(core::JobId job,
                                   const std::vector<core::DatasetRef>& refs) override;
  core::Result<std::vector<core::JobId>> list_jobs_using(const core::DatasetRef& ref,
                                                         core::JobId after,
                                                         std::int32_t limit) override;
  core::Result<std::vector<DatasetHold>> list_dataset_holds() override;

  // RunRepo (sql_runs.cc).
  core::Status put_run_attempt(const RunAttemptRow& row) override;
  core::Result<std::vector<RunAttemptRow>> list_run_attempts(core::JobId job) override;
  core::Result<std::int64_t> put_metrics(core::JobId job, std::int32_t attempt,
                                         const std::vector<core::MetricPoint>& points,
                                         core::Time at) override;
  core::Result<std::int64_t> count_metric_points(core::JobId job) override;
  core::Result<std::vector<MetricRow>> list_metrics(core::JobId job, std::string_view name,
                                                    std::string_view after_name,
                                                    std::int64_t after_step,
                                                    std::int32_t limit) override;
  core::Result<std::vector<MetricSummary>> summarize_metrics(core::JobId job) override;
  core::Result<std::vector<std::pair<core::JobId, MetricRow>>> list_last_metric(
      core::JobId array, std::string_view name) override;
  core::Result<bool> insert_sweep_rung(const SweepRungRow& row) override;
  core::Result<std::vector<SweepRungRow>> list_sweep_rungs(
      core::JobId sweep, std::optional<std::int32_t> rung) override;
  core::Result<std::vector<SweepRungRow>> list_trial_rungs(core::JobId trial) override;
  core::Result<bool> insert_artifact(const ArtifactRow& row) override;
  core::Result<std::vector<ArtifactRow>> list_artifacts(core::JobId job) override;
  core::Status set_run_origin(core::JobId job, core::JobId of) override;
  core::Result<std::optional<core::JobId>> run_origin(core::JobId job) override;

  // ModelRepo (sql_models.cc; drift and retraining: sql_drift.cc).
  core::Status insert_model_version(const ModelVersionRow& row) override;
  core::Result<std::optional<ModelVersionRow>> get_model_version(std::string_view model,
                                                                 std::string_view version) override;
  core::Result<std::vector<ModelVersionRow>> list_model_versions(std::string_view model) override;
  core::Result<std::vector<ModelSummary>> list_models(const std::optional<core::TenantId>& tenant,
                                                      std::string_view after,
                                                      std::int32_t limit) override;
  core::Result<bool> insert_model_approval(const ModelApprovalRow& row) override;
  core::Result<std::vector<ModelApprovalRow>> list_model_approvals(
      std::string_view model, std::string_view version) override;
  core::Result<std::optional<ModelAliasRow>> get_model_alias(std::string_view model,
                                                             std::string_view alias) override;
  core::Result<std::vector<ModelAliasRow>> list_model_aliases(std::string_view model) override;
  core::Result<bool> put_model_alias(const ModelAliasRow& row,
                                     const std::optional<std::string>& expected) override;
  core::Status append_alias_move(const AliasMoveRow& row) override;
  core::Result<std::vector<AliasMoveRow>> list_alias_moves(std::string_view model,
                                                           std::string_view alias) override;
  core::Status put_drift_reference(std::string_view model, std::string_view version,
                                   std::string_view reference, std::string_view by,
                                   core::Time at) override;
  core::Result<std::optional<std::string>> drift_reference(std::string_view model,
                                                           std::string_view version) override;
  core::Result<std::int64_t> append_drift_report(const DriftReportRow& row) override;
  core::Result<std::vector<DriftReportRow>> list_drift_reports(std::string_view model,
                                                               std::string_view version,
                                                               std::int32_t limit) override;
  core::Result<std::vector<std::string>> list_drift_samples(const DriftWindow& window) override;
  core::Result<std::vector<DriftPredictionRow>> get_drift_predictions(
      std::string_view model, std::string_view version,
      const std::vector<std::string>& ids) override;
  core::Result<std::int64_t> insert_drift_predictions(
      const std::vector<DriftPredictionRow>& rows) override;
  core::Status label_drift_prediction(std::string_view model, std::string_view version,
                                      std::string_view id, double label, core::Time at) override;
  core::Result<std::vector<DriftPredictionRow>> list_drift_predictions(
      const DriftWindow& window) override;
  core::Status put_retraining_template(const RetrainingTemplateRow& row) override;
  core::Result<std::optional<RetrainingTemplateRow>> get_retraining_template(
      std::string_view model) override;
  core::Result<bool> delete_retraining_template(std::string_view model) override;
  core::Status lock_retraining_template(std::string_view model) override;
  core::Status insert_retraining_job(const RetrainingJobRow& row) override;
  core::Result<std::vector<RetrainingJobRow>> list_retraining_jobs(std::string_view model,
                                                                   std::int32_t limit) override;
  core::Result<std::vector<RetrainingJobRow>> list_open_retraining_jobs() override;
  core::Result<std::vector<AllocationRow>> list_retraining_allocations(const core::TenantId& tenant,
                                                                       core::Time since) override;

  // FeatureRepo (sql_features.cc).
  core::Status insert_feature_set(const FeatureSetRow& row) override;
  core::Result<std::optional<FeatureSetRow>> get_feature_set(std::string_view name,
                                                             std::string_view version) override;
  core::Result<std::vector<FeatureSetRow>> list_feature_sets(
      const std::optional<core::TenantId>& tenant) override;
  core::Status append_feature_values(std::string_view name, std::string_view version,
                                     const std::vector<core::FeatureValue>& values,
                                     core::Time at) override;
  core::Result<std::vector<core::FeatureValue>> feature_values(std::string_view name,
                                                               std::string_view version,
                                                               std::string_view entity,
                                                               std::int64_t from_ms,
                                                               std::int64_t to_ms) override;
  core::Status raise_watermarks(std::string_view name, std::string_view version,
                                const std::map<std::string, std::int64_t>& marks) override;
  core::Result<std::map<std::string, std::int64_t>> watermarks(std::string_view name,
                                                               std::string_view version) override;
  core::Status record_run_feature_lookup(const RunFeatureRow& use) override;
  core::Result<std::vector<RunFeatureRow>> list_run_features(core::JobId job) override;

  // SchedulerRepo (sql_scheduler.cc).
  core::Result<std::int64_t> acquire_epoch(std::string_view shard,
                                           std::string_view holder) override;
  core::Status check_epoch(std::string_view shard, std::int64_t epoch) override;
  core::Result<std::optional<std::int64_t>> claim_lease(std::string_view shard,
                                                        std::string_view holder, core::Time now,
                                                        core::Time expires_at) override;
  core::Status renew_lease(std::string_view shard, std::int64_t epoch,
                           core::Time expires_at) override;
  core::Status release_lease(std::string_view shard, std::int64_t epoch) override;
  core::Status hand_over_lease(std::string_view shard, std::int64_t epoch, std::string_view to,
                               core::Time expires_at) override;
  core::Result<std::vector<LeaseRow>> list_leases() override;
  core::Status put_replica(const ReplicaRow& row) override;
  core::Result<std::vector<ReplicaRow>> list_replicas() override;
  core::Result<std::optional<SchedConfigRow>> get_sched_config() override;
  core::Result<bool> replace_sched_config(const SchedConfigRow& row,
                                          std::string_view expected) override;
  core::Result<TenantTypeCounts> lock_tenant_holdings(
      const std::vector<core::TenantId>& tenants) override;
  core::Status notify(std::string_view channel, std::string_view payload) override;
  core::Status put_tenant_usage(const TenantUsageRow& row) override;
  core::Result<std::vector<TenantUsageRow>> list_tenant_usage() override;
  core::Status set_elastic_target(const ElasticTargetRow& row, core::Time now) override;
  core::Status clear_elastic_target(core::JobId job) override;
  core::Result<std::vector<ElasticTargetRow>> list_elastic_targets() override;

 private:
  core::Result<SqlResult> q(std::string_view sql, std::vector<SqlValue> params) {
    return conn_.query(sql, params);
  }
  // The per-tenant pending counter kept by insert_job and update_job (sql_jobs.cc).
  core::Status add_pending(const core::TenantId& tenant, std::int64_t delta);
  // Shared SELECTs of several methods, each in its repository's file.
  core::Result<std::vector<JobRow>> jobs(std::string_view sql, std::vector<SqlValue> params);
  core::Result<std::vector<AllocationRow>> allocs(std::string_view where_order,
                                                  std::vector<SqlValue> params);
  core::Result<std::vector<NodeRow>> nodes(std::string_view where, std::vector<SqlValue> params);
  // gpu_conditions rows matching `where`, by node.
  core::Result<std::map<std::string, std::vector<GpuObservation>, std::less<>>> gpu_conditions(
      std::string_view where, std::vector<SqlValue> params);
  core::Status put_gpu_conditions(const core::NodeId& id, const std::vector<GpuObservation>& gpus);
  // node_observations rows matching `where`, by node, with their readings decoded only
  // when `with_readings`.
  core::Result<std::vector<ObservedNode>> observed(std::string_view where,
                                                   std::vector<SqlValue> params,
                                                   bool with_readings = true);
  // workers rows matching `where`, by (job, attempt, rank).
  core::Result<std::vector<WorkerRow>> workers(std::string_view where,
                                               std::vector<SqlValue> params);
  core::Result<std::vector<AgentSessionRow>> sessions(std::string_view where,
                                                      std::vector<SqlValue> params);
  core::Result<std::vector<TenantRow>> tenants(std::string_view where,
                                               std::vector<SqlValue> params);
  core::Result<std::vector<TokenRow>> tokens(std::string_view where_order,
                                             std::vector<SqlValue> params);
  core::Result<std::vector<core::Checkpoint>> checkpoints(std::string_view where_order,
                                                          std::vector<SqlValue> params);
  core::Result<std::vector<core::DatasetVersion>> dataset_versions(std::string_view where_order,
                                                                   std::vector<SqlValue> params);
  // The documents of `table` (its name column `name_column`) WHERE/ORDER `where_order`
  // (sql_versioned.cc).
  core::Result<std::vector<VersionedDoc>> versioned_docs(std::string_view table,
                                                         std::string_view name_column,
                                                         std::string_view where_order,
                                                         std::vector<SqlValue> params);
  core::Result<std::vector<ModelAliasRow>> model_aliases(std::string_view where_order,
                                                         std::vector<SqlValue> params);

  SqlConn& conn_;
};

}  // namespace corral::store::detail
