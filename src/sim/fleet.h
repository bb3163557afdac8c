// The simulated fleet: node pools, network layout, racks, prices, failures and tenants,
// read from a YAML file (examples/fleets/*.yaml; the schema is in docs/evaluation.md).
//
// load_fleet() expands the pools into core::Node values with topology labels through
// core/fleet_pools.h (the same expansion the agent's fleet emulator uses), so the engine
// can hand them to sched::build_snapshot() exactly as corrald hands it the store's
// rows. Tenants come from the file, or from the trace by `trace_tenants`
// (resolve_tenants()): every tenant a trace names gets the rule's weight and an equal
// guaranteed share of each GPU type.
//
// Thread safety: value types; a Fleet is read-only once built and safe to share.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/gpu_type.h"
#include "core/ids.h"
#include "core/price_book.h"
#include "core/reservation.h"
#include "core/result.h"
#include "core/tenant.h"
#include "core/time.h"
#include "core/topology.h"
#include "sim/traces/workload.h"

namespace corral::sim {

// How tenants that the trace names but the fleet file does not are created.
struct TraceTenantRule {
  double weight = 1.0;
  // true: each GPU type's capacity is split equally, guaranteed = floor(capacity / N)
  // for N trace tenants; false: no guarantee (everything is borrowed).
  bool equal_guarantee = true;
  std::int64_t borrow_limit = core::kUnlimited;
};

// Which region trace jobs must run in (JobRequest::region), for a fleet of several
// regions: every job of a tenant named in `tenants` runs in that tenant's region (its
// data lives there); of the other jobs, a `fraction` is bound to a region drawn at random
// in proportion to each region's GPUs (seeded by the run's seed), and the rest may run
// anywhere. A job whose trace names a region keeps it.
struct JobRegionRule {
  std::map<core::TenantId, std::string> tenants;
  double fraction = 0;
};

// Failures: each GPU fails independently, exponentially with mean `mtbf` (so a node of
// g GPUs sees a failure every mtbf/g on average); a failed GPU returns after `repair`.
struct FailureModel {
  core::Duration mtbf_per_gpu{0};  // 0: no failures
  core::Duration repair = core::seconds(4 * 3600);
};

struct Fleet {
  std::string name;
  // The pools' region unless a pool names its own; also the price book's region for
  // billing (one for the whole fleet: the file's prices are per type only).
  std::string region = "local";
  std::vector<core::GpuType> gpu_types;  // the types the pools use, sorted by id
  std::vector<core::Node> nodes;         // sorted by id
  std::vector<core::Rack> racks;
  // Reservations the scheduler keeps for their tenants (none from a fleet file; a test or
  // a what-if fills them).
  std::vector<core::Reservation> reservations;
  std::vector<core::Tenant> tenants;             // from the file
  std::optional<TraceTenantRule> trace_tenants;  // absent: unknown trace tenants are errors
  JobRegionRule job_regions;                     // empty: jobs may run in any region
  core::PriceBook prices;
  FailureModel failures;

  std::int64_t total_gpus() const;
  // The regions the nodes are in, sorted, each with its GPUs.
  std::vector<std::pair<std::string, std::int64_t>> region_gpus() const;
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

// The region each job of `workload` must run in, by index ("": any): its trace's own, or
// the fleet's job_regions rule, drawing with `seed`. InvalidArgument names a job whose
// trace names a region no pool is in.
core::Result<std::vector<std::string>> assign_regions(const Fleet& fleet,
                                                      const std::vector<TraceJob>& jobs,
                                                      std::uint64_t seed);

// The tenants of a run: the fleet's own, plus one per trace tenant it lacks (by the
// fleet's trace_tenants rule). InvalidArgument when the trace names a tenant the fleet
// does not know and has no rule for. Sorted by id.
core::Result<std::vector<core::Tenant>> resolve_tenants(const Fleet& fleet,
                                                        const std::vector<core::TenantId>& used);

}  // namespace corral::sim
