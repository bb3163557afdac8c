// The corrald side of the node-agent protocol, through real HTTP against a real corrald
// on loopback, for both stores. The "agent" here is a small scripted client that follows
// docs/agent-protocol.md with plain HTTP calls (the real corral-agent is tested in
// tests/agent).
#include <chrono>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include "testing/corrald_process.h"
#include "testing/fake_agent.h"
#include "testing/store_fixture.h"

namespace corral::testing {
namespace {

using nlohmann::json;

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::string s;
  std::getline(in, s);
  return s;
}

template <typename Factory>
class AgentTest : public ::testing::Test, public ClusterCalls {
 protected:
  void start(const std::string& agents_yaml = "nodeLostAfterMs: 3600000") {
    std::string url;
    store_url_or_skip<Factory>(url);
    if (this->IsSkipped() || this->HasFatalFailure()) return;
    const auto config = dir_.path() / "corrald.yaml";
    std::ofstream(config)
        << "scheduler:\n  tickMs: 100\n  batchWindowMs: 5\n  minRuntimeMs: 0\nagents:\n  "
        << agents_yaml << "\n  restartBackoffMs: 200\n  stopGraceMs: 1000\n";
    url_ = url.empty() ? (dir_.path() / "corral.db").string() : url;
    server_ = std::make_unique<CorraldProcess>(dir_.path(), url);
    server_->set_extra_args({"--config", config.string()});
    const auto s = server_->start();
    ASSERT_TRUE(s.ok()) << s.to_string();
    addr_ = server_->addr();
    admin_token_ = server_->admin_token();
    join_token_ = read_file(dir_.path() / "join.token");
    ASSERT_FALSE(join_token_.empty());
  }
  void TearDown() override {
    if (server_) server_->stop();
  }

  TempDir dir_;
  std::string url_;  // the store, for exec_sql
  std::unique_ptr<CorraldProcess> server_;
};

TYPED_TEST_SUITE(AgentTest, Stores, StoreNames);

TYPED_TEST(AgentTest, JoinTokenJoinsAndNothingElse) {
  this->start();
  if (this->IsSkipped()) return;
  struct stat st {};
  ASSERT_EQ(::stat((this->dir_.path() / "join.token").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);
  FakeAgent a = this->agent("n1");
  EXPECT_EQ(a.epoch, 1);
  auto as_join = this->server_->client(this->join_token_);
  EXPECT_EQ(as_join.get("/v1/jobs").status, 403);
  EXPECT_EQ(as_join.get("/v1/nodes").status, 403);
  EXPECT_EQ(as_join.get("/v1/allocations").status, 403);
  EXPECT_EQ(as_join.get("/v1/agents/n1/assignments").status, 403);
  // Other tokens may not join; unknown tokens are 401.
  FakeAgent b{.addr = this->server_->addr(), .node = "n2"};
  EXPECT_EQ(b.join(this->admin_token_).status, 403);
  EXPECT_EQ(b.join(a.token).status, 403);
  EXPECT_EQ(b.join("not-a-token").status, 401);
  auto bad = as_join.post("/v1/agents/join", R"({"agentUrl": "http://127.0.0.1:1"})");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(body(bad)["error"]["field"], "node");
  auto bad_url =
      as_join.post("/v1/agents/join", R"({"agentUrl": "ftp://x", "node": {"id": "n3"}})");
  EXPECT_EQ(body(bad_url)["error"]["field"], "agentUrl");
  // An agent token touches only its own node.
  EXPECT_EQ(a.client().get("/v1/agents/n2/assignments").status, 403);
  EXPECT_EQ(a.client().post("/v1/agents/n2/heartbeat", R"({"epoch": 1})").status, 403);
  // The node view shows the agent but never its log key.
  auto node = this->admin().get("/v1/nodes/n1");
  EXPECT_EQ(body(node)["agent"]["epoch"], 1);
  EXPECT_EQ(node.body.find("logKey"), std::string::npos);
  // Rejoining keeps the epoch (the node was not lost).
  EXPECT_EQ(a.join(this->join_token_).status, 200);
  EXPECT_EQ(a.epoch, 1);
}

TYPED_TEST(AgentTest, GangOverTwoNodesRunsAndSucceeds) {
  this->start();
  if (this->IsSkipped()) return;
  FakeAgent n1 = this->agent("n1"), n2 = this->agent("n2");
  const std::int64_t v0 = n1.poll(0)["version"];
  // The long poll wakes on placement, well before its wait ends.
  json woke;
  std::chrono::milliseconds took{};
  std::thread poller([&] {
    const auto t0 = std::chrono::steady_clock::now();
    woke = n1.poll(v0, 20000);
    took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 t0);
  });
  // Submitted once the poll is parked (the gauge counts it), so this tests the wake-up.
  ASSERT_TRUE(eventually([&] { return this->metric("corral_agent_polls_waiting") >= 1; }));
  const auto id = this->submit({{"resources", {{"gpus", 16}, {"gpuTypes", {"H100"}}}},
                                {"env", {{"MODE", "test"}}},
                                {"secretEnv", {{"WANDB_API_KEY", "hunter2"}}},
                                {"checkpoint", {{"dir", "/tmp/ck"}, {"intervalSeconds", 60}}}});
  poller.join();
  EXPECT_LT(took.count(), 5000);
  ASSERT_EQ(woke["workers"].size(), 8u) << woke.dump();
  n1.reconcile();
  n2.reconcile();
  std::set<int> ranks;
  for (const FakeAgent* a : {&n1, &n2}) {
    for (const auto& w : a->assignments) {
      ranks.insert(w["rank"].get<int>());
      EXPECT_EQ(w["worldSize"], 16);
      EXPECT_EQ(w["attempt"], 1);
      EXPECT_EQ(w["masterAddr"], "127.0.0.1");
      EXPECT_EQ(w["masterPort"], 29500);                // 29500 + rank 0's GPU (n1's GPU 0)
      EXPECT_EQ(w["env"]["WANDB_API_KEY"], "hunter2");  // only this read has secrets
      EXPECT_EQ(w["env"]["MODE"], "test");
      EXPECT_EQ(w["checkpointDir"], "/tmp/ck");
      EXPECT_EQ(w["restoreFrom"], "");
      EXPECT_EQ(w["desired"], "run");
      EXPECT_EQ(w["gpus"].size(), 1u);
      EXPECT_EQ(w["visibleDevices"], std::to_string(w["gpus"][0].get<int>()));
      EXPECT_EQ(w["rank"].get<int>() % 8, w["localRank"].get<int>());
      EXPECT_EQ(w["rank"].get<int>() / 8, w["nodeRank"].get<int>());
    }
  }
  EXPECT_EQ(ranks.size(), 16u);
  EXPECT_EQ(*ranks.begin(), 0);
  EXPECT_EQ(*ranks.rbegin(), 15);
  EXPECT_EQ(this->admin().get("/v1/jobs/" + std::to_string(id)).body.find("hunter2"),
            std::string::npos);
  // Half the ranks running is not enough to be running.
  ASSERT_EQ(n1.heartbeat().status, 200);
  EXPECT_EQ(this->phase(id), "launching");
  ASSERT_EQ(n2.heartbeat().status, 200);
  EXPECT_EQ(this->phase(id), "running");
  // The stored spec was decoded once in the whole process: the scheduler's decode (the
  // job was pending) is the one the agents' reads use, and polls and reports that follow
  // reuse it (each one used to run the whole spec validator again).
  const std::int64_t decodes = this->spec_decodes();
  EXPECT_EQ(decodes, 1);
  for (int i = 0; i < 20; ++i) {
    n1.poll(0);
    n2.poll(0);
    ASSERT_EQ(n1.heartbeat().status, 200);
  }
  EXPECT_EQ(this->spec_decodes(), decodes);
  n1.exit_all(id, 0);
  n2.exit_all(id, 0);
  n1.heartbeat();
  EXPECT_EQ(this->phase(id), "running");
  n2.heartbeat();
  EXPECT_EQ(this->phase(id), "succeeded");
  EXPECT_EQ(this->held_by(id), 0u);
  const auto ev = this->events(id);
  for (const char* kind : {"placed", "started", "finished", "released"}) {
    EXPECT_NE(std::find(ev.begin(), ev.end(), kind), ev.end()) << kind;
  }
}

TYPED_TEST(AgentTest, RankFailureRestartsWithBackoffThenFails) {
  this->start();
  if (this->IsSkipped()) return;
  FakeAgent n1 = this->agent("n1", 2);
  const auto id = this->submit({{"resources", {{"gpus", 2}}}, {"maxRestarts", 1}});
  ASSERT_TRUE(this->wait_phase(id, "launching"));
  n1.round();
  ASSERT_EQ(this->phase(id), "running");
  // Rank 1 fails: the gang attempt ends; rank 0 is asked to stop; the GPUs stay held.
  n1.workers[{id, 1, 1}].state = "exited";
  n1.workers[{id, 1, 1}].exit_code = 3;
  n1.heartbeat();
  EXPECT_EQ(this->phase(id), "preempting");
  EXPECT_EQ(this->held_by(id), 2u);
  n1.reconcile();
  for (const auto& w : n1.assignments) EXPECT_EQ(w["desired"], "stop");
  n1.obey_stops();
  n1.heartbeat();
  EXPECT_EQ(this->held_by(id), 0u);
  const json pending = this->job(id);
  EXPECT_EQ(pending["phase"], "pending");
  EXPECT_NE(pending["reason"].get<std::string>().find("restart backoff"), std::string::npos);
  // After the backoff the second attempt is placed, fails, and the job fails.
  ASSERT_TRUE(eventually([&] { return this->job(id)["attempt"] == 2; }));
  n1.round();
  ASSERT_EQ(this->phase(id), "running");
  n1.exit_all(id, 1);
  n1.heartbeat();
  EXPECT_EQ(this->phase(id), "failed");
  EXPECT_EQ(this->held_by(id), 0u);  // every rank had exited: confirmed at once
  const auto ev = this->events(id);
  EXPECT_NE(std::find(ev.begin(), ev.end(), "rank failed"), ev.end());
  EXPECT_NE(std::find(ev.begin(), ev.end(), "requeued"), ev.end());
}

TYPED_TEST(AgentTest, PreemptionCheckpointsRequeuesAndRestores) {
  this->start();
  if (this->IsSkipped()) return;
  FakeAgent n1 = this->agent("n1");
  const auto low = this->submit({{"name", "low"},
                                 {"priorityClass", "preemptible"},
                                 {"resources", {{"gpus", 8}}},
                                 {"checkpoint", {{"dir", "/tmp/ck"}, {"intervalSeconds", 60}}}});
  ASSERT_TRUE(this->wait_phase(low, "launching"));
  n1.round();
  ASSERT_EQ(this->phase(low), "running");
  const json ckpt = {{"epoch", 1},    {"job", low},
                     {"attempt", 1},  {"rank", 0},
                     {"step", 100},   {"path", "/tmp/ck/a1-step-000100"},
                     {"bytes", 4096}, {"checksum", "sha256:ab"}};
  EXPECT_EQ(n1.client().post("/v1/agents/n1/checkpoints", ckpt.dump()).status, 201);
  EXPECT_EQ(n1.client().post("/v1/agents/n1/checkpoints", ckpt.dump()).status, 200);
  json stale = ckpt;
  stale["attempt"] = 2;  // not the current attempt (0 is no attempt at all: 400)
  auto refused = n1.client().post("/v1/agents/n1/checkpoints", stale.dump());
  EXPECT_EQ(refused.status, 409);
  EXPECT_EQ(body(refused)["error"]["code"], "stale");  // from the Status's reason
  EXPECT_EQ(body(refused)["error"]["message"],
            "attempt 2 of job " + std::to_string(low) + " is not its current attempt (1)");
  // A production job preempts it: the victim stops, its GPUs wait for confirmation.
  const auto high = this->submit(
      {{"name", "high"}, {"priorityClass", "production"}, {"resources", {{"gpus", 8}}}});
  ASSERT_TRUE(this->wait_phase(low, "preempting"));
  n1.reconcile();
  ASSERT_FALSE(n1.assignments.empty());
  for (const auto& w : n1.assignments) {
    EXPECT_EQ(w["desired"], "stop");
    // The decision's grace (PreemptionConfig::grace), not the agents' stopGraceMs (1 s).
    EXPECT_EQ(w["graceMs"], 120000) << w.dump();
  }
  // Cycles that might (wrongly) free the victim's GPUs or place `high` on them.
  this->wait_cycles(3);
  EXPECT_EQ(this->held_by(low), 8u);
  EXPECT_EQ(this->phase(high), "pending");
  n1.heartbeat();  // still running: nothing released
  EXPECT_EQ(this->held_by(low), 8u);
  n1.obey_stops();
  n1.heartbeat();
  EXPECT_EQ(this->phase(low), "pending");
  ASSERT_TRUE(this->wait_phase(high, "launching"));
  // Cancel of a job whose ranks never started: released once the agent has applied it.
  n1.reconcile();
  n1.workers.clear();  // the agent never started them
  ASSERT_EQ(this->admin().post("/v1/jobs/" + std::to_string(high) + "/cancel", "").status, 200);
  EXPECT_EQ(this->held_by(high), 8u);
  n1.heartbeat();  // applied the old version: proves nothing
  EXPECT_EQ(this->held_by(high), 8u);
  n1.reconcile();
  n1.heartbeat();
  EXPECT_EQ(this->held_by(high), 0u);
  // The victim comes back with the newest checkpoint to restore from.
  ASSERT_TRUE(this->wait_phase(low, "launching"));
  n1.reconcile();
  ASSERT_EQ(n1.assignments.size(), 8u);
  EXPECT_EQ(n1.assignments[0]["attempt"], 2);
  EXPECT_EQ(n1.assignments[0]["restoreFrom"], "/tmp/ck/a1-step-000100");
  // The port follows the GPUs, not the attempt: attempt 1's workers are confirmed gone.
  EXPECT_EQ(n1.assignments[0]["masterPort"], 29500);
}

TYPED_TEST(AgentTest, CancelKeepsGpusUntilTheAgentConfirms) {
  this->start();
  if (this->IsSkipped()) return;
  FakeAgent n1 = this->agent("n1");
  const auto id = this->submit({{"resources", {{"gpus", 4}}}});
  ASSERT_TRUE(this->wait_phase(id, "launching"));
  n1.round();
  ASSERT_EQ(this->admin().post("/v1/jobs/" + std::to_string(id) + "/cancel", "").status, 200);
  EXPECT_EQ(this->phase(id), "cancelled");
  n1.reconcile();
  ASSERT_FALSE(n1.assignments.empty());
  for (const auto& w : n1.assignments) EXPECT_EQ(w["graceMs"], 1000) << "a cancel: stopGraceMs";
  for (int i = 0; i < 3; ++i) {
    n1.round();  // still running
    EXPECT_EQ(this->held_by(id), 4u);
  }
  // Without an agent report the scheduler's cycles do not free them either. (That no
  // timer does, with a clock run past every timeout, is LifecycleTest's
  // NoTimerFreesTheGpusOfACancelledJob: corrald here runs on the system clock.)
  this->wait_cycles(3);
  EXPECT_EQ(this->held_by(id), 4u);
  n1.obey_stops();
  n1.heartbeat();
  EXPECT_EQ(this->held_by(id), 0u);
}

// A heartbeat reconciles a running job only when something about it changed, or when it
// may have run past its maxRuntime: the heartbeat is that rule's clock, so a job whose
// workers report nothing new is still stopped at its limit by the next heartbeat.
TYPED_TEST(AgentTest, AHeartbeatWithNothingNewStillStopsAJobAtItsMaxRuntime) {
  this->start();
  if (this->IsSkipped()) return;
  FakeAgent n1 = this->agent("n1", 2);
  const auto id = this->submit({{"resources", {{"gpus", 2}}}, {"maxRuntime", "1h"}});
  ASSERT_TRUE(this->wait_phase(id, "launching"));
  n1.round();
  ASSERT_EQ(this->phase(id), "running");
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(n1.heartbeat().status, 200);
    EXPECT_EQ(this->phase(id), "running");
  }
  // The attempt's GPUs were placed an hour ago, as far as its allocations know (the
  // ledger does not agree, so the job's own read refuses it: its events tell).
  ASSERT_TRUE(exec_sql(this->url_,
                       "UPDATE allocations SET created_at = created_at - 3600000 "
                       "WHERE job_id = " +
                           std::to_string(id))
                  .ok());
  ASSERT_EQ(n1.heartbeat().status, 200);  // the same two running workers
  const std::string events = this->admin().get("/v1/jobs/" + std::to_string(id) + "/events").body;
  EXPECT_NE(events.find("failed: ran past its maxRuntime of 1h in attempt 1"), std::string::npos)
      << events;
  EXPECT_EQ(this->held_by(id), 2u) << "held until the agent confirms its ranks stopped";
  n1.reconcile();
  n1.obey_stops();
  n1.heartbeat();
  EXPECT_EQ(this->held_by(id), 0u);
}

TYPED_TEST(AgentTest, XidFaultDrainsTheNodeAndRequeuesItsJob) {
  this->start();
  if (this->IsSkipped()) return;
  FakeAgent n1 = this->agent("n1");
  const auto id = this->submit({{"resources", {{"gpus", 8}}}});
  ASSERT_TRUE(this->wait_phase(id, "launching"));
  n1.round();
  ASSERT_EQ(this->phase(id), "running");
  n1.faults[3] = {{"xidErrors", {79}}};
  ASSERT_EQ(n1.heartbeat().status, 200);
  const json node = body(this->admin().get("/v1/nodes/n1"));
  EXPECT_EQ(node["admin"], "draining");
  EXPECT_EQ(node["adminReason"], "gpu 3: XID 79 (fell off the bus)");
  // Observed state: the heartbeat's verdicts and readings sit beside the join's inventory
  // (a heartbeat used to write over it), and only GPU 3 is out of service.
  const json& observed = node["observed"];
  EXPECT_EQ(observed["inventory"]["source"], "simulated:test");
  ASSERT_EQ(observed["gpus"].size(), 8u);
  EXPECT_EQ(
      observed["gpus"][3],
      (json{{"index", 3}, {"health", "unhealthy"}, {"problem", "XID 79 (fell off the bus)"}}));
  EXPECT_EQ(observed["gpus"][2]["health"], "ok");
  EXPECT_EQ(observed["readings"][3]["xidErrors"], json::array({79}));
  ASSERT_EQ(node["gpus"].size(), 8u);
  EXPECT_FALSE(node["gpus"][3]["healthy"].get<bool>());
  EXPECT_TRUE(node["gpus"][2]["healthy"].get<bool>());
  EXPECT_EQ(this->phase(id), "preempting");
  bool audited = false;
  const json audit = body(this->admin().get("/v1/audit"));
  for (const auto& e : audit["entries"]) {
    audited = audited || (e["actor"] == "corrald/health" && e["action"] == "node.drain");
  }
  EXPECT_TRUE(audited);
  n1.reconcile();
  n1.obey_stops();
  n1.heartbeat();
  EXPECT_EQ(this->phase(id), "pending");
  EXPECT_EQ(this->held_by(id), 0u);
  // Undrain waits for the GPU to report healthy.
  EXPECT_EQ(this->admin().post("/v1/nodes/n1/undrain", "").status, 409);
  n1.faults.clear();
  n1.heartbeat();
  EXPECT_EQ(this->admin().post("/v1/nodes/n1/undrain", "").status, 200);
  ASSERT_TRUE(this->wait_phase(id, "launching"));
  // A hot GPU only stops new placements on it.
  n1.faults[5] = {{"temperatureC", 95}};
  n1.round();
  const json hot = body(this->admin().get("/v1/nodes/n1"));
  EXPECT_EQ(hot["admin"], "active");
  EXPECT_EQ(hot["observed"]["gpus"][5]["health"], "hot");
  EXPECT_EQ(hot["observed"]["gpus"][3]["health"], "ok");
  EXPECT_FALSE(hot["gpus"][5]["healthy"].get<bool>());
  EXPECT_TRUE(hot["gpus"][3]["healthy"].get<bool>());
}

TYPED_TEST(AgentTest, HeartbeatSilenceLosesTheNodeAndFencesItsAgent) {
  // Long enough for both agents' first heartbeat to come in under a loaded machine (at
  // 600 ms, n1 was sometimes lost before it had reported its ranks running).
  this->start("nodeLostAfterMs: 2500");
  if (this->IsSkipped()) return;
  FakeAgent n1 = this->agent("n1"), n2 = this->agent("n2");
  const auto id = this->submit({{"resources", {{"gpus", 16}}}, {"maxRestarts", 2}});
  ASSERT_TRUE(this->wait_phase(id, "launching"));
  n1.round();
  n2.round();
  ASSERT_EQ(this->phase(id), "running");
  // n2 keeps heartbeating; n1 goes silent.
  ASSERT_TRUE(eventually(
      [&] {
        n2.round();
        return body(this->admin().get("/v1/nodes/n1"))["agent"]["lost"] == true;
      },
      std::chrono::seconds(10)));
  EXPECT_EQ(body(this->admin().get("/v1/nodes/n1"))["agent"]["epoch"], 2);
  for (const auto& [job, gpu] : this->allocations()) EXPECT_NE(gpu.first, "n1");
  EXPECT_EQ(this->job(id)["phase"], "preempting");
  // n1's agent comes back with its old epoch: fenced.
  auto fenced = n1.heartbeat();
  EXPECT_EQ(fenced.status, 409);
  EXPECT_EQ(body(fenced)["error"]["code"], "fenced");  // from the Status's reason
  EXPECT_EQ(body(fenced)["error"]["message"],
            "epoch 1 of node n1 is stale (current 2, node lost); stop every worker and join again");
  auto late = n1.client().post("/v1/agents/n1/checkpoints", json{{"epoch", 1},
                                                                 {"job", id},
                                                                 {"attempt", 1},
                                                                 {"step", 5},
                                                                 {"path", "/tmp/x"},
                                                                 {"bytes", 1},
                                                                 {"checksum", "c"}}
                                                                .dump());
  EXPECT_EQ(late.status, 409);
  // n2's ranks stop; the job is requeued with the restart counted.
  n2.reconcile();
  n2.obey_stops();
  n2.heartbeat();
  EXPECT_EQ(this->held_by(id), 0u);
  const auto ev = this->events(id);
  EXPECT_NE(std::find(ev.begin(), ev.end(), "node lost"), ev.end());
  // While it waits, its reason counts n1's GPUs as on a lost node, not as unhealthy (issue
  // 38 item 13: they read "8 unhealthy").
  std::string reason;
  EXPECT_TRUE(eventually([&] {
    n2.round();
    reason = this->job(id)["reason"].template get<std::string>();
    return reason.find("8 on lost nodes") != std::string::npos;
  })) << reason;
  EXPECT_EQ(reason.find("unhealthy"), std::string::npos) << reason;
  // The lost node takes no placements until it joins again, with the new epoch.
  ASSERT_EQ(n1.join(this->join_token_).status, 200);
  EXPECT_EQ(n1.epoch, 2);
  n1.workers.clear();
  ASSERT_TRUE(eventually([&] {
    n1.round();
    n2.round();
    return this->job(id)["attempt"] == 2;
  }));
}

// Random reports, cancels, faults and submissions; after every step no GPU is in two
// active allocations, and no worker the agents still run sits on a GPU that is no longer
// allocated to it (GPUs come back only on confirmation or fencing).
TYPED_TEST(AgentTest, RandomizedLifecycleKeepsGpusSafe) {
  this->start();
  if (this->IsSkipped()) return;
  std::vector<FakeAgent> agents;
  for (const char* n : {"n1", "n2", "n3"}) agents.push_back(this->agent(n, 4));
  std::mt19937 rng(20240611);
  std::vector<std::int64_t> jobs;
  auto check = [&](int step) {
    const auto allocs = this->allocations();  // also fails on a GPU given twice
    for (const auto& a : agents) {
      for (const auto& [key, w] : a.workers) {
        if (w.state != "running") continue;
        for (const int g : w.gpus) {
          bool held = false;
          for (auto [it, end] = allocs.equal_range(std::get<0>(key)); it != end; ++it) {
            held = held || it->second == std::make_pair(a.node, g);
          }
          EXPECT_TRUE(held) << "step " << step << ": job " << std::get<0>(key) << " still runs on "
                            << a.node << "/" << g << " after its GPU was released";
        }
      }
    }
  };
  for (int step = 0; step < 120; ++step) {
    const int action = static_cast<int>(rng() % 10);
    FakeAgent& a = agents[rng() % agents.size()];
    if (action < 2 || jobs.empty()) {
      const int gpus = 1 << (rng() % 4);  // 1..8
      jobs.push_back(this->submit({{"resources", {{"gpus", gpus}}}, {"maxRestarts", 1}}));
      // Two cycles: one that may have begun before the submit, and one after it, which
      // considered the new job (placed or pending).
      this->wait_cycles(2);
    } else if (action < 5) {
      a.reconcile();
      a.obey_stops();
      a.heartbeat();
    } else if (action < 6) {
      a.reconcile();  // applied but not yet reported
    } else if (action < 7) {
      const auto id = jobs[rng() % jobs.size()];
      this->admin().post("/v1/jobs/" + std::to_string(id) + "/cancel", "");
    } else if (action < 8 && !a.workers.empty()) {
      auto it = a.workers.begin();
      std::advance(it, static_cast<long>(rng() % a.workers.size()));
      if (it->second.state == "running") {
        it->second.state = "exited";
        it->second.exit_code = static_cast<int>(rng() % 2);
      }
      a.heartbeat();
    } else if (action < 9) {
      a.heartbeat();
    } else {
      if (a.faults.empty()) {
        a.faults[static_cast<int>(rng() % 4)] = {{"xidErrors", {79}}};
      } else {
        a.faults.clear();
      }
      a.heartbeat();
      if (a.faults.empty()) this->admin().post("/v1/nodes/" + a.node + "/undrain", "");
    }
    check(step);
  }
}

// Issue 38: a job without secretEnv has no secrets to open, so no key can hold it back.
// Its secrets row is made to name a key nobody holds (as a row sealed by a replica that
// made its own key file did): the job is still assigned, and runs.
TYPED_TEST(AgentTest, AJobWithoutSecretsIsAssignedWhateverKeyItsSecretsRowNames) {
  this->start();
  if (this->IsSkipped()) return;
  const auto plain = this->submit({{"resources", {{"gpus", 1}}}});
  const auto secret = this->submit({{"resources", {{"gpus", 1}}}, {"secretEnv", {{"T", "s"}}}});
  for (const auto id : {plain, secret}) {
    ASSERT_TRUE(exec_sql(this->url_,
                         "UPDATE job_secrets SET secret_env_json = 'enc:v1:kdeadbeef:AAAA' "
                         "WHERE job_id = " +
                             std::to_string(id))
                    .ok());
  }
  FakeAgent n1 = this->agent("n1");
  ASSERT_TRUE(eventually([&] { return this->held_by(plain) == 1 && this->held_by(secret) == 1; }));
  std::set<std::int64_t> assigned;
  const json polled = n1.poll(0);  // named: a range-for over poll(0)[...] would dangle
  for (const auto& w : polled["workers"]) assigned.insert(w["job"].get<std::int64_t>());
  EXPECT_TRUE(assigned.contains(plain)) << polled.dump();
  // A job with secrets that cannot be opened waits: its workers would start wrong.
  EXPECT_FALSE(assigned.contains(secret));
  n1.round();
  EXPECT_TRUE(this->wait_phase(plain, "running")) << this->job(plain).dump();
}

// Issue 38: a restart with a key file that does not hold the key wrapping the database's
// data keys refuses, in one line naming both keys' fingerprints, the file and the fix.
TYPED_TEST(AgentTest, ARestartWithAnotherKeyFileRefusesWithTheFixInOneLine) {
  this->start();
  if (this->IsSkipped()) return;
  const auto id = this->submit({{"resources", {{"gpus", 1}}}, {"secretEnv", {{"T", "s"}}}});
  ASSERT_GT(id, 0);
  this->server_->stop();
  const auto key_file = this->dir_.path() / "corrald.key";
  const std::string original = read_file(key_file);
  std::ofstream(key_file, std::ios::trunc)
      << "kother00 " << std::string(64, '7') << "\n";  // another key, as another replica's
  const auto refused = this->server_->start();
  ASSERT_FALSE(refused.ok());
  std::ifstream log(this->dir_.path() / "corrald.log");
  std::string line, last;
  while (std::getline(log, line)) {
    if (line.find("corrald:") == 0) last = line;
  }
  EXPECT_NE(last.find("kother00 (fingerprint "), std::string::npos) << last;
  EXPECT_NE(last.find("wrapped by key k"), std::string::npos) << last;
  EXPECT_NE(last.find(key_file.string()), std::string::npos) << last;
  EXPECT_NE(last.find("--key-file"), std::string::npos) << last;
  // With the original file back it starts.
  std::ofstream(key_file, std::ios::trunc) << original << "\n";
  const auto started = this->server_->start();
  EXPECT_TRUE(started.ok()) << started.to_string();
}

}  // namespace
}  // namespace corral::testing
