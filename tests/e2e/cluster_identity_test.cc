// Issue #19: an agent that outlives its cluster must not mix that cluster's workers up
// with a new one's. Real processes on loopback: corrald A (its own data dir) and agent
// n1 run an 8-GPU corral-trainer job; corrald A and the agent are killed with SIGKILL
// (the workers live on, as designed); a fresh corrald B (another data dir, so another
// store and cluster id) gets a job, which is job 1 again, and agent n1 comes back on the
// same state dir. B's job 1 must run its own workers, once, and succeed on its first
// attempt; A's workers must be stopped and gone.
#include <algorithm>
#include <filesystem>
#include <fstream>
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
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

json trainer_job(const std::filesystem::path& dir, const std::string& name, int steps) {
  return {{"name", name},
          {"resources", {{"gpus", 8}, {"gpuTypes", {"H100"}}}},
          {"command",
           {"corral-trainer", "--steps", std::to_string(steps), "--step-ms", "10",
            "--checkpoint-every", "20"}},
          {"checkpoint", {{"dir", (dir / "ckpt" / name).string()}, {"intervalSeconds", 1}}}};
}

// A corrald on its own data dir, with the short timers of the other end-to-end tests.
std::unique_ptr<CorraldProcess> start_corrald(const std::filesystem::path& data_dir) {
  std::filesystem::create_directories(data_dir);
  const auto cfg = data_dir / "config.yaml";
  std::ofstream(cfg) << "scheduler: {minRuntimeMs: 0, tickMs: 200}\n"
                        "agents: {nodeLostAfterMs: 4000, stopGraceMs: 5000,"
                        " restartBackoffMs: 100, restartBackoffMaxMs: 1000}\n";
  auto server = std::make_unique<CorraldProcess>(data_dir);
  server->set_extra_args({"--config", cfg.string()});
  const auto s = server->start();
  EXPECT_TRUE(s.ok()) << s.to_string();
  return server;
}

bool node_ready(TestClient& admin) {
  for (const auto& n : body(admin.get("/v1/nodes")).value("nodes", json::array())) {
    if (n.value("id", "") == "n1" && n.contains("heartbeatAtMs")) return true;
  }
  return false;
}

TEST(ClusterIdentity, AFreshClusterNeverTakesOverTheWorkersOfAnotherOne) {
  TempDir dir;
  const std::filesystem::path state = dir.path() / "agent-n1";
  const std::string labels = "spine=s1,leaf=l1,rack=r1";
  const std::string old_ckpt = (dir.path() / "ckpt" / "old").string();
  const std::string new_ckpt = (dir.path() / "ckpt" / "new").string();

  // 1. Cluster A runs a long 8-GPU job on n1.
  auto a = start_corrald(dir.path() / "a");
  ASSERT_TRUE(a->running());
  TestClient admin_a = a->admin();
  auto agent = std::make_unique<AgentProcess>("n1", state);
  ASSERT_TRUE(agent->start(a->addr(), dir.path() / "a" / "join.token", "dgx-h100", labels).ok());
  ASSERT_TRUE(eventually([&] { return node_ready(admin_a); })) << admin_a.get("/v1/nodes").body;
  const auto old_job = admin_a.post("/v1/jobs", trainer_job(dir.path(), "old", 1000000).dump());
  ASSERT_EQ(old_job.status, 201) << old_job.body;
  ASSERT_EQ(body(old_job).value("id", 0), 1);
  ASSERT_TRUE(eventually([&] {
    return body(admin_a.get("/v1/jobs/1")).value("phase", "") == "running";
  })) << admin_a.get("/v1/jobs/1").body;
  // Every rank (and its supervisor: both carry CORRAL_JOB_ID) of A's job 1.
  std::vector<int> old_pids;
  ASSERT_TRUE(eventually([&] {
    old_pids = processes_of_job(1, old_ckpt);
    return old_pids.size() >= 16;
  })) << old_pids.size();

  // 2. corrald A and the agent die; A's workers live on.
  a->kill9();
  agent->kill9();
  for (const int pid : old_pids) ASSERT_EQ(::kill(pid, 0), 0) << "pid " << pid;

  // 3. A fresh cluster B. Its job is job 1 too, submitted before n1 joins so that the
  //    agent's first assignments answer may already carry it.
  auto b = start_corrald(dir.path() / "b");
  ASSERT_TRUE(b->running());
  TestClient admin_b = b->admin();
  const auto new_job = admin_b.post("/v1/jobs", trainer_job(dir.path(), "new", 100).dump());
  ASSERT_EQ(new_job.status, 201) << new_job.body;
  ASSERT_EQ(body(new_job).value("id", 0), 1);
  // The same AgentProcess again: replacing it would crash_node() the old workers.
  ASSERT_TRUE(agent->start(b->addr(), dir.path() / "b" / "join.token", "dgx-h100", labels).ok());

  // 4. B's job 1 runs its own workers and succeeds at its first attempt: it was neither
  //    put into restart backoff by A's workers' exits nor reported running on them.
  ASSERT_TRUE(eventually(
      [&] {
        const std::string phase = body(admin_b.get("/v1/jobs/1")).value("phase", "");
        return phase == "succeeded" || phase == "failed";
      },
      60s))
      << admin_b.get("/v1/jobs/1").body << "\n"
      << admin_b.get("/v1/jobs/1/events").body;
  const json job = body(admin_b.get("/v1/jobs/1"));
  EXPECT_EQ(job.value("phase", ""), "succeeded") << job.dump();
  EXPECT_EQ(job.value("attempt", 0), 1) << job.dump();
  const json events = body(admin_b.get("/v1/jobs/1/events"));
  for (const auto& e : events.value("events", json::array())) {
    EXPECT_NE(e.value("kind", ""), "rank failed") << events.dump();
    EXPECT_NE(e.value("kind", ""), "requeued") << events.dump();
  }
  // Its log is its own: one launch of rank 0, which ran to the end.
  const auto log = admin_b.get("/v1/jobs/1/logs?rank=0");
  ASSERT_EQ(log.status, 200) << log.body;
  std::size_t launches = 0;
  for (std::size_t at = log.body.find("corral-trainer: job="); at != std::string::npos;
       at = log.body.find("corral-trainer: job=", at + 1)) {
    ++launches;
  }
  EXPECT_EQ(launches, 1u) << log.body;
  EXPECT_NE(log.body.find("final="), std::string::npos) << log.body;

  // 5. A's workers are gone, and so are B's (its job 1 ended).
  EXPECT_TRUE(eventually([&] { return processes_of_job(1, old_ckpt).empty(); }))
      << processes_of_job(1, old_ckpt).size() << " processes of cluster A's job 1 still alive";
  EXPECT_TRUE(eventually([&] { return processes_of_job(1, new_ckpt).empty(); }))
      << processes_of_job(1, new_ckpt).size() << " processes of cluster B's job 1 still alive";

  agent->crash_node();
  b->stop();
  if (HasFailure()) {
    std::ifstream in(state / "agent.log");
    std::stringstream text;
    text << in.rdbuf();
    ADD_FAILURE() << "agent n1's log (both runs):\n" << text.str();
  }
}

// The other side of the same rule: corrald restarted on its own store is the same
// cluster, so an agent restarted beside it adopts its live workers and starts no rank
// twice (nor stops them before corrald's first answer says they are wanted). The
// adopted rank 0 still reports checkpoints to the old agent's port, which is gone, and
// retries each for 0.7 s: hence a short job.
TEST(ClusterIdentity, TheSameClusterAgainAdoptsItsLiveWorkers) {
  TempDir dir;
  const std::filesystem::path state = dir.path() / "agent-n1";
  const std::string labels = "spine=s1,leaf=l1,rack=r1";
  auto a = start_corrald(dir.path() / "a");
  ASSERT_TRUE(a->running());
  TestClient first = a->admin();
  auto agent = std::make_unique<AgentProcess>("n1", state);
  ASSERT_TRUE(agent->start(a->addr(), dir.path() / "a" / "join.token", "dgx-h100", labels).ok());
  ASSERT_TRUE(eventually([&] { return node_ready(first); })) << first.get("/v1/nodes").body;
  ASSERT_EQ(first.post("/v1/jobs", trainer_job(dir.path(), "kept", 200).dump()).status, 201);
  ASSERT_TRUE(eventually([&] {
    return body(first.get("/v1/jobs/1")).value("phase", "") == "running";
  })) << first.get("/v1/jobs/1").body;
  std::vector<int> before;
  ASSERT_TRUE(eventually([&] {
    before = processes_of_job(1, (dir.path() / "ckpt" / "kept").string());
    return before.size() >= 16;
  }));

  a->kill9();
  agent->kill9();
  ASSERT_TRUE(a->start().ok());  // the same data dir: the same store and cluster id
  TestClient admin = a->admin();
  // The same AgentProcess again: replacing it would crash_node() the old workers.
  ASSERT_TRUE(agent->start(a->addr(), dir.path() / "a" / "join.token", "dgx-h100", labels).ok());

  ASSERT_TRUE(eventually(
      [&] {
        const std::string phase = body(admin.get("/v1/jobs/1")).value("phase", "");
        return phase == "succeeded" || phase == "failed";
      },
      60s))
      << admin.get("/v1/jobs/1").body;
  const json job = body(admin.get("/v1/jobs/1"));
  EXPECT_EQ(job.value("phase", ""), "succeeded") << job.dump();
  EXPECT_EQ(job.value("attempt", 0), 1) << job.dump() << admin.get("/v1/jobs/1/events").body;
  const auto log = admin.get("/v1/jobs/1/logs?rank=0");
  ASSERT_EQ(log.status, 200) << log.body;
  EXPECT_EQ(log.body.find("corral-trainer: job="), log.body.rfind("corral-trainer: job="))
      << "rank 0 was started twice:\n"
      << log.body;
  EXPECT_NE(log.body.find("final="), std::string::npos) << log.body;

  agent->crash_node();
  a->stop();
  if (HasFailure()) {
    std::ifstream in(state / "agent.log");
    std::stringstream text;
    text << in.rdbuf();
    ADD_FAILURE() << "agent n1's log (both runs):\n" << text.str();
  }
}

}  // namespace
}  // namespace corral::testing
