// The simulator's outputs, one set per invocation covering every policy run:
//
//   DIR/summary.json  per policy: gpu_allocation, mean/median/p99 JCT and queueing delay,
//                     makespan, jain_index, preemptions, lost_gpu_hours, by size bucket,
//                     per tenant, cost, and the run's own counters
//   DIR/jobs.csv      one row per policy and job
//   DIR/report.html   self-contained (inline SVG and one small inline script; no
//                     network): utilization over time, queue length, JCT CDF per policy,
//                     per-tenant share against entitlement, and the summary table. The
//                     script checks that every plot is present and writes the verdict to
//                     #report-status (data-status="ok" or "error"), which tests read.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "sim/engine.h"
#include "sim/fleet.h"
#include "sim/metrics.h"
#include "sim/traces/workload.h"

namespace corral::sim {

struct PolicyRun {
  RunResult run;
  Metrics metrics;
};

// The ids of the report's plots, in page order.
std::vector<std::string> report_plot_ids();

std::string summary_json(const Fleet& fleet, const Workload& workload,
                         const std::vector<PolicyRun>& runs);
std::string jobs_csv(const std::vector<PolicyRun>& runs);
std::string report_html(const Fleet& fleet, const Workload& workload,
                        const std::vector<PolicyRun>& runs);

// Writes the three files into `dir`, creating it when missing.
core::Status write_outputs(const std::string& dir, const Fleet& fleet, const Workload& workload,
                           const std::vector<PolicyRun>& runs);

}  // namespace corral::sim
