// The tenants' stored rows decoded once, for every reader of the tenant table (the
// scheduler's snapshot, admission, the dashboard, billing, metrics, the gates), so each
// reads types and one rule decides what a row this build cannot read does: it is left
// out, as a tenant that is not there, and reported in the log (event unreadable_row, at
// error level, once per row content per process: the snapshot reads the table every
// cycle). That line is written at once, not with a transaction's Effects (log.h): it
// tells of what a read found, which a retried or failed transaction found too.
//
// Thread safety: safe to call concurrently.
#pragma once

#include <vector>

#include "server/base/model_json.h"
#include "store/store.h"

namespace corral::server {

// The configs of `rows`, in their order, less the rows that cannot be read.
std::vector<TenantConfig> stored_tenants(const std::vector<store::TenantRow>& rows);

}  // namespace corral::server
