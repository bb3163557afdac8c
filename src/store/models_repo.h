// ModelRepo: the model registry (docs/models.md). Versions are written once; approvals
// are added; an alias moves by compare-and-set on the version it points at, and every
// move is appended to its history. What the JSON columns hold is the server's
// (server/api_models.cc): the store keeps them whole.
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
  std::string report;  // JSON: per feature, its statistics and verdict
  core::Time at;
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
  virtual core::Status append_drift_report(const DriftReportRow& row) = 0;
  // Newest first, at most `limit`.
  virtual core::Result<std::vector<DriftReportRow>> list_drift_reports(std::string_view model,
                                                                       std::string_view version,
                                                                       std::int32_t limit) = 0;
};

}  // namespace corral::store
