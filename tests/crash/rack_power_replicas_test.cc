// Rack power across replicas (issue 38, items 6 and 10): two corrald replicas on one
// PostgreSQL, two scheduling shards (H100 and A100-80GB) held by different replicas, and
// one rack r1 capped at 6,000 W that holds both shards' nodes: a DGX H100 (700 W a GPU,
// its agent's reported limit and the catalog's alike) and a PCIe A100 server whose agent
// reports 300 W a GPU (the catalog's A100-80GB says 400 W). Then rounds in which both
// shards wake on one commit (the tenant's quota raised from 0) with an 8-GPU H100 job
// (5,600 W) and two 4-GPU A100 jobs (1,200 W each) waiting: either shard's placements fit
// the cap as it read the rack, both together would pass it. After every round the rack's
// watts, counted from the allocations at each node's reported limit, stay within the cap,
// and GET /v1/racks counts the same figure.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/agent_process.h"
#include "testing/corrald_process.h"
#include "testing/store_fixture.h"

namespace corral::testing {
namespace {

using nlohmann::json;
using testing::body;
using namespace std::chrono_literals;

constexpr int kRackReplicas = 2;
constexpr std::int64_t kRackCapWatts = 6000;
constexpr std::int64_t kRackH100Watts = 700, kRackPcieWatts = 300;  // what the agents report

json rack_test_quotas(int gpus) {
  return {{"quotas",
           {{"H100", {{"guaranteed", gpus}, {"borrowLimit", 0}}},
            {"A100-80GB", {{"guaranteed", gpus}, {"borrowLimit", 0}}}}}};
}

class RackPowerReplicas : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string url;
    store_url_or_skip<PostgresFactory>(url);  // PostgreSQL only: replicas share one
    if (IsSkipped() || HasFatalFailure()) return;
    const auto cfg = dir_.path() / "corrald.yaml";
    std::ofstream(cfg) << "scheduler: {minRuntimeMs: 0, tickMs: 200}\n"
                          "agents: {nodeLostAfterMs: 10000, stopGraceMs: 1000}\n"
                          "replica: {leaseMs: 2000}\n"
                          "shards:\n"
                          "  - {name: h100, gpuTypes: [H100]}\n"
                          "  - {name: a100, gpuTypes: [A100-80GB]}\n"
                          "racks: {r1: {powerCapWatts: "
                       << kRackCapWatts << "}}\n"
                       << "security: {keyFile: " << (dir_.path() / "corrald.key").string() << "}\n";
    for (int i = 0; i < kRackReplicas; ++i) {
      auto r = std::make_unique<CorraldProcess>(dir_.path() / ("r" + std::to_string(i)), url);
      r->set_extra_args({"--config", cfg.string(), "--replica", "r" + std::to_string(i)});
      ASSERT_TRUE(r->start().ok()) << "replica " << i;
      replicas_.push_back(std::move(r));
    }
    token_ = replicas_[0]->admin_token();
    ASSERT_FALSE(token_.empty());
    // Each shard on its own replica, so two processes decide for the one rack.
    ASSERT_TRUE(eventually(
        [&] {
          const std::string h = holder("h100"), a = holder("a100");
          return !h.empty() && !a.empty() && h != a;
        },
        30s))
        << client(0).get("/v1/shards").body;
    const std::string servers = replicas_[0]->addr() + ",http://" + replicas_[1]->addr();
    for (const auto& [node, preset] :
         {std::pair<std::string, std::string>{"h1", "dgx-h100"}, {"p1", "pcie-8gpu"}}) {
      auto a = std::make_unique<AgentProcess>(node, dir_.path() / ("agent-" + node));
      ASSERT_TRUE(
          a->start(servers, dir_.path() / "r0" / "join.token", preset, "spine=s1,leaf=l1,rack=r1")
              .ok());
      agents_.push_back(std::move(a));
    }
    ASSERT_TRUE(eventually([&] {
      std::size_t ready = 0;
      for (const auto& n : body(client(0).get("/v1/nodes")).value("nodes", json::array())) {
        if (n.contains("heartbeatAtMs")) ++ready;
      }
      return ready == 2;
    })) << client(0).get("/v1/nodes").body;
    ASSERT_EQ(client(0).put("/v1/tenants/t", rack_test_quotas(0).dump()).status / 100, 2);
  }

  void TearDown() override {
    for (auto& a : agents_) a->crash_node();
    for (auto& r : replicas_) r->stop();
  }

  TestClient client(int replica) { return replicas_[replica]->client(token_); }

  std::string holder(const std::string& shard) {
    for (const auto& s : body(client(0).get("/v1/shards")).value("shards", json::array())) {
      if (s.value("name", "") == shard && s.value("live", false)) return s.value("holder", "");
    }
    return "";
  }

  std::int64_t submit(int replica, const std::string& name, const std::string& type, int gpus) {
    const json spec = {{"name", name},
                       {"tenant", "t"},
                       {"resources", {{"gpus", gpus}, {"gpuTypes", {type}}}},
                       {"command", {"sleep", "600"}}};
    const auto r = client(replica).post("/v1/jobs", spec.dump());
    EXPECT_EQ(r.status, 201) << r.body;
    return body(r).value("id", std::int64_t{0});
  }

  // The rack's watts from the active allocations, each GPU at its node's reported limit.
  std::int64_t watts_held() {
    std::int64_t watts = 0;
    const json page = body(client(1).get("/v1/allocations?limit=1000"));
    for (const auto& a : page.value("allocations", json::array())) {
      for (const auto& g : a.value("gpus", json::array())) {
        watts += g.value("node", "") == "h1" ? kRackH100Watts : kRackPcieWatts;
      }
    }
    return watts;
  }

  json rack_r1() {
    for (const auto& r : body(client(0).get("/v1/racks")).value("racks", json::array())) {
      if (r.value("name", "") == "r1") return r;
    }
    return json();
  }

  std::int64_t conflicts() {
    std::int64_t n = 0;
    for (int i = 0; i < kRackReplicas; ++i) {
      auto c = client(i);
      n += std::max<std::int64_t>(0, scrape_metric(c, "corral_sched_rack_power_conflicts_total"));
    }
    return n;
  }

  TempDir dir_;
  std::string token_;
  std::vector<std::unique_ptr<CorraldProcess>> replicas_;
  std::vector<std::unique_ptr<AgentProcess>> agents_;
};

TEST_F(RackPowerReplicas, TwoShardsOnOneRackNeverPassItsCapTogether) {
  // The PCIe node's agent reports 300 W a GPU: the rack counts that, not the catalog's 400 W.
  const json rack = rack_r1();
  EXPECT_EQ(rack.value("capWatts", std::int64_t{0}), kRackCapWatts) << rack.dump();
  EXPECT_EQ(rack.value("gpus", 0), 16) << rack.dump();

  constexpr int kRounds = 4;
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    // Waiting behind a quota of 0, through both replicas.
    std::vector<std::int64_t> ids = {submit(0, "h100-8", "H100", 8),
                                     submit(1, "pcie-4a", "A100-80GB", 4),
                                     submit(1, "pcie-4b", "A100-80GB", 4)};
    ASSERT_TRUE(eventually([&] {
      for (const std::int64_t id : ids) {
        const json j = body(client(0).get("/v1/jobs/" + std::to_string(id)));
        if (j.value("reason", "").rfind("quota", 0) != 0) return false;
      }
      return true;
    })) << "the jobs never waited for their quota";
    // One commit wakes both shards at once.
    ASSERT_EQ(client(round % 2).put("/v1/tenants/t", rack_test_quotas(8).dump()).status, 200);
    // Until some job holds GPUs and 3 s more passed, the rack never passes its cap. The
    // first placement may take longer than 3 s on a loaded machine (dropped commits are
    // retried a cycle later), so the watch runs from it, up to 30 s in all.
    const auto start = std::chrono::steady_clock::now();
    std::optional<std::chrono::steady_clock::time_point> placed_at;
    std::int64_t most = 0;
    while (std::chrono::steady_clock::now() - start < 30s &&
           (!placed_at || std::chrono::steady_clock::now() - *placed_at < 3s)) {
      const std::int64_t w = watts_held();
      most = std::max(most, w);
      ASSERT_LE(w, kRackCapWatts) << "rack r1 past its cap";
      if (w > 0 && !placed_at) placed_at = std::chrono::steady_clock::now();
    }
    const bool placed = placed_at.has_value();
    EXPECT_TRUE(placed) << "nothing was placed";
    // GET /v1/racks counts what the allocations hold, at the reported limits.
    const json now = rack_r1();
    EXPECT_EQ(now.value("usedWatts", std::int64_t{-1}), watts_held()) << now.dump();
    std::printf("rack power, round %d: at most %lld of %lld W held; %lld commits dropped so far\n",
                round, static_cast<long long>(most), static_cast<long long>(kRackCapWatts),
                static_cast<long long>(conflicts()));
    // Clean up for the next round: quota back to 0, every job cancelled, the rack empty.
    ASSERT_EQ(client(0).put("/v1/tenants/t", rack_test_quotas(0).dump()).status, 200);
    for (const std::int64_t id : ids) {
      (void)client(0).post("/v1/jobs/" + std::to_string(id) + "/cancel", "{}");
    }
    ASSERT_TRUE(eventually([&] { return watts_held() == 0; }, 30s)) << "the GPUs were not released";
  }
}

}  // namespace
}  // namespace corral::testing
