// DatasetRepo: dataset versions (core/dataset.h) and the versions each job was admitted
// on. A version's content is written once by insert_dataset_version; only its quality
// status moves (set_dataset_status).
//
// One of the repositories store::Tx is made of (store.h).
// Thread safety: as Tx (used only by the thread running the transaction, only during it).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/dataset.h"
#include "core/ids.h"
#include "core/result.h"
#include "core/status.h"
#include "core/time.h"
#include "store/versioned_doc.h"

namespace corral::store {

// A dataset as listed: its id, owner and versions.
using DatasetSummary = VersionedSummary;

// A pending job whose lineage names a version that has not passed.
struct DatasetHold {
  core::JobId job;
  core::TenantId tenant;  // the job's
  core::DatasetRef ref;
  core::QualityStatus status;
  std::string reason;  // the version's status reason
};

class DatasetRepo {
 public:
  virtual ~DatasetRepo() = default;

  virtual core::Status insert_dataset_version(const core::DatasetVersion& v) = 0;
  virtual core::Result<std::optional<core::DatasetVersion>> get_dataset_version(
      const core::DatasetRef& ref) = 0;
  // The owner of a dataset (the tenant of its versions), if it has any version.
  virtual core::Result<std::optional<core::TenantId>> dataset_owner(std::string_view dataset) = 0;
  // The versions of `dataset` after version `after`, by version, at most `limit`.
  virtual core::Result<std::vector<core::DatasetVersion>> list_dataset_versions(
      std::string_view dataset, std::string_view after, std::int32_t limit) = 0;
  // Datasets with a version `visible_to` sees (every dataset when nullopt), by id after
  // `after`, at most `limit`.
  virtual core::Result<std::vector<DatasetSummary>> list_datasets(
      const std::optional<core::TenantId>& visible_to, std::string_view after,
      std::int32_t limit) = 0;
  virtual core::Status set_dataset_status(const core::DatasetRef& ref, core::QualityStatus status,
                                          std::string_view reason, std::string_view by,
                                          core::Time at) = 0;

  // The versions `job` was admitted on (its spec's lineage.datasets).
  virtual core::Status record_job_datasets(core::JobId job,
                                           const std::vector<core::DatasetRef>& refs) = 0;
  // Jobs admitted on `ref` after job `after`, by id, at most `limit`.
  virtual core::Result<std::vector<core::JobId>> list_jobs_using(const core::DatasetRef& ref,
                                                                 core::JobId after,
                                                                 std::int32_t limit) = 0;
  // Every pending job held by a version that has not passed, by job then version.
  virtual core::Result<std::vector<DatasetHold>> list_dataset_holds() = 0;
};

}  // namespace corral::store
