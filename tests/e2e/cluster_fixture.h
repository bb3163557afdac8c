// A local cluster for end-to-end tests: a real corrald (SQLite) and real corral-agents
// with simulated 8-GPU DGX H100 nodes, running corral-trainer as real processes; and the
// helpers the tests read it with. ClusterTest starts 4 nodes on two leaves of two with
// a config for quick tests; a suite that needs another shape overrides cluster_config()
// and node_labels().
#pragma once

#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <signal.h>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/agent_process.h"
#include "testing/corrald_process.h"
#include "testing/store_fixture.h"

namespace corral::testing {

using nlohmann::json;
using namespace std::chrono_literals;

// What an uninterrupted run prints: the value every resumed run must end with.
inline std::string uninterrupted_final(int steps) {
  const std::string cmd = trainer_path() + " --steps " + std::to_string(steps) + " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  char line[128] = {};
  std::string out;
  while (p && fgets(line, sizeof(line), p)) out += line;
  if (p) pclose(p);
  return out.substr(0, out.find('\n'));
}

// The key=value pairs of corral-trainer's launch line ("corral-trainer: job=.. rank=..").
inline std::map<std::string, std::string> launch_line(const std::string& log) {
  std::map<std::string, std::string> out;
  const auto at = log.find("corral-trainer: job=");
  if (at == std::string::npos) return out;
  std::istringstream line(log.substr(at + 16, log.find('\n', at) - at - 16));
  std::string word;
  while (line >> word) {
    const auto eq = word.find('=');
    if (eq != std::string::npos) out[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return out;
}

class ClusterTest : public ::testing::Test {
 protected:
  // corrald's --config file ("": none, the defaults of a fresh corrald).
  virtual std::string cluster_config() const {
    return "scheduler: {minRuntimeMs: 0, tickMs: 200}\n"
           "agents: {nodeLostAfterMs: 4000, stopGraceMs: 5000,"
           " restartBackoffMs: 100, restartBackoffMaxMs: 1000}\n";
  }
  // One entry per node: its agent's --labels (n1, n2, ... in order).
  virtual std::vector<std::string> node_labels() const {
    std::vector<std::string> out;
    for (int i = 1; i <= 4; ++i) {
      out.push_back("spine=s1,leaf=l" + std::to_string((i + 1) / 2) + ",rack=r" +
                    std::to_string(i));
    }
    return out;
  }
  // More corrald arguments.
  virtual std::vector<std::string> corrald_args() const { return {}; }
  // More corral-agent arguments (every node's).
  virtual std::vector<std::string> agent_args() const { return {}; }

  void SetUp() override {
    std::vector<std::string> args = corrald_args();
    if (const std::string text = cluster_config(); !text.empty()) {
      const auto cfg = dir_.path() / "config.yaml";
      std::ofstream(cfg) << text;
      args.insert(args.end(), {"--config", cfg.string()});
    }
    server_ = std::make_unique<CorraldProcess>(dir_.path());
    server_->set_extra_args(args);
    const auto s = server_->start();
    ASSERT_TRUE(s.ok()) << s.to_string();
    admin_ = std::make_unique<TestClient>(server_->admin());
    const std::vector<std::string> labels = node_labels();
    for (std::size_t i = 0; i < labels.size(); ++i) {
      const std::string node = "n" + std::to_string(i + 1);
      auto agent = std::make_unique<AgentProcess>(node, dir_.path() / ("agent-" + node));
      ASSERT_TRUE(agent
                      ->start(server_->addr(), dir_.path() / "join.token", "dgx-h100", labels[i],
                              agent_args())
                      .ok());
      agents_.push_back(std::move(agent));
    }
    ASSERT_TRUE(eventually([&] {
      const auto nodes = body(admin_->get("/v1/nodes"));
      std::size_t ready = 0;
      for (const auto& n : nodes.value("nodes", json::array())) {
        if (n.contains("heartbeatAtMs") && n.value("gpus", json::array()).size() == 8) ++ready;
      }
      return ready == labels.size();
    })) << admin_->get("/v1/nodes").body;
  }

  void TearDown() override {
    for (auto& a : agents_) a->crash_node();
    if (server_) server_->stop();
  }

  std::int64_t submit(const json& spec) {
    const auto r = admin_->post("/v1/jobs", spec.dump());
    EXPECT_EQ(r.status, 201) << r.body;
    return body(r).value("id", std::int64_t{0});
  }
  json job(std::int64_t id) { return body(admin_->get("/v1/jobs/" + std::to_string(id))); }
  std::string phase(std::int64_t id) { return job(id).value("phase", ""); }
  bool wait_phase(std::int64_t id, const std::string& want,
                  std::chrono::milliseconds deadline = 30s) {
    return eventually([&] { return phase(id) == want; }, deadline);
  }
  std::string logs(std::int64_t id, int rank, int attempt = 0) {
    std::string path = "/v1/jobs/" + std::to_string(id) + "/logs?rank=" + std::to_string(rank);
    if (attempt > 0) path += "&attempt=" + std::to_string(attempt);
    const auto r = admin_->get(path);
    EXPECT_EQ(r.status, 200) << r.body;
    return r.body;
  }
  std::vector<std::string> events(std::int64_t id) {
    std::vector<std::string> out;
    const auto e = body(admin_->get("/v1/jobs/" + std::to_string(id) + "/events"));
    for (const auto& ev : e.value("events", json::array())) out.push_back(ev.value("kind", ""));
    return out;
  }
  // The messages of a job's events of one kind, oldest first.
  std::vector<std::string> event_messages(std::int64_t id, const std::string& kind) {
    std::vector<std::string> out;
    const auto e = body(admin_->get("/v1/jobs/" + std::to_string(id) + "/events"));
    for (const auto& ev : e.value("events", json::array())) {
      if (ev.value("kind", "") == kind) out.push_back(ev.value("message", ""));
    }
    return out;
  }
  bool has_event(std::int64_t id, const std::string& kind) {
    const auto kinds = events(id);
    return std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
  }
  std::set<std::string> nodes_of(const json& allocation) {
    std::set<std::string> out;
    for (const auto& g : allocation.value("gpus", json::array())) out.insert(g.value("node", ""));
    return out;
  }
  AgentProcess& agent(const std::string& node) {
    for (auto& a : agents_) {
      if (a->node() == node) return *a;
    }
    ADD_FAILURE() << "no agent " << node;
    return *agents_.front();
  }
  // No GPU in two active allocations, read from the API.
  void expect_no_double_allocation() {
    std::set<std::pair<std::string, int>> seen;
    const auto all = body(admin_->get("/v1/allocations"));
    for (const auto& a : all.value("allocations", json::array())) {
      for (const auto& g : a.value("gpus", json::array())) {
        EXPECT_TRUE(seen.insert({g.value("node", ""), g.value("index", -1)}).second)
            << "GPU " << g.dump() << " in two active allocations: " << all.dump();
      }
    }
  }

  // The live corral-trainer processes of a job (processes_of_job() without their
  // supervisors).
  std::vector<int> trainers_of_job(std::int64_t id, const std::string& checkpoint_dir) {
    std::vector<int> out;
    for (const int pid : processes_of_job(id, checkpoint_dir)) {
      std::string comm;
      std::getline(std::ifstream("/proc/" + std::to_string(pid) + "/comm"), comm);
      if (comm == "corral-trainer") out.push_back(pid);
    }
    return out;
  }
  // The last step of the loss that a job's rank 0 reported to its run (0: none yet).
  std::int64_t reported_step(std::int64_t id) {
    const auto run = body(admin_->get("/v1/runs/" + std::to_string(id)));
    for (const auto& m : run.value("metrics", json::array())) {
      if (m.value("name", "") == "loss") return m.value("lastStep", std::int64_t{0});
    }
    return 0;
  }

  std::string ckpt_dir(const std::string& name) const {
    return (dir_.path() / "ckpt" / name).string();
  }
  json trainer_job(const std::string& name, int gpus, int steps, int step_ms,
                   const std::string& priority = "standard", int checkpoint_every = 20) {
    json spec = {
        {"name", name},
        {"priorityClass", priority},
        {"resources", {{"gpus", gpus}, {"gpuTypes", {"H100"}}}},
        {"command",
         {"corral-trainer", "--steps", std::to_string(steps), "--step-ms", std::to_string(step_ms),
          "--checkpoint-every", std::to_string(checkpoint_every)}},
        {"checkpoint", {{"dir", ckpt_dir(name)}, {"intervalSeconds", 1}}}};
    if (gpus > 8) spec["resources"]["gpusPerNode"] = 8;
    return spec;
  }

  TempDir dir_;
  std::unique_ptr<CorraldProcess> server_;
  std::unique_ptr<TestClient> admin_;
  std::vector<std::unique_ptr<AgentProcess>> agents_;
};

}  // namespace corral::testing
