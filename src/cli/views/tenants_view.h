// What `corral tenants` and `corral tenant get NAME` print: each tenant's configuration
// (GET /v1/tenants) beside its current use (GET /v1/shares), one row per tenant and GPU
// type, as sinfo prints a row per partition and state.
//
//   tenants  TENANT PARENT WEIGHT GPU USED GUARANTEED BORROW LIMIT PENDING
//            (wide adds BORROWED, LENT, SHARE, MAX PENDING, SUBMIT/S)
//
// USED counts the GPUs its jobs hold now, borrowed ones included; BORROW LIMIT is how
// many beyond GUARANTEED it may borrow while others leave GPUs idle.
//
// Thread safety: safe for concurrent use (pure functions).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "cli/format/table.h"

namespace corral::cli {

// `tenants`: the tenant configurations; `shares`: GET /v1/shares (null when unknown).
Table tenants_table(const nlohmann::json& tenants, const nlohmann::json& shares, bool wide);

// One tenant (GET /v1/tenants/{name}) with its use.
std::string tenant_text(const nlohmann::json& tenant, const nlohmann::json& shares);

}  // namespace corral::cli
