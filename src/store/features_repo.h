// FeatureRepo: feature set versions, their values and source watermarks, and the
// versions each run looked up (docs/features.md). A version's content is written once;
// values are appended.
//
// One of the repositories store::Tx is made of (store.h).
// Thread safety: as Tx (used only by the thread running the transaction, only during it).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/feature_value.h"
#include "core/ids.h"
#include "core/result.h"
#include "core/status.h"
#include "core/time.h"
#include "store/versioned_doc.h"

namespace corral::store {

// A feature set version: content {schema, source}.
using FeatureSetRow = VersionedDoc;

// What one run's lookups of one feature set version add up to (its manifest's
// `features`).
struct RunFeatureRow {
  core::JobId job;
  std::string name;
  std::string version;
  std::int64_t lookups = 0;
  std::int64_t rows = 0;
  std::int64_t latest_at_ms = -1;  // the latest instant a row asked for; -1: none yet
  core::Time first_lookup_at;
  core::Time last_lookup_at;
  std::string watermarks;  // JSON object source -> ms, as at the last lookup
};

class FeatureRepo {
 public:
  virtual ~FeatureRepo() = default;

  virtual core::Status insert_feature_set(const FeatureSetRow& row) = 0;
  virtual core::Result<std::optional<FeatureSetRow>> get_feature_set(std::string_view name,
                                                                     std::string_view version) = 0;
  // Versions of `tenant`'s sets (every tenant's when nullopt), by name then version.
  virtual core::Result<std::vector<FeatureSetRow>> list_feature_sets(
      const std::optional<core::TenantId>& tenant) = 0;
  // Appends `values` (their seq is assigned: the write order).
  virtual core::Status append_feature_values(std::string_view name, std::string_view version,
                                             const std::vector<core::FeatureValue>& values,
                                             core::Time at) = 0;
  // The values of `entity` with event times in [from_ms, to_ms].
  virtual core::Result<std::vector<core::FeatureValue>> feature_values(std::string_view name,
                                                                       std::string_view version,
                                                                       std::string_view entity,
                                                                       std::int64_t from_ms,
                                                                       std::int64_t to_ms) = 0;
  // Raises each source's watermark to the given one (never lowers it).
  virtual core::Status raise_watermarks(std::string_view name, std::string_view version,
                                        const std::map<std::string, std::int64_t>& marks) = 0;
  virtual core::Result<std::map<std::string, std::int64_t>> watermarks(
      std::string_view name, std::string_view version) = 0;

  // Adds one lookup (`use`: lookups 1, its rows, latest instant, time and watermarks) to
  // the run's row of that version: counts add up, the latest instant is the greater, the
  // first lookup time stays, the last time and the watermarks are replaced.
  virtual core::Status record_run_feature_lookup(const RunFeatureRow& use) = 0;
  // The versions `job` looked up, by name then version.
  virtual core::Result<std::vector<RunFeatureRow>> list_run_features(core::JobId job) = 0;
};

}  // namespace corral::store
