// Seeded random fleets and workloads for property tests and benchmarks. The same seed
// gives the same fleet on every run (a splitmix64 generator of our own, so no library's
// distribution changes it).
#pragma once

#include <cstdint>
#include <vector>

#include "sched/config.h"
#include "sched/snapshot.h"

namespace corral::testing {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  // Uniform in [lo, hi].
  std::int64_t uniform(std::int64_t lo, std::int64_t hi);
  bool chance(double p);

 private:
  std::uint64_t state_;
};

struct FleetShape {
  std::int32_t nodes = 16;
  std::int32_t gpu_types = 2;  // taken from the builtin catalog
  std::int32_t leaves = 4;
  std::int32_t spines = 2;
  std::int32_t tenants = 4;
  std::int32_t org_tenants = 0;  // tenants that are parents of others
  double unhealthy_gpu_fraction = 0.02;
  double cordoned_node_fraction = 0.05;
  double nvl_rack_fraction = 0.0;  // share of nodes that are 4-GPU trays in NVLink racks
  bool mixed_node_shapes = true;   // some PCIe nodes with NVLink pairs, some 4-GPU nodes
  bool rack_power_caps = true;
  bool cpu_limits = true;
  bool quotas = true;
  std::int32_t reservations = 0;  // up to this many, with windows around time 0-3h
  // Regions "region0".."regionN-1", consecutive nodes in each; 1: every node in "local".
  std::int32_t regions = 1;
};

struct WorkloadShape {
  std::int32_t pending = 40;
  std::int32_t running = 20;
  std::int32_t max_gpus = 64;
  std::int32_t tiers = 3;
  double elastic_fraction = 0.15;
  double reservation_fraction = 0.05;  // jobs naming one of the fleet's reservations
  double stopping_fraction = 0.05;     // running jobs already asked to stop
  double speed_fraction = 0;           // jobs that give their speed by GPU type (gpu_speed)
  // Jobs bound to one of the fleet's regions (a tenth of them to a region no node is in).
  double region_fraction = 0;
};

// The seeds of a property test's cases: `default_count` from `base`, as many as
// CORRAL_PROPERTY_CASES says instead, or only CORRAL_SEED (a failing case's, to replay it).
std::vector<std::uint64_t> property_seeds(std::uint64_t base, int default_count);

// A fleet with no jobs.
sched::SnapshotInput random_fleet(Rng& rng, const FleetShape& shape);

// Random job requests of the fleet's tenants and types, ids from `first_id`.
std::vector<sched::PendingJob> random_jobs(Rng& rng, const sched::SnapshotInput& fleet,
                                           const WorkloadShape& shape, std::int64_t first_id,
                                           std::int32_t count);

// The fleet plus a workload: `shape.running` jobs are placed by decide() on the empty
// fleet and become running jobs (so running state is always consistent), then
// `shape.pending` more are queued.
sched::SnapshotInput random_workload(Rng& rng, sched::SnapshotInput fleet,
                                     const WorkloadShape& shape);

}  // namespace corral::testing
