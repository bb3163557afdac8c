// ModelRepo: the model registry (docs/models.md). Versions are written once; approvals
// are added; an alias moves by compare-and-set on the version it points at, and every
// move is appended to its history. What the JSON columns hold is the server's
// (server/api/api_models.cc): the store keeps them whole.
//
// One of the repositories store::Tx is made of (store.h).
// Thread safety: as Tx (used only by the thread running the transaction, only during it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ids.h"
#include "core/result.h"
#include "core/status.h"
#include "core/time.h"
#include "store/allocations_repo.h"
#include "store/versioned_doc.h"

namespace corral::store {

// A model version: content {run, artifactUri, digest, inputSchema, outputSchema, gates}.
using ModelVersionRow = VersionedDoc;

struct ModelApprovalRow {
  std::string model, version, name;
  std::string by, reason;
  core::Time at;
};

struct ModelAliasRow {
  std::string model, alias;
  std::string version;  // the version it points at
  std::string state;    // JSON: canary {version, weight}, endpoint, gated
  core::Time updated_at;
};

struct AliasMoveRow {
  std::int64_t id = 0;  // assigned by the store: the history's order
  std::string model, alias;
  std::string kind;                      // "move" or "rollback"
  std::string from_version, to_version;  // from: "" for the alias's first move
  std::string record;                    // JSON: reason, canary, endpoint, gate evaluation
  std::string by;
  core::Time at;
};

using ModelSummary = VersionedSummary;

// A drift report against a version's reference (docs/drift.md).
struct DriftReportRow {
  std::int64_t id = 0;  // assigned by the store
  std::string model, version, segment;
  bool drifted = false;
  std::string report;   // JSON: per feature, its statistics and verdict
  std::string samples;  // JSON: {feature: [values]} it was computed from ("" for labels)
  core::Time at;
};

// A prediction the serving side logged, by its id, and the label that came for it later
// (docs/drift.md#delayed-labels).
struct DriftPredictionRow {
  std::string model, version, id, segment;
  double value = 0;
  core::Time at;
  std::optional<double> label;
  std::optional<core::Time> labeled_at;
};

// Which logged predictions to read: of one version, logged in [from, to), of one segment
// when it is not empty, only the labelled ones when asked.
struct DriftWindow {
  std::string model, version, segment;
  core::Time from, to;
  bool labeled_only = false;
};

// A model's retraining template: the job spec (JSON) submitted when a report drifts.
struct RetrainingTemplateRow {
  std::string model;
  core::TenantId tenant;
  std::string spec;  // JSON job spec, as core::job_spec_to_json writes it
  std::string by;
  core::Time at;
};

// A job submitted because a version drifted, with the job's phase and GPUs as now.
struct RetrainingJobRow {
  core::JobId job;
  core::TenantId tenant;
  std::string model, version;
  std::int64_t report_id = 0;
  core::Time submitted_at;
  std::string phase;  // the job's (core::to_string(JobPhase)); filled by the reads
  std::int32_t gpus = 0;
};

class ModelRepo {
 public:
  virtual ~ModelRepo() = default;

  virtual core::Status insert_model_version(const ModelVersionRow& row) = 0;
  virtual core::Result<std::optional<ModelVersionRow>> get_model_version(
      std::string_view model, std::string_view version) = 0;
  // By version.
  virtual core::Result<std::vector<ModelVersionRow>> list_model_versions(
      std::string_view model) = 0;
  // Models of `tenant` (every model when nullopt), by id after `after`, at most `limit`.
  virtual core::Result<std::vector<ModelSummary>> list_models(
      const std::optional<core::TenantId>& tenant, std::string_view after, std::int32_t limit) = 0;

  // false when (model, version, name) is already approved (a retry).
  virtual core::Result<bool> insert_model_approval(const ModelApprovalRow& row) = 0;
  virtual core::Result<std::vector<ModelApprovalRow>> list_model_approvals(
      std::string_view model, std::string_view version) = 0;

  virtual core::Result<std::optional<ModelAliasRow>> get_model_alias(std::string_view model,
                                                                     std::string_view alias) = 0;
  // By alias.
  virtual core::Result<std::vector<ModelAliasRow>> list_model_aliases(std::string_view model) = 0;
  // Writes `row` if the alias points at `expected` now (nullopt: it does not exist yet);
  // false when it moved meanwhile.
  virtual core::Result<bool> put_model_alias(const ModelAliasRow& row,
                                             const std::optional<std::string>& expected) = 0;
  virtual core::Status append_alias_move(const AliasMoveRow& row) = 0;
  // Oldest first.
  virtual core::Result<std::vector<AliasMoveRow>> list_alias_moves(std::string_view model,
                                                                   std::string_view alias) = 0;

  // A version's drift reference (JSON: features and thresholds), replaced whole.
  virtual core::Status put_drift_reference(std::string_view model, std::string_view version,
                                           std::string_view reference, std::string_view by,
                                           core::Time at) = 0;
  virtual core::Result<std::optional<std::string>> drift_reference(std::string_view model,
                                                                   std::string_view version) = 0;
  // Returns the report's id.
  virtual core::Result<std::int64_t> append_drift_report(const DriftReportRow& row) = 0;
  // Newest first, at most `limit`.
  virtual core::Result<std::vector<DriftReportRow>> list_drift_reports(std::string_view model,
                                                                       std::string_view version,
                                                                       std::int32_t limit) = 0;
  // The samples of `window`'s version's reports made in [from, to) (of its segment when
  // given), oldest first.
  virtual core::Result<std::vector<std::string>> list_drift_samples(const DriftWindow& window) = 0;

  // Logged predictions of (model, version) among `ids`.
  virtual core::Result<std::vector<DriftPredictionRow>> get_drift_predictions(
      std::string_view model, std::string_view version, const std::vector<std::string>& ids) = 0;
  // Writes each row whose id is new; returns how many were.
  virtual core::Result<std::int64_t> insert_drift_predictions(
      const std::vector<DriftPredictionRow>& rows) = 0;
  // Sets the label of a logged prediction that has none.
  virtual core::Status label_drift_prediction(std::string_view model, std::string_view version,
                                              std::string_view id, double label, core::Time at) = 0;
  // The predictions `window` names, by time.
  virtual core::Result<std::vector<DriftPredictionRow>> list_drift_predictions(
      const DriftWindow& window) = 0;

  virtual core::Status put_retraining_template(const RetrainingTemplateRow& row) = 0;
  virtual core::Result<std::optional<RetrainingTemplateRow>> get_retraining_template(
      std::string_view model) = 0;
  // false when there was none.
  virtual core::Result<bool> delete_retraining_template(std::string_view model) = 0;
  // Takes the template row's write lock for the rest of the transaction (PostgreSQL; a
  // SQLite write transaction already excludes every other): two drifted reports of one
  // model then decide one after the other whether a retraining is already open.
  virtual core::Status lock_retraining_template(std::string_view model) = 0;
  virtual core::Status insert_retraining_job(const RetrainingJobRow& row) = 0;
  // Retraining jobs of `model` (every model when empty), newest first, at most `limit`.
  virtual core::Result<std::vector<RetrainingJobRow>> list_retraining_jobs(std::string_view model,
                                                                           std::int32_t limit) = 0;
  // Retraining jobs not ended (pending to requeued), of every tenant, oldest first.
  virtual core::Result<std::vector<RetrainingJobRow>> list_open_retraining_jobs() = 0;
  // The allocations of `tenant`'s retraining jobs active at or after `since`.
  virtual core::Result<std::vector<AllocationRow>> list_retraining_allocations(
      const core::TenantId& tenant, core::Time since) = 0;
};

}  // namespace corral::store
