// Failover: three corrald replicas on one PostgreSQL, two scheduling shards (H100 and
// A100 nodes), four simulated agents that know every replica, long jobs running and a
// client submitting through every replica (docs/scale-out.md). Then:
//   - SIGKILL of the replica that holds the H100 shard: another takes the shard within
//     the lease period plus a round (measured; the goal is < 10 s with leaseMs 2000),
//     every acknowledged job is still there, no GPU is ever in two allocations in any
//     replica's answer, and the long jobs keep their workers and their attempt;
//   - SIGSTOP of the new holder until another replica took the shard over, then SIGCONT:
//     no allocation of its old epoch lands after the takeover, and it knows it lost the
//     lease.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <signal.h>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "store/store.h"
#include "testing/agent_process.h"
#include "testing/corrald_process.h"
#include "testing/store_fixture.h"

namespace corral::testing {
namespace {

using nlohmann::json;
using testing::body;
using namespace std::chrono_literals;

constexpr int kReplicas = 3;
constexpr std::int64_t kLeaseMs = 2000;

class Failover : public ::testing::Test {
 protected:
  void SetUp() override {
    store_url_or_skip<PostgresFactory>(url_);  // PostgreSQL only: replicas share one
    if (IsSkipped() || HasFatalFailure()) return;
    const auto cfg = dir_.path() / "corrald.yaml";
    std::ofstream(cfg) << "scheduler: {minRuntimeMs: 0, tickMs: 200}\n"
                          "agents: {nodeLostAfterMs: 10000, stopGraceMs: 2000}\n"
                          "replica: {leaseMs: "
                       << kLeaseMs
                       << "}\n"
                          "shards:\n"
                          "  - {name: h100, gpuTypes: [H100]}\n"
                          "  - {name: a100, gpuTypes: [A100-80GB]}\n"
                          "security: {keyFile: "
                       << (dir_.path() / "corrald.key").string() << "}\n";
    for (int i = 0; i < kReplicas; ++i) {
      auto r = std::make_unique<CorraldProcess>(dir_.path() / ("r" + std::to_string(i)), url_);
      r->set_extra_args({"--config", cfg.string(), "--replica", "r" + std::to_string(i)});
      ASSERT_TRUE(r->start().ok()) << "replica " << i;
      replicas_.push_back(std::move(r));
    }
    // The first replica bootstrapped the store: its data dir has the tokens.
    token_ = replicas_[0]->admin_token();
    ASSERT_FALSE(token_.empty());
    auto admin = client(0);
    // The replicas spread the two shards and the controllers among themselves.
    ASSERT_TRUE(eventually(
        [&] {
          std::set<std::string> holders;
          for (const auto& s : shards()) {
            if (s.value("live", false)) holders.insert(s.value("holder", ""));
          }
          return holders.size() == kReplicas;
        },
        30s))
        << admin.get("/v1/shards").body;

    // Agents know every replica. The H100 nodes' agents start at the H100 shard's
    // holder, the replica the tests stop, so they are the ones that must move.
    const int first = std::max(0, replica_named(shard("h100").value("holder", "")));
    const auto servers = [&](int from) {
      std::string out;
      for (int k = 0; k < kReplicas; ++k) {
        out += (k == 0 ? "" : ",http://") + replicas_[(from + k) % kReplicas]->addr();
      }
      return out;
    };
    const std::vector<std::tuple<std::string, std::string, int>> nodes = {
        {"n1", "dgx-h100", first},
        {"n2", "dgx-h100", first},
        {"n3", "dgx-a100", first + 1},
        {"n4", "dgx-a100", first + 2}};
    for (const auto& [node, preset, from] : nodes) {
      auto a = std::make_unique<AgentProcess>(node, dir_.path() / ("agent-" + node));
      ASSERT_TRUE(a->start(servers(from), dir_.path() / "r0" / "join.token", preset,
                           "spine=s1,leaf=l-" + node + ",rack=r-" + node)
                      .ok());
      agents_.push_back(std::move(a));
    }
    ASSERT_TRUE(eventually([&] {
      std::size_t ready = 0;
      for (const auto& n : body(admin.get("/v1/nodes")).value("nodes", json::array())) {
        if (n.contains("heartbeatAtMs")) ++ready;
      }
      return ready == nodes.size();
    })) << admin.get("/v1/nodes").body;
  }

  void TearDown() override {
    for (auto& a : agents_) a->crash_node();
    for (auto& r : replicas_) {
      if (r->pid() > 0) ::kill(r->pid(), SIGCONT);  // (kill(-1) would signal everything)
      r->stop();
    }
  }

  TestClient client(int replica) { return replicas_[replica]->client(token_); }
  // Any live replica's view of the shards.
  json shards() {
    for (int i = 0; i < kReplicas; ++i) {
      if (!replicas_[i]->running() || paused_ == i) continue;
      const auto r = client(i).get("/v1/shards");
      if (r.status == 200) return body(r).value("shards", json::array());
    }
    return json::array();
  }
  json shard(const std::string& name) {
    for (const auto& s : shards()) {
      if (s.value("name", "") == name) return s;
    }
    return json();
  }
  int replica_named(const std::string& name) {
    return name.size() == 2 && name[0] == 'r' ? name[1] - '0' : -1;
  }
  static pid_t pid_of(const CorraldProcess& r) { return r.pid(); }

  std::int64_t submit(int replica, const json& spec) {
    const auto r = client(replica).post("/v1/jobs", spec.dump());
    return r.status == 201 ? body(r).value("id", std::int64_t{0}) : 0;
  }

  // Background load: submissions through every live replica, and polls of every live
  // replica's /v1/allocations for a GPU held twice.
  void start_load() {
    load_ = std::thread([this] {
      int n = 0;
      while (!stop_load_) {
        const int replica = n % kReplicas;
        if (replicas_[replica]->running() && paused_ != replica) {
          const json spec = {
              {"name", "churn-" + std::to_string(n)},
              {"resources", {{"gpus", 1}, {"gpuTypes", {n % 2 ? "H100" : "A100-80GB"}}}},
              {"command", {"true"}}};
          if (const std::int64_t id = submit(replica, spec); id > 0) {
            std::lock_guard lock(mu_);
            acked_.push_back(id);
          }
        }
        ++n;
        std::this_thread::sleep_for(20ms);
      }
    });
    poll_ = std::thread([this] {
      while (!stop_load_) {
        for (int i = 0; i < kReplicas; ++i) {
          if (!replicas_[i]->running() || paused_ == i) continue;
          const auto r = client(i).get("/v1/allocations?limit=1000");
          if (r.status != 200) continue;
          std::map<std::pair<std::string, int>, std::int64_t> holder;
          for (const auto& a : body(r).value("allocations", json::array())) {
            for (const auto& g : a.value("gpus", json::array())) {
              const auto [it, fresh] = holder.try_emplace(
                  {g.value("node", ""), g.value("index", -1)}, a.value("job", std::int64_t{0}));
              if (!fresh) {
                std::lock_guard lock(mu_);
                doubles_.push_back(g.dump() + " held by jobs " + std::to_string(it->second) +
                                   " and " + std::to_string(a.value("job", 0)));
              }
            }
          }
          ++polls_;
        }
      }
    });
  }
  void stop_load() {
    stop_load_ = true;
    if (load_.joinable()) load_.join();
    if (poll_.joinable()) poll_.join();
  }

  // Long jobs on the H100 shard: 4 GPUs each, running for minutes.
  std::vector<std::int64_t> start_long_jobs(int count) {
    std::vector<std::int64_t> ids;
    for (int i = 0; i < count; ++i) {
      ids.push_back(submit(0, {{"name", "long-" + std::to_string(i)},
                               {"resources", {{"gpus", 4}, {"gpuTypes", {"H100"}}}},
                               {"command", {"sleep", "600"}}}));
      EXPECT_GT(ids.back(), 0);
    }
    auto admin = client(0);
    EXPECT_TRUE(eventually(
        [&] {
          return std::all_of(ids.begin(), ids.end(), [&](std::int64_t id) {
            return body(admin.get("/v1/jobs/" + std::to_string(id))).value("phase", "") ==
                   "running";
          });
        },
        30s));
    return ids;
  }
  // node -> its live worker process groups.
  std::map<std::string, std::vector<pid_t>> workers() {
    std::map<std::string, std::vector<pid_t>> out;
    for (const auto& a : agents_) {
      auto groups = a->live_worker_groups();
      std::sort(groups.begin(), groups.end());
      out[a->node()] = groups;
    }
    return out;
  }

  // Waits until a live replica other than `old` holds `shard`; the time it took.
  std::chrono::milliseconds takeover(const std::string& name, const std::string& old,
                                     std::chrono::steady_clock::time_point since) {
    eventually(
        [&] {
          const json s = shard(name);
          return s.value("live", false) && s.value("holder", old) != old;
        },
        30s);
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 since);
  }

  void expect_acked_jobs_kept(int via) {
    std::vector<std::int64_t> acked;
    {
      std::lock_guard lock(mu_);
      acked = acked_;
    }
    ASSERT_FALSE(acked.empty());
    auto c = client(via);
    int missing = 0;
    for (const std::int64_t id : acked) {
      if (c.get("/v1/jobs/" + std::to_string(id)).status != 200) ++missing;
    }
    EXPECT_EQ(missing, 0) << "of " << acked.size() << " acknowledged jobs";
    std::printf("failover: %zu acknowledged jobs all found through r%d, %lld allocation polls\n",
                acked.size(), via, static_cast<long long>(polls_.load()));
  }

  TempDir dir_;
  std::string url_;
  std::string token_;
  std::vector<std::unique_ptr<CorraldProcess>> replicas_;
  std::vector<std::unique_ptr<AgentProcess>> agents_;
  std::atomic<int> paused_{-1};
  std::atomic<bool> stop_load_{false};
  std::atomic<std::int64_t> polls_{0};
  std::thread load_, poll_;
  std::mutex mu_;
  std::vector<std::int64_t> acked_;
  std::vector<std::string> doubles_;
};

TEST_F(Failover, Kill9OfAShardOwnerIsTakenOverWithoutLosingJobsOrRestartingThem) {
  const auto long_jobs = start_long_jobs(2);
  start_load();
  // The long jobs' worker groups: those alive in two looks a second apart (the churn
  // jobs' workers exit at once).
  std::this_thread::sleep_for(1s);
  const auto first_look = workers();
  std::this_thread::sleep_for(1s);
  std::map<std::string, std::vector<pid_t>> before;
  for (const auto& [node, groups] : workers()) {
    for (const pid_t g : groups) {
      const auto& was = first_look.at(node);
      if (std::find(was.begin(), was.end(), g) != was.end()) before[node].push_back(g);
    }
  }
  ASSERT_GE(before["n1"].size() + before["n2"].size(), long_jobs.size());
  std::map<std::int64_t, int> attempts;
  for (const std::int64_t id : long_jobs) {
    attempts[id] = body(client(0).get("/v1/jobs/" + std::to_string(id))).value("attempt", -1);
  }

  const std::string old = shard("h100").value("holder", "");
  const int victim = replica_named(old);
  ASSERT_GE(victim, 0) << shard("h100").dump();
  const auto killed_at = std::chrono::steady_clock::now();
  replicas_[victim]->kill9();
  const auto took = takeover("h100", old, killed_at);
  std::printf("failover: shard h100 taken over %lld ms after SIGKILL of %s (leaseMs %lld)\n",
              static_cast<long long>(took.count()), old.c_str(), static_cast<long long>(kLeaseMs));
  EXPECT_LT(took, 10s);
  const json now = shard("h100");
  EXPECT_NE(now.value("holder", old), old);

  // The new holder schedules: a job submitted now runs on the H100 shard.
  const int survivor = (victim + 1) % kReplicas;
  const std::int64_t probe = submit(survivor, {{"name", "after-failover"},
                                               {"resources", {{"gpus", 2}, {"gpuTypes", {"H100"}}}},
                                               {"command", {"true"}}});
  ASSERT_GT(probe, 0);
  EXPECT_TRUE(eventually(
      [&] {
        return body(client(survivor).get("/v1/jobs/" + std::to_string(probe))).value("phase", "") ==
               "succeeded";
      },
      30s));
  std::this_thread::sleep_for(1s);
  stop_load();

  EXPECT_GT(polls_.load(), 10);
  EXPECT_TRUE(doubles_.empty()) << doubles_.front();
  expect_acked_jobs_kept(survivor);
  // The long jobs ran through it: same attempt, and their workers are the same processes.
  for (const std::int64_t id : long_jobs) {
    const json j = body(client(survivor).get("/v1/jobs/" + std::to_string(id)));
    EXPECT_EQ(j.value("phase", ""), "running") << j.dump();
    EXPECT_EQ(j.value("attempt", -2), attempts[id]) << j.dump();
  }
  // The H100 nodes' agents were talking to the replica killed: they moved on.
  for (const char* node : {"n1", "n2"}) {
    std::ifstream log(dir_.path() / (std::string("agent-") + node) / "agent.log");
    const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("now talking to corrald at"), std::string::npos) << node << ":\n" << text;
  }
  auto after = workers();
  for (const auto& [node, groups] : before) {
    for (const pid_t g : groups) {
      EXPECT_NE(std::find(after[node].begin(), after[node].end(), g), after[node].end())
          << "the long jobs' worker group " << g << " on " << node << " is gone";
    }
  }
}

TEST_F(Failover, APausedOwnerResumesFencedAndItsLateWritesAreRefused) {
  start_load();
  std::this_thread::sleep_for(2s);
  const std::string old = shard("h100").value("holder", "");
  const std::int64_t old_epoch = shard("h100").value("epoch", std::int64_t{0});
  const int victim = replica_named(old);
  ASSERT_GE(victim, 0);

  paused_ = victim;
  const auto paused_at = std::chrono::steady_clock::now();
  ASSERT_EQ(::kill(pid_of(*replicas_[victim]), SIGSTOP), 0);
  const auto took = takeover("h100", old, paused_at);
  std::printf("failover: shard h100 taken over %lld ms after SIGSTOP of %s\n",
              static_cast<long long>(took.count()), old.c_str());
  EXPECT_LT(took, 10s);
  // Allocations the paused holder made, by its epoch, before it resumes ...
  const auto count_old = [&] {
    auto opened = store::open_store(url_);
    std::int64_t n = 0;
    EXPECT_TRUE(opened.ok());
    std::vector<store::AllocationRow> rows;
    EXPECT_TRUE((*opened)
                    ->read([&](store::Tx& tx) {
                      CORRAL_ASSIGN_OR_RETURN(rows,
                                              tx.allocations().list_allocations_overlapping(
                                                  core::Time{}, core::time_from_ms(1LL << 50)));
                      return core::Status();
                    })
                    .ok());
    for (const auto& a : rows) n += a.gpu_type.value == "H100" && a.epoch == old_epoch;
    return n;
  };
  const std::int64_t made_before = count_old();
  ASSERT_EQ(::kill(pid_of(*replicas_[victim]), SIGCONT), 0);
  paused_ = -1;
  // ... and after it resumed, with submissions still coming through it: none more.
  auto resumed = client(victim);
  ASSERT_TRUE(eventually(
      [&] { return scrape_metric(resumed, "corral_shard_leases_lost_total") >= 1; }, 15s))
      << resumed.get("/metrics").body.substr(0, 200);
  std::this_thread::sleep_for(3s);
  stop_load();
  EXPECT_EQ(count_old(), made_before);
  // The shard may come back to the resumed replica as the replicas spread out again, but
  // only under a newer epoch.
  EXPECT_GT(shard("h100").value("epoch", std::int64_t{0}), old_epoch);
  EXPECT_TRUE(doubles_.empty()) << doubles_.front();
  expect_acked_jobs_kept(victim);
}

// LISTEN/NOTIFY: a job submitted through one replica is placed by the A100 shard's holder
// on another, and runs on two nodes whose agents poll two different replicas, one of
// them not the holder. Without the cross-replica wakes the submission would wait for the
// holder's next full read and that agent's long poll for its 25-s timeout.
TEST_F(Failover, ReplicasWakeEachOtherForSubmissionsAndAssignments) {
  const std::string holder = shard("a100").value("holder", "");
  const int via = replica_named(shard("h100").value("holder", ""));
  ASSERT_NE(replica_named(holder), via);  // submitted through a replica that does not place it
  const auto t0 = std::chrono::steady_clock::now();
  const std::int64_t id =
      submit(via, {{"name", "two-nodes"},
                   {"resources", {{"gpus", 16}, {"gpusPerNode", 8}, {"gpuTypes", {"A100-80GB"}}}},
                   {"command", {"sleep", "30"}}});
  ASSERT_GT(id, 0);
  auto c = client(via);
  ASSERT_TRUE(eventually(
      [&] { return body(c.get("/v1/jobs/" + std::to_string(id))).value("phase", "") == "running"; },
      20s));
  const auto took =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  std::printf("failover: a 2-node job submitted through r%d, placed by %s, running after %lld ms\n",
              via, holder.c_str(), static_cast<long long>(took.count()));
  EXPECT_LT(took, 5s);
}

}  // namespace
}  // namespace corral::testing
