#include "core/dataset.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/job_spec_parse.h"
#include "core/json_object.h"

namespace corral::core {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxUri = 2048;
constexpr std::size_t kMaxParents = 256;
constexpr std::size_t kMaxShared = 256;
constexpr std::int64_t kMaxSize = std::int64_t{1} << 60;  // an exbibyte

bool is_hex_digest(std::string_view s) {
  if (!s.starts_with("sha256:") || s.size() != 7 + 64) return false;
  return std::all_of(s.begin() + 7, s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool has_known_scheme(std::string_view uri) {
  for (const std::string_view scheme :
       {"s3://", "gs://", "az://", "hdfs://", "file:///", "https://"}) {
    if (uri.starts_with(scheme) && uri.size() > scheme.size()) return true;
  }
  return false;
}

}  // namespace

std::string_view to_string(QualityStatus status) {
  switch (status) {
    case QualityStatus::kPending:
      return "pending";
    case QualityStatus::kPassed:
      return "passed";
    case QualityStatus::kQuarantined:
      return "quarantined";
  }
  return "pending";
}

std::optional<QualityStatus> quality_status_from(std::string_view text) {
  for (const QualityStatus s :
       {QualityStatus::kPending, QualityStatus::kPassed, QualityStatus::kQuarantined}) {
    if (to_string(s) == text) return s;
  }
  return std::nullopt;
}

bool is_dataset_version(std::string_view version) {
  return !version.empty() && version.size() <= 63 &&
         std::all_of(version.begin(), version.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-';
         });
}

Result<DatasetRef> parse_dataset_ref(std::string_view text, const std::string& field) {
  const auto at = text.find('@');
  if (at == std::string_view::npos) {
    return invalid_argument(field,
                            fmt::format("must be DATASET@VERSION, got \"{}\"",
                                        text.substr(0, std::min<std::size_t>(text.size(), 80))));
  }
  const std::string_view id = text.substr(0, at);
  const std::string_view version = text.substr(at + 1);
  if (id.size() > 63 || !is_dns_label(id)) {
    return invalid_argument(field,
                            "the dataset id must be a DNS label (lowercase letters, digits "
                            "and '-', at most 63)");
  }
  if (!is_dataset_version(version)) {
    return invalid_argument(field, "the version must be 1 to 63 of letters, digits, '.', '_', '-'");
  }
  return DatasetRef{std::string(id), std::string(version)};
}

bool DatasetVersion::visible_to(const TenantId& t) const {
  return t == tenant || std::find(shared_with.begin(), shared_with.end(), t) != shared_with.end();
}

Result<DatasetVersion> parse_dataset_version(const DatasetRef& ref, const TenantId& tenant,
                                             std::string_view body) {
  CORRAL_ASSIGN_OR_RETURN(const json doc, parse_json_object(body));
  DatasetVersion v{.ref = ref, .tenant = tenant};
  std::vector<FieldError> errors;
  const auto fail = [&](std::string path, std::string reason) {
    errors.push_back({std::move(path), std::move(reason)});
  };
  bool has_uri = false, has_digest = false, has_size = false;
  for (const auto& [key, value] : doc.items()) {
    if (key == "uri") {
      has_uri = true;
      if (!value.is_string()) {
        fail(key, "must be a string");
      } else if (const auto& s = value.get_ref<const std::string&>(); s.size() > kMaxUri) {
        fail(key, fmt::format("must be at most {} characters", kMaxUri));
      } else if (!has_known_scheme(s)) {
        fail(key, "must be an s3://, gs://, az://, hdfs://, file:/// or https:// URI");
      } else {
        v.uri = s;
      }
    } else if (key == "digest" || key == "schemaHash") {
      has_digest = has_digest || key == "digest";
      if (!value.is_string() || !is_hex_digest(value.get<std::string>())) {
        fail(key, "must be \"sha256:\" and 64 lowercase hex digits");
      } else {
        (key == "digest" ? v.digest : v.schema_hash) = value.get<std::string>();
      }
    } else if (key == "sizeBytes") {
      has_size = true;
      if (!value.is_number_integer() || value.get<std::int64_t>() < 0 ||
          value.get<std::int64_t>() > kMaxSize) {
        fail(key, "must be a whole number of bytes from 0 to 2^60");
      } else {
        v.size_bytes = value.get<std::int64_t>();
      }
    } else if (key == "parents") {
      if (!value.is_array()) {
        fail(key, "must be a list of DATASET@VERSION");
        continue;
      }
      if (value.size() > kMaxParents) fail(key, fmt::format("at most {} parents", kMaxParents));
      std::set<DatasetRef> seen;
      for (std::size_t i = 0; i < value.size() && i < kMaxParents; ++i) {
        const std::string path = fmt::format("parents[{}]", i);
        if (!value[i].is_string()) {
          fail(path, "must be a string DATASET@VERSION");
          continue;
        }
        auto parent = parse_dataset_ref(value[i].get<std::string>(), path);
        if (!parent.ok()) {
          fail(path, parent.status().message());
        } else if (*parent == ref) {
          fail(path, "a version cannot be its own parent");
        } else if (!seen.insert(*parent).second) {
          fail(path, "names " + parent->text() + " twice");
        } else {
          v.parents.push_back(std::move(*parent));
        }
      }
    } else if (key == "privacy") {
      if (value.is_string() && value.get<std::string>() == "tenant-confidential") continue;
      if (!value.is_object() || value.size() != 1 || !value.contains("shared")) {
        fail(key, "must be \"tenant-confidential\" or {\"shared\": [tenant, ...]}");
        continue;
      }
      const json& shared = value["shared"];
      if (!shared.is_array() || shared.empty() || shared.size() > kMaxShared) {
        fail("privacy.shared", fmt::format("must list 1 to {} tenants", kMaxShared));
        continue;
      }
      for (std::size_t i = 0; i < shared.size(); ++i) {
        const std::string path = fmt::format("privacy.shared[{}]", i);
        if (!shared[i].is_string() || !is_dns_label(shared[i].get<std::string>())) {
          fail(path, "must be a tenant name");
        } else if (TenantId t(shared[i].get<std::string>()); t == tenant) {
          fail(path, "is the owner, who always sees it");
        } else if (std::find(v.shared_with.begin(), v.shared_with.end(), t) !=
                   v.shared_with.end()) {
          fail(path, "names " + t.value + " twice");
        } else {
          v.shared_with.push_back(std::move(t));
        }
      }
    } else if (key == "status") {
      const auto s =
          value.is_string() ? quality_status_from(value.get<std::string>()) : std::nullopt;
      if (!s || *s == QualityStatus::kQuarantined) {
        fail(key, "must be pending or passed (quarantine is a status move with a reason)");
      } else {
        v.status = *s;
      }
    } else {
      fail(key, "unknown field");
    }
  }
  if (!has_uri) fail("uri", "is required");
  if (!has_digest) fail("digest", "is required: a version is its content");
  if (!has_size) fail("sizeBytes", "is required");
  if (!errors.empty()) return invalid_fields(std::move(errors));
  return v;
}

std::string dataset_content_json(const DatasetVersion& v) {
  json parents = json::array();
  for (const DatasetRef& p : v.parents) parents.push_back(p.text());
  // In name order: the same tenants in another order are the same version.
  std::vector<TenantId> tenants = v.shared_with;
  std::sort(tenants.begin(), tenants.end());
  json shared = json::array();
  for (const TenantId& t : tenants) shared.push_back(t.value);
  const json out = {{"uri", v.uri},
                    {"digest", v.digest},
                    {"schemaHash", v.schema_hash},
                    {"sizeBytes", v.size_bytes},
                    {"parents", parents},
                    {"sharedWith", shared}};
  return out.dump();
}

}  // namespace corral::core
