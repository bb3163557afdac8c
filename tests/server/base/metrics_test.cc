// /metrics (server/base/metrics.h, docs/metrics.md): the exposition passes `promtool check
// metrics` (Debian's prometheus package; a missing promtool fails the test), renders what
// it is fed (tenant events, ledger counters, per-GPU samples under the DCGM exporter's
// names), and, in a whole corrald on a manual clock with a scripted agent, shows each
// tenant's GPUs allocated, borrowed and guaranteed, its pending jobs, queue waits,
// checkpoints, restarts and failures, every GPU's readings with its holder, and the
// ledger's GPU time; it answers 401 without a token and 403 to a role that may not scrape.
#include "server/base/metrics.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include "core/clock.h"
#include "server/base/model_json.h"
#include "server/controllers/metrics_refresher.h"
#include "store/store.h"
#include "testing/fake_agent.h"
#include "testing/in_process_corrald.h"
#include "testing/store_fixture.h"

namespace corral::testing {
namespace {

using namespace std::chrono_literals;

constexpr const char* kPromtool = "/usr/bin/promtool";

struct Promtool {
  bool ok = false;
  std::string output;
};

// `promtool check metrics` over `text`. A missing promtool is a failure, never a skip:
// setup (deps/debian.txt) installs it.
Promtool promtool_check(const std::string& text) {
  if (!std::filesystem::exists(kPromtool)) {
    ADD_FAILURE() << kPromtool
                  << " not found: install Debian's prometheus package (deps/debian.txt, "
                     "scripts/setup.sh)";
    return {};
  }
  TempDir dir;
  const auto file = dir.path() / "metrics.txt";
  std::ofstream(file) << text;
  const std::string cmd = std::string(kPromtool) + " check metrics < '" + file.string() + "' 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) {
    ADD_FAILURE() << "cannot run " << cmd;
    return {};
  }
  Promtool out;
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.output.append(buf, n);
  const int status = ::pclose(p);
  out.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return out;
}

// The value of the series `name{labels}` exactly as rendered (labels in their order);
// nullopt when the exposition has no such series.
std::optional<double> value_of(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() > series.size() && line.compare(0, series.size(), series) == 0 &&
        line[series.size()] == ' ') {
      return std::stod(line.substr(series.size() + 1));
    }
  }
  return std::nullopt;
}

// Every sample line of family `name` (its own lines, not a longer name's).
std::vector<std::string> samples_of(const std::string& text, const std::string& name) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, name.size(), name) == 0 && line.size() > name.size() &&
        (line[name.size()] == '{' || line[name.size()] == ' ')) {
      out.push_back(line);
    }
  }
  return out;
}

TEST(MetricsRender, APromtoolFailureIsSeen) {
  // What /metrics answered before issue 13: promtool refuses the unit, and so must we.
  const auto bad = promtool_check(
      "# HELP corral_sched_cycle_milliseconds_total time\n"
      "# TYPE corral_sched_cycle_milliseconds_total counter\n"
      "corral_sched_cycle_milliseconds_total 3\n");
  EXPECT_FALSE(bad.ok);
  EXPECT_NE(bad.output.find("seconds"), std::string::npos) << bad.output;
}

TEST(MetricsRender, EverythingFedPassesPromtoolAndReadsBack) {
  server::Metrics m;
  m.sched_cycle_us_total = 1'500'000;
  server::TenantEventMap events;
  events["nlp"].preemptions = 2;
  events["nlp"].queue_waits_ms = {500, 90'000, 200'000'000};
  events["vision"].failures = 1;
  events["vision"].checkpoints = 3;
  m.count_committed(events);
  m.count_committed({{"vision", {.restarts = 1}}});
  m.ledger.add("nlp", "used", 120'000, 3'600'000);
  m.ledger.add("nlp", "used", 60'000, 1'800'000);
  m.ledger.add("", "unallocated", 60'000, 0);
  server::RefreshedState state{
      .tenant_gpus =
          {{.tenant = "nlp", .gpu_type = "H100", .allocated = 6, .borrowed = 2, .guaranteed = 4}},
      .pending = {{"nlp", 3}},
      .gpus = {{.node = "n1",
                .index = 0,
                .uuid = "GPU-a",
                .pci_bus_id = "0000:18:00.0",
                .gpu_type = "H100",
                .job = 7,
                .tenant = "nlp",
                .utilization_percent = 87,
                .power_watts = 612.5,
                .temperature_c = 61,
                .fb_used_mib = 40'000,
                .fb_free_mib = 41'559},
               {.node = "n1", .index = 1, .uuid = "GPU-\"b\"\\", .gpu_type = "H100"}},
      .telemetry =
          {.accepted = 960, .dropped_rate = 40, .written = 900, .write_failures = 1, .queued = 60},
      .refreshed_at_ms = 1'779'999'960'123};
  m.set_refreshed(state);
  const std::string text = m.render();

  const auto checked = promtool_check(text);
  EXPECT_TRUE(checked.ok) << checked.output << "\n" << text;
  EXPECT_EQ(value_of(text, "corral_sched_cycle_seconds_total"), 1.5);
  EXPECT_EQ(text.find("milliseconds"), std::string::npos);
  EXPECT_EQ(value_of(text, R"(corral_tenant_preemptions_total{tenant="nlp"})"), 2);
  EXPECT_EQ(value_of(text, R"(corral_tenant_failures_total{tenant="vision"})"), 1);
  EXPECT_EQ(value_of(text, R"(corral_tenant_checkpoints_total{tenant="vision"})"), 3);
  EXPECT_EQ(value_of(text, R"(corral_tenant_restarts_total{tenant="vision"})"), 1);
  EXPECT_EQ(value_of(text, R"(corral_queue_wait_seconds_bucket{tenant="nlp",le="1"})"), 1);
  EXPECT_EQ(value_of(text, R"(corral_queue_wait_seconds_bucket{tenant="nlp",le="60"})"), 1);
  EXPECT_EQ(value_of(text, R"(corral_queue_wait_seconds_bucket{tenant="nlp",le="120"})"), 2);
  EXPECT_EQ(value_of(text, R"(corral_queue_wait_seconds_bucket{tenant="nlp",le="86400"})"), 2);
  EXPECT_EQ(value_of(text, R"(corral_queue_wait_seconds_bucket{tenant="nlp",le="+Inf"})"), 3);
  EXPECT_EQ(value_of(text, R"(corral_queue_wait_seconds_count{tenant="nlp"})"), 3);
  EXPECT_EQ(value_of(text, R"(corral_queue_wait_seconds_sum{tenant="nlp"})"), 200'090.5);
  EXPECT_EQ(value_of(text, R"(corral_ledger_gpu_seconds_total{tenant="nlp",bucket="used"})"), 180);
  EXPECT_EQ(value_of(text, R"(corral_ledger_cost_total{tenant="nlp",bucket="used"})"), 5.4);
  EXPECT_EQ(value_of(text, R"(corral_ledger_gpu_seconds_total{bucket="unallocated"})"), 60);
  EXPECT_EQ(value_of(text, R"(corral_tenant_gpus_allocated{tenant="nlp",gpu_type="H100"})"), 6);
  EXPECT_EQ(value_of(text, R"(corral_tenant_gpus_borrowed{tenant="nlp",gpu_type="H100"})"), 2);
  EXPECT_EQ(value_of(text, R"(corral_tenant_gpus_guaranteed{tenant="nlp",gpu_type="H100"})"), 4);
  EXPECT_EQ(value_of(text, R"(corral_tenant_pending_jobs{tenant="nlp"})"), 3);
  EXPECT_EQ(value_of(text, R"(corral_telemetry_samples_total{outcome="accepted"})"), 960);
  EXPECT_EQ(value_of(text, R"(corral_telemetry_samples_total{outcome="dropped_rate"})"), 40);
  EXPECT_EQ(value_of(text, R"(corral_telemetry_samples_total{outcome="written"})"), 900);
  EXPECT_EQ(value_of(text, "corral_telemetry_write_failures_total"), 1);
  EXPECT_EQ(value_of(text, "corral_telemetry_queued_samples"), 60);
  const std::string held =
      R"({gpu="0",UUID="GPU-a",device="nvidia0",pci_bus_id="0000:18:00.0",Hostname="n1",)"
      R"(node="n1",gpu_type="H100",hpc_job="7",tenant="nlp"})";
  EXPECT_EQ(value_of(text, "DCGM_FI_DEV_GPU_UTIL" + held), 87);
  EXPECT_EQ(value_of(text, "DCGM_FI_DEV_POWER_USAGE" + held), 612.5);
  EXPECT_EQ(value_of(text, "DCGM_FI_DEV_GPU_TEMP" + held), 61);
  EXPECT_EQ(value_of(text, "DCGM_FI_DEV_FB_USED" + held), 40'000);
  EXPECT_EQ(value_of(text, "DCGM_FI_DEV_FB_FREE" + held), 41'559);
  // An idle GPU has no holder labels; quotes and backslashes in a value are escaped.
  const std::string idle =
      R"({gpu="1",UUID="GPU-\"b\"\\",device="nvidia1",pci_bus_id="",Hostname="n1",)"
      R"(node="n1",gpu_type="H100"})";
  EXPECT_EQ(value_of(text, "DCGM_FI_DEV_GPU_UTIL" + idle), 0);
  EXPECT_EQ(samples_of(text, "DCGM_FI_DEV_FB_FREE").size(), 1u);  // size unknown for GPU 1
  // One series per GPU per family, whatever held it before: a refresh replaces them all.
  state.gpus[0].job = 8;
  state.gpus[0].tenant = "vision";
  m.set_refreshed(state);
  const std::string after = m.render();
  EXPECT_EQ(samples_of(after, "DCGM_FI_DEV_GPU_UTIL").size(), 2u);
  EXPECT_EQ(after.find(R"(hpc_job="7")"), std::string::npos);
  EXPECT_NE(after.find(R"(hpc_job="8",tenant="vision")"), std::string::npos);
}

TEST(MetricsRender, BeforeTheFirstRefreshEveryFamilyIsDeclared) {
  server::Metrics m;
  const std::string text = m.render();
  const auto checked = promtool_check(text);
  EXPECT_TRUE(checked.ok) << checked.output << "\n" << text;
  for (const char* family :
       {"corral_tenant_gpus_allocated", "corral_tenant_pending_jobs", "corral_queue_wait_seconds",
        "corral_ledger_gpu_seconds_total", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_POWER_USAGE"}) {
    EXPECT_NE(text.find(std::string("# TYPE ") + family + " "), std::string::npos) << family;
  }
}

// read_refreshed_state over a real store: a tenant's GPUs and pending jobs, each GPU's
// holder and heartbeat readings.
TEST(MetricsRefresh, ReadsTheStoreAndTheHeartbeatsReadings) {
  SqliteFactory factory;
  std::unique_ptr<store::Store> store;
  open_or_skip(factory, store);
  if (HasFatalFailure()) return;
  const core::Time t = core::time_from_ms(1'000'000);
  std::int64_t job = 0;
  ASSERT_TRUE(
      store
          ->transact([&](store::Tx& tx) {
            CORRAL_RETURN_IF_ERROR(tx.tenants().put_tenant(
                {.id = core::TenantId("nlp"),
                 .config_json = R"({"quotas":{"H100":{"guaranteed":1,"borrowLimit":4}}})",
                 .updated_at = t}));
            core::Node node{.id = core::NodeId("n1")};
            for (int g = 0; g < 3; ++g) {
              node.gpus.push_back({.index = g,
                                   .uuid = "GPU-" + std::to_string(g),
                                   .type = core::GpuTypeId("H100")});
            }
            CORRAL_RETURN_IF_ERROR(tx.nodes().upsert_node({.id = node.id,
                                                           .spec_json = server::node_to_json(node),
                                                           .created_at = t,
                                                           .updated_at = t}));
            // A row this build cannot read: left out of every series, and counted.
            CORRAL_RETURN_IF_ERROR(tx.nodes().upsert_node({.id = core::NodeId("n-unreadable"),
                                                           .spec_json = R"({"id": "n-unreadable",
                                                                    "gpus": "eight"})",
                                                           .created_at = t,
                                                           .updated_at = t}));
            for (int j = 0; j < 2; ++j) {  // the second one stays pending
              CORRAL_ASSIGN_OR_RETURN(auto row,
                                      tx.jobs().insert_job({.tenant = core::TenantId("nlp"),
                                                            .name = "train",
                                                            .priority_class = "standard",
                                                            .gpus = 2,
                                                            .spec_json = R"({"name":"train"})",
                                                            .now = t}));
              if (j == 0) job = row.id.value;
            }
            for (int g = 0; g < 2; ++g) {
              CORRAL_RETURN_IF_ERROR(
                  tx.allocations().insert_allocation({.job = core::JobId(job),
                                                      .attempt = 1,
                                                      .node = core::NodeId("n1"),
                                                      .gpu_index = g,
                                                      .gpu_type = core::GpuTypeId("H100"),
                                                      .created_at = t}));
            }
            store::ObservedNode seen{.node = core::NodeId("n1"), .heartbeat_at = t};
            seen.inventory.source = "nvml";
            seen.inventory.gpus.push_back(
                {.index = 0, .uuid = "GPU-0", .memory_mib = 81'559, .pci_bus_id = "0000:18:00.0"});
            for (int g = 0; g < 3; ++g) {
              seen.readings.push_back({.index = g,
                                       .temperature_c = 40 + g,
                                       .power_w = 100.0 + g,
                                       .sm_percent = 10 + g,
                                       .memory_used_mib = 559});
            }
            return tx.nodes().upsert_observed(seen);
          })
          .ok());
  server::RefreshedState state;
  ASSERT_TRUE(store
                  ->read([&](store::Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(state, server::read_refreshed_state(tx, t));
                    return core::Status();
                  })
                  .ok());
  EXPECT_EQ(state.fleet_gpus, 3);
  const std::string text = server::Metrics().render();
  EXPECT_GE(value_of(text, R"(corral_store_unreadable_rows_total{table="nodes"})").value_or(0), 1)
      << text;
  ASSERT_EQ(state.tenant_gpus.size(), 1u);
  EXPECT_EQ(state.tenant_gpus[0].tenant, "nlp");
  EXPECT_EQ(state.tenant_gpus[0].allocated, 2);
  EXPECT_EQ(state.tenant_gpus[0].borrowed, 1);
  EXPECT_EQ(state.tenant_gpus[0].guaranteed, 1);
  ASSERT_EQ(state.pending.size(), 1u);
  EXPECT_EQ(state.pending[0], (std::pair<std::string, std::int64_t>{"nlp", 2}));
  ASSERT_EQ(state.gpus.size(), 3u);
  EXPECT_EQ(state.gpus[0].job, job);
  EXPECT_EQ(state.gpus[0].tenant, "nlp");
  EXPECT_EQ(state.gpus[0].pci_bus_id, "0000:18:00.0");
  EXPECT_EQ(state.gpus[0].utilization_percent, 10);
  EXPECT_EQ(state.gpus[0].fb_free_mib, 81'000);
  EXPECT_EQ(state.gpus[1].temperature_c, 41);
  EXPECT_EQ(state.gpus[1].fb_free_mib, std::nullopt);  // its size is unknown
  EXPECT_EQ(state.gpus[2].job, 0);                     // idle
  EXPECT_EQ(state.gpus[2].uuid, "GPU-2");
  EXPECT_EQ(state.gpus[2].utilization_percent, 12);
  EXPECT_EQ(state.gpus[2].power_watts, 102);
  EXPECT_EQ(state.gpus[2].fb_used_mib, 559);
}

constexpr std::int64_t kMetricsStartMs = 1'779'999'960'000;  // 2026-05-28 20:26:00 UTC, a minute

// nlp: guaranteed 4 of 8 H100s and may borrow 4; vision: 2 and no borrowing.
constexpr const char* kMetricsConfig = R"(scheduler: {tickMs: 20, batchWindowMs: 2, minRuntimeMs: 0}
metrics: {refreshMs: 20}
tenants:
  nlp: {quotas: {H100: {guaranteed: 4, borrowLimit: 4}}}
  vision: {quotas: {H100: {guaranteed: 2, borrowLimit: 0}}}
billing:
  periodSeconds: 60
  graceSeconds: 0
  prices: [{gpuType: H100, perGpuHour: 3.6}]
)";

template <typename Factory>
class MetricsTest : public ::testing::Test, public ClusterCalls {
 protected:
  void SetUp() override {
    std::string url;
    store_url_or_skip<Factory>(url);
    if (this->IsSkipped() || this->HasFatalFailure()) return;
    auto started = InProcessCorrald::start(dir_.path(), clock_, kMetricsConfig, url);
    ASSERT_TRUE(started.ok()) << started.status().to_string();
    corrald_ = std::move(*started);
    addr_ = corrald_->addr();
    admin_token_ = corrald_->admin_token();
    join_token_ = corrald_->join_token();
    auto r = admin().post("/v1/tokens", json{{"role", "metrics"}}.dump());
    ASSERT_EQ(r.status, 201) << r.body;
    scrape_token_ = body(r).value("token", "");
  }

  std::string scrape() {
    auto r = TestClient(addr_, scrape_token_).get("/metrics");
    EXPECT_EQ(r.status, 200) << r.body;
    return r.body;
  }
  // Waits (bounded) until the series `series` reads `want`; its last value otherwise.
  std::optional<double> wait_value(const std::string& series, double want) {
    std::optional<double> got;
    eventually([&] {
      got = value_of(scrape(), series);
      return got == want;
    });
    return got;
  }
  // The clock forward by `by`, the agent reporting every 20 s so it is never lost.
  void advance(FakeAgent& agent, std::chrono::milliseconds by) {
    for (auto left = by; left > 0ms; left -= 20s) {
      clock_.advance(std::min<std::chrono::milliseconds>(left, 20s));
      agent.round();
    }
  }

  TempDir dir_;
  core::ManualClock clock_{core::time_from_ms(kMetricsStartMs)};
  std::unique_ptr<InProcessCorrald> corrald_;
  std::string scrape_token_;
};

TYPED_TEST_SUITE(MetricsTest, Stores, StoreNames);

TYPED_TEST(MetricsTest, ScrapingNeedsAMetricsOrAdminToken) {
  EXPECT_EQ(TestClient(this->addr_, "").get("/metrics").status, 401);
  EXPECT_EQ(TestClient(this->addr_, "not-a-token").get("/metrics").status, 401);
  auto member =
      this->admin().post("/v1/tokens", json{{"role", "member"}, {"tenant", "nlp"}}.dump());
  ASSERT_EQ(member.status, 201) << member.body;
  EXPECT_EQ(TestClient(this->addr_, body(member)["token"]).get("/metrics").status, 403);
  EXPECT_EQ(this->admin().get("/metrics").status, 200);
  EXPECT_EQ(TestClient(this->addr_, this->scrape_token_).get("/metrics").status, 200);
  // A scrape token reads /metrics and nothing else.
  EXPECT_EQ(TestClient(this->addr_, this->scrape_token_).get("/v1/jobs").status, 403);
  EXPECT_EQ(TestClient(this->addr_, this->scrape_token_).get("/healthz").status, 200);
}

TYPED_TEST(MetricsTest, PerTenantAndPerGpuSeriesFollowTheCluster) {
  FakeAgent n1 = this->agent("n1");
  for (int i = 0; i < 8; ++i) n1.faults[i] = {{"smPercent", 80 + i}, {"memoryUsedMib", 1000 * i}};
  // nlp takes 6 (2 borrowed); vision its 2; a third vision job waits on vision's quota.
  const auto a = this->submit(
      {{"tenant", "nlp"}, {"name", "a"}, {"maxRestarts", 1}, {"resources", {{"gpus", 6}}}});
  const auto b = this->submit(
      {{"tenant", "vision"}, {"name", "b"}, {"maxRestarts", 0}, {"resources", {{"gpus", 2}}}});
  ASSERT_TRUE(this->wait_phase(a, "launching"));
  ASSERT_TRUE(this->wait_phase(b, "launching"));
  const auto c = this->submit({{"tenant", "vision"}, {"name", "c"}, {"resources", {{"gpus", 1}}}});
  n1.round();
  ASSERT_EQ(this->phase(a), "running");

  EXPECT_EQ(this->wait_value(R"(corral_tenant_gpus_allocated{tenant="nlp",gpu_type="H100"})", 6),
            6);
  EXPECT_EQ(this->wait_value(R"(corral_tenant_pending_jobs{tenant="vision"})", 1), 1);
  // The heartbeat's readings reach the per-GPU series at the next refresh.
  std::string text;
  eventually([&] {
    text = this->scrape();
    return samples_of(text, "DCGM_FI_DEV_GPU_UTIL").size() == 8 &&
           text.find(R"(hpc_job=")") != std::string::npos;
  });
  auto checked = promtool_check(text);
  EXPECT_TRUE(checked.ok) << checked.output << "\n" << text;
  EXPECT_EQ(value_of(text, R"(corral_tenant_gpus_borrowed{tenant="nlp",gpu_type="H100"})"), 2);
  EXPECT_EQ(value_of(text, R"(corral_tenant_gpus_guaranteed{tenant="nlp",gpu_type="H100"})"), 4);
  EXPECT_EQ(value_of(text, R"(corral_tenant_gpus_allocated{tenant="vision",gpu_type="H100"})"), 2);
  EXPECT_EQ(value_of(text, R"(corral_tenant_gpus_borrowed{tenant="vision",gpu_type="H100"})"), 0);
  EXPECT_EQ(value_of(text, R"(corral_tenant_gpus_guaranteed{tenant="vision",gpu_type="H100"})"), 2);
  EXPECT_EQ(value_of(text, R"(corral_tenant_pending_jobs{tenant="nlp"})"), 0);
  EXPECT_EQ(value_of(text, R"(corral_queue_wait_seconds_count{tenant="nlp"})"), 1);

  // Every GPU once per family, with its holder: 6 of a's, 2 of b's.
  const auto util = samples_of(text, "DCGM_FI_DEV_GPU_UTIL");
  EXPECT_EQ(util.size(), 8u) << text;
  int of_a = 0, of_b = 0;
  for (const auto& line : util) {
    if (line.find("hpc_job=\"" + std::to_string(a) + "\",tenant=\"nlp\"") != std::string::npos)
      ++of_a;
    if (line.find("hpc_job=\"" + std::to_string(b) + "\",tenant=\"vision\"") != std::string::npos)
      ++of_b;
  }
  EXPECT_EQ(of_a, 6) << text;
  EXPECT_EQ(of_b, 2) << text;
  const std::string gpu3 =
      R"({gpu="3",UUID="GPU-n1-3",device="nvidia3",pci_bus_id="",Hostname="n1",node="n1",)"
      R"(gpu_type="H100",)";
  bool found = false;
  for (const auto& line : util) {
    if (line.compare(0, std::string("DCGM_FI_DEV_GPU_UTIL").size() + gpu3.size(),
                     "DCGM_FI_DEV_GPU_UTIL" + gpu3) == 0) {
      found = true;
      EXPECT_EQ(line.substr(line.rfind(' ') + 1), "83") << line;
    }
  }
  EXPECT_TRUE(found) << text;
  for (const auto& line : samples_of(text, "DCGM_FI_DEV_POWER_USAGE")) {
    EXPECT_EQ(line.substr(line.rfind(' ') + 1), "300") << line;
  }
  for (const auto& line : samples_of(text, "DCGM_FI_DEV_GPU_TEMP")) {
    EXPECT_EQ(line.substr(line.rfind(' ') + 1), "50") << line;
  }

  // A checkpoint of a's.
  const json ckpt = {{"epoch", n1.epoch}, {"job", a},
                     {"attempt", 1},      {"rank", 0},
                     {"step", 100},       {"path", "/tmp/ck/a1-step-000100"},
                     {"bytes", 4096},     {"checksum", "sha256:ab"}};
  ASSERT_EQ(n1.client().post("/v1/agents/n1/checkpoints", ckpt.dump()).status, 201);
  EXPECT_EQ(this->wait_value(R"(corral_tenant_checkpoints_total{tenant="nlp"})", 1), 1);

  // 90 s later b fails with no restart left; c, queued all that while, takes its place.
  this->advance(n1, 90s);
  n1.exit_all(b, 1);
  n1.round();
  ASSERT_TRUE(this->wait_phase(b, "failed"));
  EXPECT_EQ(this->wait_value(R"(corral_tenant_failures_total{tenant="vision"})", 1), 1);
  n1.round();  // the exited ranks confirmed gone: b's GPUs are free
  // c is placed (and may have started in the round above already).
  ASSERT_TRUE(eventually(
      [&] {
        const std::string p = this->phase(c);
        return p == "launching" || p == "running";
      },
      15s));
  EXPECT_EQ(this->wait_value(R"(corral_queue_wait_seconds_count{tenant="vision"})", 2), 2);
  text = this->scrape();
  EXPECT_EQ(value_of(text, R"(corral_queue_wait_seconds_bucket{tenant="vision",le="1"})"), 1);
  EXPECT_EQ(value_of(text, R"(corral_queue_wait_seconds_bucket{tenant="vision",le="60"})"), 1);
  EXPECT_EQ(value_of(text, R"(corral_queue_wait_seconds_bucket{tenant="vision",le="120"})"), 2);
  EXPECT_EQ(value_of(text, R"(corral_tenant_failures_total{tenant="nlp"})"), 0);
  EXPECT_EQ(value_of(text, R"(corral_tenant_restarts_total{tenant="nlp"})"), 0);

  // a's rank fails with a restart left: a restart, not a failure.
  n1.exit_all(a, 1);
  n1.round();
  EXPECT_EQ(this->wait_value(R"(corral_tenant_restarts_total{tenant="nlp"})", 1), 1);

  // The ledger: every GPU-second of each accrued period is in some bucket, once.
  this->advance(n1, 40s);  // past 20:28:00: two whole periods
  std::int64_t until = 0;
  ASSERT_TRUE(eventually([&] {
    until = body(this->admin().get("/v1/chargeback")).value("accruedUntilMs", std::int64_t{0});
    return until >= kMetricsStartMs + 120'000;
  }));
  const double want = 8.0 * static_cast<double>(until - kMetricsStartMs) / 1000.0;
  double total = 0, nlp = 0;
  eventually([&] {
    text = this->scrape();
    total = nlp = 0;
    for (const auto& line : samples_of(text, "corral_ledger_gpu_seconds_total")) {
      const double v = std::stod(line.substr(line.rfind(' ') + 1));
      total += v;
      if (line.find(R"(tenant="nlp")") != std::string::npos) nlp += v;
    }
    return std::abs(total - want) < 1e-6;
  });
  EXPECT_NEAR(total, want, 1e-6) << text;
  EXPECT_GT(nlp, 0) << text;
  checked = promtool_check(text);
  EXPECT_TRUE(checked.ok) << checked.output << "\n" << text;
}

}  // namespace
}  // namespace corral::testing
