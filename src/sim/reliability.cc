#include "sim/reliability.h"

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "sim/engine.h"
#include "sim/policies.h"
#include "sim/traces/workload.h"

namespace corral::sim {
namespace {

double seconds_of(std::int64_t ms) { return static_cast<double>(ms) / 1000.0; }

core::Status validate(const LlmReliabilitySetup& s) {
  if (s.nodes < 1) return core::invalid_argument("nodes", "must be >= 1");
  if (s.gpus_per_node < 1 || s.gpus_per_node > 64) {
    return core::invalid_argument("gpus_per_node", "must be between 1 and 64");
  }
  if (s.spares < 0) return core::invalid_argument("spares", "must be >= 0");
  if (!(s.days > 0)) return core::invalid_argument("days", "must be > 0");
  if (!(s.interruptions > 0)) return core::invalid_argument("interruptions", "must be > 0");
  if (s.checkpoint_interval.count() < 0 || s.checkpoint_cost.count() < 0 || s.restart.count() < 0 ||
      s.repair.count() < 0) {
    return core::invalid_argument("durations", "must be >= 0");
  }
  return core::ok_status();
}

}  // namespace

core::Result<Fleet> llm_fleet(const LlmReliabilitySetup& s) {
  CORRAL_RETURN_IF_ERROR(validate(s));
  const double job_gpus = static_cast<double>(s.nodes) * s.gpus_per_node;
  const double mtbf_hours = s.days * 24.0 * job_gpus / s.interruptions;
  const std::string yaml = fmt::format(
      "name: llm-{}x{}+{}\n"
      "network: {{nodes_per_leaf: 32, leaves_per_spine: 16}}\n"
      "pools:\n"
      "  - {{name: h100, gpu_type: H100, nodes: {}, gpus_per_node: {}, nvlink_domain_gpus: {}}}\n"
      "failures: {{mtbf_hours_per_gpu: {}, repair_hours: {}}}\n"
      "trace_tenants: {{guarantee: none}}\n",
      s.nodes, s.gpus_per_node, s.spares, s.nodes + s.spares, s.gpus_per_node, s.gpus_per_node,
      mtbf_hours, static_cast<double>(s.repair.count()) / 3600e3);
  return parse_fleet(yaml, "llm_fleet");
}

core::Result<LlmReliabilityResult> run_llm_reliability(const LlmReliabilitySetup& s) {
  CORRAL_ASSIGN_OR_RETURN(const Fleet fleet, llm_fleet(s));
  const auto horizon_ms = std::llround(s.days * 86400e3);
  // The job never finishes inside the horizon: it trains for all of it.
  const Workload workload{.source = "llm-reliability",
                          .jobs = {{.name = "pretrain",
                                    .tenant = core::TenantId("llm"),
                                    .submit_ms = 0,
                                    .gpus = s.nodes * s.gpus_per_node,
                                    .gpus_per_node = s.gpus_per_node,
                                    .duration_ms = 2 * horizon_ms}}};
  CORRAL_ASSIGN_OR_RETURN(const Policy policy, policy_by_name("corral"));
  EngineOptions options{.cycle_interval = s.cycle_interval,
                        .check_every = s.check_every,
                        .failures = true,
                        .horizon = core::Duration(horizon_ms),
                        .seed = s.seed};
  options.runtime.checkpoint_interval = s.checkpoint_interval;
  options.runtime.checkpoint_cost = s.checkpoint_cost;
  options.runtime.restore_time = s.restart;
  CORRAL_ASSIGN_OR_RETURN(const RunResult run, simulate(fleet, workload, policy, options));
  const JobResult& j = run.jobs.at(0);
  LlmReliabilityResult r;
  const std::int64_t wall = run.end_ms - j.submit_ms;
  r.wall_s = seconds_of(wall);
  r.productive_s = seconds_of(j.productive_ms);
  r.lost_s = seconds_of(j.lost_ms);
  r.checkpoint_s = seconds_of(j.checkpoint_ms);
  r.restart_s = seconds_of(j.restart_ms);
  r.waiting_s = seconds_of(wall - j.run_ms);
  r.interruptions = j.failures;
  r.gpu_failures = run.gpu_failures;
  return r;
}

double young_daly_interval_s(double delta_s, double mtbi_s) {
  return std::sqrt(2.0 * delta_s * mtbi_s);
}

double young_daly_efficiency(double tau_s, double delta_s, double restart_s, double mtbi_s) {
  return 1.0 - delta_s / tau_s - (tau_s / 2.0 + restart_s) / mtbi_s;
}

}  // namespace corral::sim
