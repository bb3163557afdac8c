// The shape that model versions and feature set versions share: a named, versioned JSON
// document written once and owned by a tenant, and how a list of such names reads.
#pragma once

#include <cstdint>
#include <string>

#include "core/ids.h"
#include "core/time.h"

namespace corral::store {

struct VersionedDoc {
  std::string name;  // the model's or feature set's
  std::string version;
  core::TenantId tenant;
  std::string content;  // JSON, as the API module that owns it writes it
  std::string created_by;
  core::Time created_at;
};

// A name as listed: its owner, how many versions it has, its newest registration.
struct VersionedSummary {
  std::string id;
  core::TenantId tenant;
  std::int64_t versions = 0;
  core::Time latest;
};

}  // namespace corral::store
