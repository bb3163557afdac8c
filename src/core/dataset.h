// A dataset version (docs/datasets.md): an immutable, content-addressed training input
// that a job names in its lineage (`datasets: [webtext@v12]`). Its content fields (URI,
// digest, schema hash, size, parents, privacy) never change once registered; only its
// quality status moves, pending -> passed | quarantined, and back from quarantine with a
// reason. A job is admitted only on versions that exist and its tenant may read, and it
// runs only while every one of them has passed (server/controllers/dataset_gate.h).
//
// Thread safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ids.h"
#include "core/result.h"
#include "core/time.h"

namespace corral::core {

enum class QualityStatus { kPending, kPassed, kQuarantined };
std::string_view to_string(QualityStatus status);  // "pending", "passed", "quarantined"
std::optional<QualityStatus> quality_status_from(std::string_view text);

// "id@version": the dataset id a DNS label, the version 1 to 63 of [A-Za-z0-9._-].
struct DatasetRef {
  std::string dataset;
  std::string version;

  std::string text() const { return dataset + "@" + version; }
  friend auto operator<=>(const DatasetRef&, const DatasetRef&) = default;
};
// InvalidArgument naming `field` when `text` is not "id@version".
Result<DatasetRef> parse_dataset_ref(std::string_view text, const std::string& field);
// Whether `version` may name a dataset version.
bool is_dataset_version(std::string_view version);

struct DatasetVersion {
  DatasetRef ref;
  TenantId tenant;  // the owner: the tenant that registered the dataset's first version
  // The content, immutable.
  std::string uri;          // s3://, gs://, az://, hdfs://, file:// or https://
  std::string digest;       // "sha256:<64 hex>" of the content
  std::string schema_hash;  // "sha256:<64 hex>" of its schema, or empty
  std::int64_t size_bytes = 0;
  std::vector<DatasetRef> parents;  // the versions it was derived from (lineage)
  // tenant-confidential (the default): only the owner's members see it; shared: also
  // the tenants named here.
  std::vector<TenantId> shared_with;
  std::string created_by;  // the principal that registered it
  Time created_at;
  // What moves.
  QualityStatus status = QualityStatus::kPending;
  std::string status_reason;
  std::string status_by;
  Time status_at;

  bool shared() const { return !shared_with.empty(); }
  // Whether a member of `t` may see and use it.
  bool visible_to(const TenantId& t) const;
};

// The registration body of `ref` by `tenant`: {uri, digest, schemaHash, sizeBytes,
// parents: ["id@version"], privacy: "tenant-confidential" | {shared: [tenant, ...]},
// status: "pending" | "passed"}. Every mistake is reported with its field path
// (invalid_fields); that parents and shared tenants exist is checked by the caller.
Result<DatasetVersion> parse_dataset_version(const DatasetRef& ref, const TenantId& tenant,
                                             std::string_view body);

// The content fields as canonical JSON: two registrations are the same version exactly
// when these are equal (a retry answers the first; anything else is refused).
std::string dataset_content_json(const DatasetVersion& v);

}  // namespace corral::core
