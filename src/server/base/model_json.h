// JSON forms of the objects the API manages besides jobs: tenant settings, node
// registrations and reservations. Parsing is strict (unknown fields, wrong types and
// out-of-range values are InvalidArgument naming the field path) because these bodies
// come from the network. The same forms are stored in the store's *_json columns.
//
// Thread safety: free functions, safe to call concurrently.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "core/reservation.h"
#include "core/result.h"
#include "core/tenant.h"
#include "core/topology.h"
#include "registry/retraining.h"

namespace corral::server {

// A non-negative decimal from a URL path or query (ids, versions, milliseconds): digits
// only, at most 18 of them so it fits; nullopt otherwise.
std::optional<std::int64_t> parse_decimal(const std::string& s);

// A tenant's submit rate: a token bucket refilled at `rate_per_second`, holding at most
// `burst` (admission.h takes from it).
struct RateLimit {
  double rate_per_second = 1000;
  double burst = 2000;
};

// What the dataset gate does for a tenant's jobs (docs/datasets.md#a-tenants-policy).
struct DatasetPolicy {
  bool allow_pending = false;       // a pending version admits the job, not only a passed one
  bool stop_on_quarantine = false;  // a quarantine stops running jobs through a checkpoint

  friend bool operator==(const DatasetPolicy&, const DatasetPolicy&) = default;
};

// A tenant as configured: its scheduling settings and admission limits.
struct TenantConfig {
  core::Tenant tenant;
  std::int64_t max_pending_jobs = 100000;
  RateLimit submit;
  DatasetPolicy datasets;
  registry::RetrainingBudget retraining;
};

// The `default` tenant of a fresh corrald: weight 1, bounded only by capacity.
TenantConfig default_tenant_config(const core::TenantId& id);

// {"weight", "parent", "quotas": {TYPE: {"guaranteed", "borrowLimit"}}, "defaultQuota",
//  "maxPendingJobs", "submitRatePerSecond", "submitBurst", "datasets": {"allowPending",
//  "stopOnQuarantine"}, "retraining": {"maxGpus", "gpuHours", "period"}}; absent fields keep
//  defaults.
// Thousandths of GPUs as the API writes them: an integer when whole (16), else a decimal
// (3.5); tenant quotas read such numbers back into thousandths.
nlohmann::json gpus_json(std::int64_t milli);

core::Result<TenantConfig> tenant_config_from_json(std::string_view name, std::string_view text);
std::string tenant_config_to_json(const TenantConfig& config);

// {"id", "labels": {"region", "cluster", "spine", "leaf", "rack", "nvlinkRack"},
//  "cpus", "memoryMib", "gpus": [{"index", "uuid", "type", "nvlinkDomain", "numaNode",
//  "healthy"}]} or, for simulated nodes, "gpuType" and "gpuCount" instead of "gpus"
// (one NVLink domain). GPU types must be in the built-in catalog.
core::Result<core::Node> node_from_json(std::string_view text);
std::string node_to_json(const core::Node& node);

// {"id", "tenant", "gpuType", "count", "nodes": [...], "startMs", "endMs"}.
core::Result<core::Reservation> reservation_from_json(std::string_view text);
std::string reservation_to_json(const core::Reservation& reservation);

// Names of tenants, nodes and reservations: 1 to 63 of [a-z0-9A-Z._-], starting with a
// letter or digit (no '/', no '..', so they are safe in paths and logs).
bool valid_name(std::string_view name);

}  // namespace corral::server
