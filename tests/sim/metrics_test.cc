#include "sim/metrics.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sim/report.h"

namespace corral::sim {
namespace {

TEST(Metrics, DistributionUsesNearestRank) {
  std::vector<double> v = {5, 1, 4, 2, 3};
  const Distribution d = distribution(v);
  EXPECT_EQ(d.count, 5);
  EXPECT_DOUBLE_EQ(d.mean, 3);
  EXPECT_DOUBLE_EQ(d.median, 3);
  EXPECT_DOUBLE_EQ(d.p99, 5);
  std::vector<double> none;
  EXPECT_EQ(distribution(none).count, 0);
}

// A hand-made run: two tenants of weight 1 and 3 on an 8-GPU fleet. a used 10 GPU-hours,
// b 30: shares 0.25 and 0.75 match entitlements 0.25 and 0.75, so Jain's index is 1.
RunResult two_tenant_run(std::int64_t a_hours, std::int64_t b_hours) {
  RunResult r{.policy = "p", .total_gpus = 8};
  r.tenants = {{.id = core::TenantId("a"), .weight = 1},
               {.id = core::TenantId("b"), .weight = 3},
               {.id = core::TenantId("idle"), .weight = 5}};
  const core::GpuTypeId h100("H100");
  r.tenant_gpu_ms[core::TenantId("a")][h100] = a_hours * 3'600'000;
  r.tenant_gpu_ms[core::TenantId("b")][h100] = b_hours * 3'600'000;
  r.jobs = {{.name = "j1",
             .tenant = core::TenantId("a"),
             .gpus = 1,
             .submit_ms = 0,
             .start_ms = 10'000,
             .finish_ms = 110'000,
             .gpu_ms = a_hours * 3'600'000},
            {.name = "j2",
             .tenant = core::TenantId("b"),
             .gpus = 8,
             .submit_ms = 0,
             .start_ms = 0,
             .finish_ms = 200'000,
             .gpu_ms = b_hours * 3'600'000},
            {.name = "j3", .tenant = core::TenantId("b"), .gpus = 64, .submit_ms = 5'000}};
  r.allocated_gpu_ms = (a_hours + b_hours) * 3'600'000;
  // While waiting, a held 1 GPU of its fair 2 (x = 0.5) and b all of its fair 6 (x = 1).
  r.backlog[core::TenantId("a")] = {
      .backlogged_ms = 1000, .held_gpu_ms = 1000, .fair_gpu_ms = 2000};
  r.backlog[core::TenantId("b")] = {
      .backlogged_ms = 1000, .held_gpu_ms = 8000, .fair_gpu_ms = 6000};
  r.end_ms = 200'000;
  return r;
}

Fleet priced_fleet() {
  auto f = parse_fleet(
      "pools:\n  - {name: p, gpu_type: H100, nodes: 1, gpus_per_node: 8}\n"
      "prices: {per_gpu_hour_usd: {H100: 2.5}}\n",
      "f");
  EXPECT_TRUE(f.ok());
  return *f;
}

TEST(Metrics, SharesEntitlementsJainAndCost) {
  const Metrics m = compute_metrics(two_tenant_run(10, 30), priced_fleet());
  EXPECT_EQ(m.jobs, 3);
  EXPECT_EQ(m.finished, 2);
  EXPECT_EQ(m.never_started, 1);
  EXPECT_DOUBLE_EQ(m.jct_s.mean, 155);
  EXPECT_DOUBLE_EQ(m.queue_s.mean, 5);
  EXPECT_DOUBLE_EQ(m.makespan_s, 200);
  ASSERT_EQ(m.tenants.size(), 2u);  // the idle tenant has no jobs, so no entitlement
  EXPECT_DOUBLE_EQ(m.tenants[0].share, 0.25);
  EXPECT_DOUBLE_EQ(m.tenants[0].entitlement, 0.25);
  EXPECT_DOUBLE_EQ(m.tenants[1].entitlement, 0.75);
  EXPECT_DOUBLE_EQ(m.tenants[0].backlog_service, 0.5);
  EXPECT_DOUBLE_EQ(m.tenants[1].backlog_service, 8.0 / 6.0);
  // x = 0.5 and min(1, 4/3) = 1: Jain = 1.5^2 / (2 * 1.25) = 0.9.
  EXPECT_NEAR(m.jain_index, 0.9, 1e-12);
  EXPECT_DOUBLE_EQ(m.tenants[0].cost_usd, 25.0);
  EXPECT_DOUBLE_EQ(m.total_cost_usd, 100.0);
  EXPECT_EQ(m.by_size[0].jct_s.count, 1);  // j1: 1 GPU
  EXPECT_EQ(m.by_size[2].jct_s.count, 1);  // j2: 8 GPUs
  RunResult nobody_waited = two_tenant_run(10, 30);
  nobody_waited.backlog.clear();
  EXPECT_DOUBLE_EQ(compute_metrics(nobody_waited, priced_fleet()).jain_index, 1.0);
}

TEST(Report, SummaryJsonHasTheContractFieldsPerPolicy) {
  const RunResult run = two_tenant_run(10, 30);
  const Fleet fleet = priced_fleet();
  const std::vector<PolicyRun> runs = {{run, compute_metrics(run, fleet)}};
  const auto j = nlohmann::json::parse(summary_json(fleet, {.source = "w"}, runs));
  for (const char* key :
       {"gpu_allocation", "mean_jct_s", "median_jct_s", "p99_jct_s", "mean_queue_s", "makespan_s",
        "jain_index", "preemptions", "lost_gpu_hours", "by_size", "tenants"}) {
    EXPECT_TRUE(j["policies"]["p"].contains(key)) << key;
  }
  const std::string csv = jobs_csv(runs);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "policy,job_id,tenant,gpus,submit_s,start_s,finish_s,queue_s,jct_s,duration_s,run_s,"
            "gpu_type,wanted,packed,slowdown,attempts,preemptions,failures,lost_gpu_hours,"
            "last_reason");
  const std::string html = report_html(fleet, {.source = "w"}, runs);
  for (const std::string& id : report_plot_ids()) {
    EXPECT_NE(html.find("id=\"" + id + "\""), std::string::npos) << id;
  }
  EXPECT_EQ(html.find("src=\"http"), std::string::npos);  // self-contained
}

}  // namespace
}  // namespace corral::sim
