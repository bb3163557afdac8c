// A synthetic workload generator with documented distributions (docs/evaluation.md):
//
//   sizes      GPUs per job drawn from a discrete table (default: Philly's mix,
//              1: 70%, 2: 10%, 4: 10%, 8: 7%, 16: 2%, 32: 1%)
//   durations  log-normal, median `duration_median_s`, shape `duration_sigma`, clipped
//              to [duration_min_s, duration_max_s]
//   tenants    Zipf with exponent `tenant_zipf` over `tenants` tenants t00, t01, ...
//   arrivals   Poisson; the rate is set so the offered load (GPU-seconds per second)
//              is `load_factor` times the fleet's GPUs, measured on the drawn jobs
//   groups     optional: tenants in groups, each with its share of the jobs and its own
//              sizes and durations (one heavy tenant with long gangs beside many light
//              tenants with short 1-GPU jobs); a group leaves out what the top level says
//
// The same spec and seed give the same jobs. The spec is read from YAML; every field is
// optional.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"
#include "sim/traces/workload.h"

namespace corral::sim {

// A group of tenants with its own job mix. Its tenants are named on from the previous
// group's (t00, t01, ...) and drawn by Zipf inside the group.
struct SyntheticGroup {
  std::int32_t tenants = 1;
  double jobs_share = 1;  // weight of the group among submissions (a job, array or chain)
  std::vector<std::pair<std::int32_t, double>> sizes;
  double duration_median_s = 1800;
  double duration_sigma = 1.5;
  double tenant_zipf = 1.0;
  // Workflows: each submission of the group an array of `array_count` tasks (at most
  // `array_max_running` running; 0: no limit), or else a chain of `chain_length` steps,
  // each after the one before succeeded. 1 and 1: plain jobs. A submission's jobs arrive
  // together; the arrival rate still offers the spec's load.
  std::int32_t array_count = 1;
  std::int32_t array_max_running = 0;
  std::int32_t chain_length = 1;
  // Sweeps: with `sweep_steps` > 0 each array is a sweep of `array_count` trials of that
  // many steps, all of the submission's one drawn duration; each trial's learning curve
  // (SweepTrial) has final value 1 + 0.3 N(0,1), gap 1 and speed e^(0.5 N(0,1)).
  // `asha_min_step` > 0 stops trials by ASHA (core::AshaRule) with `asha_reduction_factor`.
  std::int64_t sweep_steps = 0;
  std::int64_t asha_min_step = 0;
  std::int32_t asha_reduction_factor = 3;
};

struct SyntheticSpec {
  std::int64_t jobs = 1000;
  std::int32_t tenants = 8;
  std::uint64_t seed = 1;
  double load_factor = 0.8;
  std::vector<std::pair<std::int32_t, double>> sizes = {{1, 0.70}, {2, 0.10},  {4, 0.10},
                                                        {8, 0.07}, {16, 0.02}, {32, 0.01}};
  double duration_median_s = 1800;
  double duration_sigma = 1.5;
  double duration_min_s = 60;
  double duration_max_s = 7 * 24 * 3600;
  double tenant_zipf = 1.0;
  std::string gpu_type;  // empty: any type
  // Empty: one group of `tenants` tenants with the top-level sizes and durations.
  std::vector<SyntheticGroup> groups;
};

core::Result<SyntheticSpec> parse_synthetic_spec(std::string_view yaml, std::string_view source);
core::Result<SyntheticSpec> load_synthetic_spec(const std::string& path);

// REQUIRES: fleet_gpus > 0.
Workload generate_synthetic(const SyntheticSpec& spec, std::int64_t fleet_gpus);

}  // namespace corral::sim
