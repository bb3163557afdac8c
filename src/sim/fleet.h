// The simulated fleet: node pools, network layout, racks, prices, failures and tenants,
// read from a YAML file (examples/fleets/*.yaml; the schema is in docs/evaluation.md).
//
// load_fleet() expands the pools into core::Node values with topology labels, so the
// engine can hand them to sched::build_snapshot() exactly as corrald hands it the
// store's rows. Tenants come from the file, or from the trace by `trace_tenants`
// (resolve_tenants()): every tenant a trace names gets the rule's weight and an equal
// guaranteed share of each GPU type.
//
// Thread safety: value types; a Fleet is read-only once built and safe to share.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/gpu_type.h"
#include "core/ids.h"
#include "core/price_book.h"
#include "core/reservation.h"
#include "core/result.h"
#include "core/tenant.h"
#include "core/time.h"
#include "core/topology.h"

namespace corral::sim {

// How tenants that the trace names but the fleet file does not are created.
struct TraceTenantRule {
  double weight = 1.0;
  // true: each GPU type's capacity is split equally, guaranteed = floor(capacity / N)
  // for N trace tenants; false: no guarantee (everything is borrowed).
  bool equal_guarantee = true;
  std::int64_t borrow_limit = core::kUnlimited;
};

// Failures: each GPU fails independently, exponentially with mean `mtbf` (so a node of
// g GPUs sees a failure every mtbf/g on average); a failed GPU returns after `repair`.
struct FailureModel {
  core::Duration mtbf_per_gpu{0};  // 0: no failures
  core::Duration repair = core::seconds(4 * 3600);
};

struct Fleet {
  std::string name;
  std::string region = "local";
  std::vector<core::GpuType> gpu_types;  // the types the pools use, sorted by id
  std::vector<core::Node> nodes;         // sorted by id
  std::vector<core::Rack> racks;
  // Reservations the scheduler keeps for their tenants (none from a fleet file; a test or
  // a what-if fills them).
  std::vector<core::Reservation> reservations;
  std::vector<core::Tenant> tenants;             // from the file
  std::optional<TraceTenantRule> trace_tenants;  // absent: unknown trace tenants are errors
  core::PriceBook prices;
  FailureModel failures;

  std::int64_t total_gpus() const;
  // GPUs of `type` in the fleet.
  std::int64_t gpus_of_type(const core::GpuTypeId& type) const;
  // The largest NVLink domain and the largest node, in GPUs (the engine derives each
  // job's ideal packing from them).
  std::int32_t max_nvlink_domain_gpus() const;
  std::int32_t max_node_gpus() const;
};

// Parses a fleet from YAML text; `source` names it in errors. Errors are InvalidArgument
// with the YAML field path, e.g. `pools[1].gpus_per_node: must be >= 1, got 0`.
core::Result<Fleet> parse_fleet(std::string_view yaml, std::string_view source);
core::Result<Fleet> load_fleet(const std::string& path);

// The tenants of a run: the fleet's own, plus one per trace tenant it lacks (by the
// fleet's trace_tenants rule). InvalidArgument when the trace names a tenant the fleet
// does not know and has no rule for. Sorted by id.
core::Result<std::vector<core::Tenant>> resolve_tenants(const Fleet& fleet,
                                                        const std::vector<core::TenantId>& used);

}  // namespace corral::sim
