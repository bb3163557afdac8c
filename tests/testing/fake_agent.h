// A scripted node agent for tests of corrald's side of the agent protocol: joins,
// polls, heartbeats, and keeps a model of the workers it "runs" (started when desired
// run, stopped only when the test says so), with plain HTTP calls that follow
// docs/agent-protocol.md. The real corral-agent is tested in tests/agent.
//
// Thread safety: one test thread drives a FakeAgent.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/corrald_process.h"

namespace corral::testing {

using nlohmann::json;

// A scripted agent: joins, polls, heartbeats, and keeps a model of the workers it
// "runs" (started when desired run, stopped only when the test says so).
struct FakeAgent {
  std::string addr;
  std::string node;
  int gpus = 8;
  std::string token;
  std::int64_t epoch = 0;
  std::int64_t version = 0;  // of the last assignments answer applied
  json assignments = json::array();
  // (job, attempt, rank) -> {state, exitCode, gpus}
  struct Worker {
    std::string state = "running";
    int exit_code = 0;
    int signal = 0;
    std::vector<int> gpus;
  };
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, Worker> workers;
  std::map<int, json> faults;  // gpu index -> fields merged into its reading

  TestClient client() const { return TestClient(addr, token); }

  HttpReply join(const std::string& join_token) {
    json node_json = {{"id", node},
                      {"labels", {{"rack", "r1"}, {"leaf", "l1"}, {"spine", "s1"}}},
                      {"gpus", json::array()}};
    for (int i = 0; i < gpus; ++i) {
      node_json["gpus"].push_back({{"index", i},
                                   {"uuid", "GPU-" + node + "-" + std::to_string(i)},
                                   {"type", "H100"},
                                   {"nvlinkDomain", 0}});
    }
    auto r = TestClient(addr, join_token)
                 .post("/v1/agents/join", json{{"agentUrl", "http://127.0.0.1:1"},
                                               {"node", node_json},
                                               {"inventory", {{"source", "simulated:test"}}}}
                                              .dump());
    if (r.status == 200) {
      token = body(r)["token"];
      epoch = body(r)["epoch"];
    }
    return r;
  }

  json poll(std::int64_t since, int wait_ms = 0) {
    auto r = client().get("/v1/agents/" + node + "/assignments?since=" + std::to_string(since) +
                          "&waitMs=" + std::to_string(wait_ms));
    EXPECT_EQ(r.status, 200) << r.body;
    return body(r);
  }

  // Level-triggered reconcile: start what should run; never start what should stop.
  void reconcile() {
    const json a = poll(0);
    version = a.value("version", std::int64_t{0});
    assignments = a.value("workers", json::array());
    for (const auto& w : assignments) {
      const auto key =
          std::make_tuple(w["job"].get<std::int64_t>(), w["attempt"].get<std::int64_t>(),
                          w["rank"].get<std::int64_t>());
      if (w["desired"] == "run" && workers.count(key) == 0) {
        workers[key] = Worker{.gpus = w["gpus"].get<std::vector<int>>()};
      }
    }
  }

  bool listed(const std::tuple<std::int64_t, std::int64_t, std::int64_t>& key) const {
    for (const auto& w : assignments) {
      if (std::make_tuple(w["job"].get<std::int64_t>(), w["attempt"].get<std::int64_t>(),
                          w["rank"].get<std::int64_t>()) == key) {
        return true;
      }
    }
    return false;
  }

  // Stops (exits) every worker the assignments say to stop.
  void obey_stops(int signal = 15) {
    for (const auto& w : assignments) {
      if (w["desired"] != "stop") continue;
      auto it = workers.find(std::make_tuple(w["job"].get<std::int64_t>(),
                                             w["attempt"].get<std::int64_t>(),
                                             w["rank"].get<std::int64_t>()));
      if (it != workers.end() && it->second.state == "running") {
        it->second.state = "exited";
        it->second.signal = signal;
      }
    }
  }

  void exit_all(std::int64_t job, int code) {
    for (auto& [k, w] : workers) {
      if (std::get<0>(k) == job && w.state == "running") {
        w.state = "exited";
        w.exit_code = code;
      }
    }
  }

  json gpu_readings() const {
    json out = json::array();
    for (int i = 0; i < gpus; ++i) {
      json g = {{"index", i},
                {"present", true},
                {"xidErrors", json::array()},
                {"eccUncorrectable", 0},
                {"temperatureC", 50},
                {"powerW", 300},
                {"powerLimitW", 700}};
      if (faults.count(i)) g.update(faults.at(i));
      out.push_back(g);
    }
    return out;
  }

  HttpReply heartbeat(bool with_applied = true) {
    json ws = json::array();
    // Exited workers are forgotten once corrald stops listing them.
    for (auto it = workers.begin(); it != workers.end();) {
      if (it->second.state == "exited" && !listed(it->first)) {
        it = workers.erase(it);
        continue;
      }
      const auto& [job, attempt, rank] = it->first;
      json w = {{"job", job},         {"attempt", attempt},        {"rank", rank},
                {"pid", 1000 + rank}, {"state", it->second.state}, {"startedAtMs", 1}};
      if (it->second.state == "exited") {
        w["exitCode"] = it->second.exit_code;
        w["signal"] = it->second.signal;
        w["exitedAtMs"] = 2;
      }
      ws.push_back(w);
      ++it;
    }
    json b = {{"epoch", epoch},
              {"agentUrl", "http://127.0.0.1:1"},
              {"gpus", gpu_readings()},
              {"workers", ws}};
    if (with_applied) b["appliedVersion"] = version;
    return client().post("/v1/agents/" + node + "/heartbeat", b.dump());
  }

  // One full agent round: read assignments, act, report.
  void round() {
    reconcile();
    auto r = heartbeat();
    EXPECT_EQ(r.status, 200) << r.body;
  }
};

// The calls a test of the agent protocol makes as the admin, against any corrald at
// `addr_` (a CorraldProcess or an InProcessCorrald): set the three fields once started.
class ClusterCalls {
 protected:
  // Points the calls at `corrald` (an InProcessCorrald or a CorraldProcess, started).
  template <typename Corrald>
  void connect(const Corrald& corrald) {
    addr_ = corrald.addr();
    admin_token_ = corrald.admin_token();
    join_token_ = corrald.join_token();
  }
  TestClient admin() const { return TestClient(addr_, admin_token_); }

  FakeAgent agent(const std::string& node, int gpus = 8) {
    FakeAgent a{.addr = addr_, .node = node, .gpus = gpus};
    auto r = a.join(join_token_);
    EXPECT_EQ(r.status, 200) << r.body;
    return a;
  }

  std::int64_t submit(json spec) {
    spec["command"] = {"/bin/true"};
    if (!spec.contains("name")) spec["name"] = "j";
    auto r = admin().post("/v1/jobs", spec.dump());
    EXPECT_EQ(r.status, 201) << r.body;
    return body(r).value("id", std::int64_t{0});
  }
  json job(std::int64_t id) { return body(admin().get("/v1/jobs/" + std::to_string(id))); }
  std::string phase(std::int64_t id) { return job(id).value("phase", ""); }
  bool wait_phase(std::int64_t id, const std::string& want) {
    return eventually([&] { return phase(id) == want; }, std::chrono::seconds(15));
  }
  std::vector<std::string> events(std::int64_t id) {
    std::vector<std::string> out;
    const json all = body(admin().get("/v1/jobs/" + std::to_string(id) + "/events"));
    for (const auto& e : all["events"]) {
      out.push_back(e["kind"]);
    }
    return out;
  }
  // (node, gpu) pairs of every active allocation; fails the test on a GPU given twice.
  std::multimap<std::int64_t, std::pair<std::string, int>> allocations() {
    std::multimap<std::int64_t, std::pair<std::string, int>> out;
    std::set<std::pair<std::string, int>> seen;
    const json all = body(admin().get("/v1/allocations"));
    for (const auto& a : all["allocations"]) {
      for (const auto& g : a["gpus"]) {
        const auto gpu = std::make_pair(g["node"].get<std::string>(), g["index"].get<int>());
        EXPECT_TRUE(seen.insert(gpu).second)
            << "gpu " << gpu.first << "/" << gpu.second << " in two active allocations";
        out.emplace(a["job"].get<std::int64_t>(), gpu);
      }
    }
    return out;
  }
  std::size_t held_by(std::int64_t job) { return allocations().count(job); }
  // A counter from /metrics (-1, and a failure, when it is missing).
  std::int64_t metric(const std::string& counter) {
    const std::string text = admin().get("/metrics").body;
    const std::string name = "\n" + counter + " ";
    const auto at = text.find(name);
    EXPECT_NE(at, std::string::npos) << counter << " in " << text;
    return at == std::string::npos ? -1 : std::stoll(text.substr(at + name.size()));
  }
  // corral_job_spec_decodes_total: stored specs decoded since corrald started.
  std::int64_t spec_decodes() { return metric("corral_job_spec_decodes_total"); }
  // Waits (bounded) until the scheduler loop has run `n` more cycles (wait_cycles()).
  void wait_cycles(int n) {
    auto c = admin();
    ASSERT_TRUE(testing::wait_cycles(c, n))
        << "the scheduler loop ran fewer than " << n << " cycles";
  }

  std::string addr_;
  std::string admin_token_;
  std::string join_token_;
};

}  // namespace corral::testing
