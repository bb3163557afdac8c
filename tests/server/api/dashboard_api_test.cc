// The dashboard's server side (docs/dashboard.md): usage_rows (pure), and in a whole
// corrald (InProcessCorrald on a manual clock, a scripted agent) the page and its files,
// GET /v1/fleet, /v1/shares, /v1/history and /v1/whoami with what a member may see,
// conditional GETs (ETag, 304), and the reason an admin action carries. The page itself
// is tested in a browser: tests/dashboard/dashboard_test.py.
#include <chrono>
#include <memory>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "server/reports/usage_history.h"
#include "testing/fake_agent.h"
#include "testing/in_process_corrald.h"
#include "testing/store_fixture.h"

namespace corral::testing {
namespace {

using namespace std::chrono_literals;
using server::TenantTotals;

constexpr std::int64_t kDashboardStartMs = 1'779'999'960'000;

// ---- usage_rows ---------------------------------------------------------------------

TEST(UsageRows, SumsTheClusterAndTakesCountsSinceTheLastSample) {
  server::RefreshedState state;
  state.fleet_gpus = 16;
  state.tenant_gpus = {
      {.tenant = "nlp", .gpu_type = "H100", .allocated = 6, .borrowed = 2, .guaranteed = 4},
      {.tenant = "nlp", .gpu_type = "A100", .allocated = 1, .guaranteed = 2},
      {.tenant = "vision", .gpu_type = "H100", .allocated = 2, .guaranteed = 4}};
  state.pending = {{"nlp", 3}, {"research", 1}};
  state.gpus = {{.node = "n1", .index = 0, .job = 1, .tenant = "nlp", .utilization_percent = 100},
                {.node = "n1", .index = 1, .job = 1, .tenant = "nlp", .utilization_percent = 50},
                {.node = "n1", .index = 2, .job = 2, .tenant = "vision", .utilization_percent = 20},
                {.node = "n1", .index = 3, .utilization_percent = 90}};  // idle: not counted
  const server::SchedLoop::TenantShares shares = {
      {.tenant = core::TenantId("nlp"), .active = true, .share = 0.5, .usage_gpus = 6.5},
      {.tenant = core::TenantId("vision"), .active = true, .share = 0.25, .usage_gpus = 2}};
  const std::map<std::string, TenantTotals> since = {
      {"nlp", {.preemptions = 1, .restarts = 0, .waits = 4, .wait_ms_sum = 4000}}};
  const std::map<std::string, TenantTotals> totals = {
      {"nlp", {.preemptions = 3, .restarts = 1, .waits = 6, .wait_ms_sum = 10000}},
      {"vision", {.preemptions = 0, .restarts = 2, .waits = 1, .wait_ms_sum = 500}}};
  const core::Time now = core::time_from_ms(kDashboardStartMs);
  const auto rows = server::usage_rows(state, &shares, totals, since, now);

  ASSERT_EQ(rows.size(), 4u);  // "*", then nlp, research, vision by name
  const auto& cluster = rows[0];
  EXPECT_EQ(cluster.tenant, "*");
  EXPECT_EQ(cluster.time, now);
  EXPECT_EQ(cluster.gpus, 16);
  EXPECT_EQ(cluster.allocated, 9);
  EXPECT_EQ(cluster.borrowed, 2);
  EXPECT_EQ(cluster.pending, 4);
  EXPECT_DOUBLE_EQ(cluster.share, 1);
  EXPECT_DOUBLE_EQ(cluster.usage_gpus, 8.5);
  EXPECT_NEAR(cluster.utilization, (1.0 + 0.5 + 0.2) / 3, 1e-9);
  EXPECT_EQ(cluster.preemptions, 2);
  EXPECT_EQ(cluster.restarts, 3);
  EXPECT_EQ(cluster.placed, 3);
  EXPECT_EQ(cluster.wait_ms_sum, 6500);

  const auto& nlp = rows[1];
  EXPECT_EQ(nlp.tenant, "nlp");
  EXPECT_EQ(nlp.gpus, 6);  // a tenant's "gpus" is its guarantee, over its types
  EXPECT_EQ(nlp.allocated, 7);
  EXPECT_EQ(nlp.borrowed, 2);
  EXPECT_EQ(nlp.pending, 3);
  EXPECT_DOUBLE_EQ(nlp.share, 0.5);
  EXPECT_NEAR(nlp.utilization, 0.75, 1e-9);
  EXPECT_EQ(nlp.preemptions, 2);
  EXPECT_EQ(nlp.placed, 2);
  EXPECT_EQ(nlp.wait_ms_sum, 6000);

  const auto& research = rows[2];  // pending only: a row all the same
  EXPECT_EQ(research.tenant, "research");
  EXPECT_EQ(research.pending, 1);
  EXPECT_EQ(research.allocated, 0);

  const auto& vision = rows[3];
  EXPECT_EQ(vision.restarts, 2);  // no earlier sample: counted from the start
  EXPECT_NEAR(vision.utilization, 0.2, 1e-9);

  // Without a scheduler cycle yet, shares are 0 and the rest stands.
  const auto early = server::usage_rows(state, nullptr, {}, {}, now);
  EXPECT_EQ(early[0].allocated, 9);
  EXPECT_DOUBLE_EQ(early[1].share, 0);
  EXPECT_EQ(early[1].preemptions, 0);
}

// ---- the API ------------------------------------------------------------------------

constexpr const char* kDashboardConfig =
    R"(scheduler: {tickMs: 20, batchWindowMs: 2, minRuntimeMs: 0}
tenants:
  nlp: {quotas: {H100: {guaranteed: 4, borrowLimit: 4}}}
  vision: {weight: 2, quotas: {H100: {guaranteed: 4}}}
dashboard: {historyMs: 100}
racks: {r1: {powerCapWatts: 40000}}
)";

class DashboardApiTest : public ::testing::Test, public ClusterCalls {
 protected:
  void SetUp() override {
    auto started = InProcessCorrald::start(dir_.path(), clock_, kDashboardConfig);
    ASSERT_TRUE(started.ok()) << started.status().to_string();
    corrald_ = std::move(*started);
    connect(*corrald_);
  }

  TestClient member(const std::string& tenant) {
    auto r = admin().post("/v1/tokens", json{{"role", "member"}, {"tenant", tenant}}.dump());
    EXPECT_EQ(r.status, 201) << r.body;
    return TestClient(addr_, body(r).value("token", ""));
  }

  // nlp runs 4 GPUs and vision 2 on node n1 (8 GPUs).
  void run_two_jobs(FakeAgent& n1) {
    nlp_ = submit({{"tenant", "nlp"}, {"resources", {{"gpus", 4}}}});
    vision_ = submit({{"tenant", "vision"}, {"resources", {{"gpus", 2}}}});
    ASSERT_TRUE(wait_phase(nlp_, "launching"));
    ASSERT_TRUE(wait_phase(vision_, "launching"));
    n1.round();
    ASSERT_EQ(phase(nlp_), "running");
  }

  TempDir dir_;
  core::ManualClock clock_{core::time_from_ms(kDashboardStartMs)};
  std::unique_ptr<InProcessCorrald> corrald_;
  std::int64_t nlp_ = 0, vision_ = 0;
};

TEST_F(DashboardApiTest, ServesThePageAndItsFilesWithoutAToken) {
  TestClient anyone(addr_, "");
  const auto page = anyone.get("/");
  ASSERT_EQ(page.status, 200);
  EXPECT_TRUE(page.headers.at("Content-Type").starts_with("text/html"))
      << page.headers.at("Content-Type");
  EXPECT_NE(page.body.find("/ui/app.js"), std::string::npos);
  EXPECT_NE(page.headers.at("Content-Security-Policy").find("default-src 'self'"),
            std::string::npos);
  const auto app = anyone.get("/ui/app.js");
  ASSERT_EQ(app.status, 200);
  EXPECT_TRUE(app.headers.at("Content-Type").starts_with("text/javascript"));
  EXPECT_EQ(anyone.get("/ui/app.css").status, 200);
  // Chart.js comes from Debian's libjs-chart.js (scripts/setup.sh installs it).
  const auto chart = anyone.get("/ui/chart.js");
  ASSERT_EQ(chart.status, 200) << chart.body;
  EXPECT_NE(chart.body.find("Chart.js v3"), std::string::npos);
  const auto missing = anyone.get("/ui/nothing.js");
  EXPECT_EQ(missing.status, 404);
  EXPECT_NE(missing.body.find("nothing.js"), std::string::npos);
  EXPECT_EQ(anyone.get("/ui/..%2Fsecret").status, 404);
  // The data is not public.
  EXPECT_EQ(anyone.get("/v1/fleet").status, 401);
  EXPECT_EQ(anyone.get("/v1/whoami").status, 401);
}

TEST_F(DashboardApiTest, WhoamiNamesTheRoleAndTenant) {
  const json me = body(member("nlp").get("/v1/whoami"));
  EXPECT_EQ(me["role"], "member");
  EXPECT_EQ(me["tenant"], "nlp");
  EXPECT_TRUE(me["id"].get<std::string>().starts_with("token:"));
  EXPECT_EQ(body(admin().get("/v1/whoami"))["role"], "admin");
}

TEST_F(DashboardApiTest, FleetShowsEveryGpuAndOnlyTheCallersJobs) {
  FakeAgent n1 = agent("n1");
  run_two_jobs(n1);
  const json fleet = body(admin().get("/v1/fleet"));
  ASSERT_EQ(fleet["nodes"].size(), 1u) << fleet.dump();
  const json& node = fleet["nodes"][0];
  EXPECT_EQ(node["id"], "n1");
  EXPECT_EQ(node["admin"], "active");
  EXPECT_EQ(node["agent"], "connected");
  ASSERT_EQ(node["gpus"].size(), 8u);
  std::map<std::int64_t, int> held_by;
  for (const auto& g : node["gpus"]) {
    if (g["held"]) ++held_by[g["job"].get<std::int64_t>()];
  }
  EXPECT_EQ(held_by, (std::map<std::int64_t, int>{{nlp_, 4}, {vision_, 2}}));

  // A member of vision sees every GPU, nlp's as held and no more.
  const json seen = body(member("vision").get("/v1/fleet"));
  int held = 0, named = 0;
  for (const auto& g : seen["nodes"][0]["gpus"]) {
    held += g["held"].get<bool>();
    if (!g["job"].is_null()) {
      ++named;
      EXPECT_EQ(g["job"], vision_);
      EXPECT_EQ(g["tenant"], "vision");
    }
  }
  EXPECT_EQ(held, 6);
  EXPECT_EQ(named, 2);
  EXPECT_EQ(seen.dump().find("\"nlp\""), std::string::npos) << seen.dump();
}

// GET /v1/racks (issue 38, item 6): each rack's cap and the watts in use against it, each
// held GPU at the power limit its agent reports (500 W here; the catalog's H100 says 700 W).
// Figures only: a member sees the same answer, with no job in it; /v1/fleet carries it too.
TEST_F(DashboardApiTest, RacksShowEachCapAndTheWattsInUseAtTheReportedLimit) {
  FakeAgent n1 = agent("n1");
  for (int i = 0; i < n1.gpus; ++i) n1.faults[i] = {{"powerLimitW", 500}};
  run_two_jobs(n1);
  const json racks = body(admin().get("/v1/racks"));
  ASSERT_EQ(racks["racks"].size(), 1u) << racks.dump();
  EXPECT_EQ(racks["racks"][0], (json{{"name", "r1"},
                                     {"capWatts", 40000},
                                     {"usedWatts", 6 * 500},
                                     {"freeWatts", 40000 - 6 * 500},
                                     {"nodes", 1},
                                     {"gpus", 8},
                                     {"gpusHeld", 6}}));
  const json seen = body(member("vision").get("/v1/racks"));
  EXPECT_EQ(seen["racks"], racks["racks"]);
  EXPECT_EQ(body(admin().get("/v1/fleet"))["racks"], racks["racks"]);
  EXPECT_EQ(TestClient(addr_, "").get("/v1/racks").status, 401);
}

TEST_F(DashboardApiTest, SharesShowGuaranteesUseAndFairShare) {
  FakeAgent n1 = agent("n1");
  run_two_jobs(n1);
  const auto shares_ready = [&] {
    return body(admin().get("/v1/shares"))["sharesAtCycle"] == true;
  };
  ASSERT_TRUE(eventually(shares_ready));
  const json s = body(admin().get("/v1/shares"));
  ASSERT_EQ(s["fleet"].size(), 1u);
  EXPECT_EQ(s["fleet"][0]["gpus"], 8);
  EXPECT_EQ(s["fleet"][0]["allocated"], 6);
  std::map<std::string, json> by;
  for (const auto& t : s["tenants"]) by[t["tenant"]] = t;
  ASSERT_TRUE(by.count("nlp") && by.count("vision")) << s.dump();
  const json& nlp = by["nlp"]["gpus"][0];
  EXPECT_EQ(nlp["type"], "H100");
  EXPECT_EQ(nlp["guaranteed"], 4);
  EXPECT_EQ(nlp["borrowLimit"], 4);
  EXPECT_EQ(nlp["allocated"], 4);
  EXPECT_EQ(nlp["borrowed"], 0);
  EXPECT_TRUE(by["vision"]["gpus"][0]["borrowLimit"].is_null());  // unlimited
  EXPECT_EQ(by["vision"]["weight"], 2.0);
  // Both have work: vision's weight 2 gets twice nlp's share.
  EXPECT_NEAR(by["vision"]["share"].get<double>(), 2 * by["nlp"]["share"].get<double>(), 1e-9);
  EXPECT_TRUE(by["nlp"]["active"]);

  const json mine = body(member("nlp").get("/v1/shares"));
  ASSERT_EQ(mine["tenants"].size(), 1u) << mine.dump();
  EXPECT_EQ(mine["tenants"][0]["tenant"], "nlp");
}

TEST_F(DashboardApiTest, HistoryKeepsUsageAndMembersReadTheirOwn) {
  FakeAgent n1 = agent("n1");
  run_two_jobs(n1);
  // A row every 100 ms (config), stamped with corrald's clock: step it so rows differ.
  const auto rows_with_use = [&] {
    clock_.advance(1s);
    n1.round();
    int n = 0;
    const json h = body(admin().get("/v1/history"));
    for (const auto& r : h["samples"]) {
      n += r["tenant"] == "*" && r["allocated"] == 6;
    }
    return n >= 3;
  };
  ASSERT_TRUE(eventually(rows_with_use));
  const json h = body(admin().get("/v1/history"));
  EXPECT_EQ(h["intervalMs"], 100);
  std::set<std::string> tenants;
  for (const auto& r : h["samples"]) {
    tenants.insert(r["tenant"]);
    if (r["tenant"] == "nlp" && r["allocated"] == 4) {
      EXPECT_EQ(r["gpus"], 4);  // its guarantee
    }
  }
  EXPECT_TRUE(tenants.count("*") && tenants.count("nlp") && tenants.count("vision"));

  TestClient nlp = member("nlp");
  const json own = body(nlp.get("/v1/history"));
  ASSERT_FALSE(own["samples"].empty());
  for (const auto& r : own["samples"]) EXPECT_EQ(r["tenant"], "nlp");
  EXPECT_EQ(nlp.get("/v1/history?tenant=vision").status, 403);
  EXPECT_EQ(nlp.get("/v1/history?tenant=*").status, 403);
  // One tenant, and a window.
  const json only = body(admin().get("/v1/history?tenant=vision"));
  for (const auto& r : only["samples"]) EXPECT_EQ(r["tenant"], "vision");
  const json none = body(admin().get("/v1/history?from=1000&to=2000"));
  EXPECT_TRUE(none["samples"].empty());
  // Bad parameters name themselves.
  for (const auto& [query, field] :
       std::vector<std::pair<std::string, std::string>>{{"from=yesterday", "from"},
                                                        {"from=2000&to=1000", "from"},
                                                        {"tenant=a%20b", "tenant"},
                                                        {"step=5", "step"}}) {
    const auto r = admin().get("/v1/history?" + query);
    EXPECT_EQ(r.status, 400) << query;
    EXPECT_NE(r.body.find(field), std::string::npos) << query << ": " << r.body;
  }
}

TEST_F(DashboardApiTest, AGetAnswers304WhileNothingChanged) {
  FakeAgent n1 = agent("n1");
  submit({{"tenant", "nlp"}, {"resources", {{"gpus", 1}}}});
  const auto first = admin().get("/v1/jobs");
  ASSERT_EQ(first.status, 200);
  const std::string etag = first.headers.at("ETag");
  EXPECT_TRUE(etag.starts_with("W/\"")) << etag;
  const auto again = admin().send("GET", "/v1/jobs", "", {{"If-None-Match", etag}}, "");
  EXPECT_EQ(again.status, 304);
  EXPECT_TRUE(again.body.empty());
  // Another caller's answer differs, and so does its tag: no cross-tenant 304.
  const auto other = member("vision").send("GET", "/v1/jobs", "", {{"If-None-Match", etag}}, "");
  EXPECT_EQ(other.status, 200);
  submit({{"tenant", "nlp"}, {"resources", {{"gpus", 1}}}});
  const auto changed = admin().send("GET", "/v1/jobs", "", {{"If-None-Match", etag}}, "");
  EXPECT_EQ(changed.status, 200);
  EXPECT_NE(changed.headers.at("ETag"), etag);
}

TEST_F(DashboardApiTest, AnAdminActionCarriesItsReason) {
  FakeAgent n1 = agent("n1");
  const auto r = admin().post("/v1/nodes/n1/cordon", R"({"reason":"replacing a PSU"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_NE(
      body(admin().get("/v1/nodes/n1"))["adminReason"].get<std::string>().find("replacing a PSU"),
      std::string::npos);
  const auto bad = admin().post("/v1/nodes/n1/drain", R"({"why":"x"})");
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("why"), std::string::npos) << bad.body;
  const auto control = admin().post("/v1/nodes/n1/drain", "{\"reason\":\"a\\u0007b\"}");
  EXPECT_EQ(control.status, 400);
  EXPECT_NE(control.body.find("reason"), std::string::npos) << control.body;
  EXPECT_EQ(body(admin().get("/v1/nodes/n1"))["admin"],
            "cordoned");  // the bad ones changed nothing
}

}  // namespace
}  // namespace corral::testing
