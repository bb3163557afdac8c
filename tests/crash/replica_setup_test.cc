// Replicas set up as docs/scale-out.md says (issue 38): corrald processes on one
// PostgreSQL, each with its own data dir, started with the same config and the same key
// file. The failover test (failover_test.cc) covers the leases; this one what a replica
// must agree on with the others before it may run anything:
//   - the key file: a replica without it, or with another, refuses to start with the
//     fix in one line; given the first replica's file, jobs with and without secrets run
//     through both replicas;
//   - the scheduling config: a replica started with another takes no lease and says so
//     in /healthz and /v1/shards, until no replica runs the old config any more.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <thread>
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
namespace fs = std::filesystem;

// The last "corrald: ..." line of a replica's log: what it said when it refused to start.
std::string refusal(const fs::path& data_dir) {
  std::ifstream log(data_dir / "corrald.log");
  std::string line, last;
  while (std::getline(log, line)) {
    if (line.starts_with("corrald: ")) last = line;
  }
  return last;
}

class ReplicaSetup : public ::testing::Test {
 protected:
  void SetUp() override {
    store_url_or_skip<PostgresFactory>(url_);  // PostgreSQL only: replicas share one
    if (IsSkipped() || HasFatalFailure()) return;
    sharded_ = write_config("sharded.yaml",
                            "shards:\n"
                            "  - {name: h100, gpuTypes: [H100]}\n"
                            "  - {name: a100, gpuTypes: [A100-80GB]}\n");
    plain_ = write_config("plain.yaml", "");
  }
  void TearDown() override {
    for (auto& a : agents_) a->crash_node();
    for (auto& r : replicas_) r->stop();
  }

  fs::path write_config(const std::string& name, const std::string& extra) {
    const fs::path path = dir_.path() / name;
    std::ofstream(path) << "scheduler: {minRuntimeMs: 0, tickMs: 200}\n"
                           "agents: {nodeLostAfterMs: 10000, stopGraceMs: 2000}\n"
                           "replica: {leaseMs: 1500}\n"
                        << extra;
    return path;
  }
  // A replica as the doc starts it: its own data dir, the shared store, a config.
  CorraldProcess& replica(const std::string& name, const fs::path& config) {
    replicas_.push_back(std::make_unique<CorraldProcess>(dir_.path() / name, url_));
    replicas_.back()->set_extra_args({"--config", config.string(), "--replica", name});
    return *replicas_.back();
  }
  void agent(const std::string& node, const std::string& preset, const std::string& servers) {
    agents_.push_back(std::make_unique<AgentProcess>(node, dir_.path() / ("agent-" + node)));
    ASSERT_TRUE(agents_.back()
                    ->start(servers, dir_.path() / "a" / "join.token", preset,
                            "spine=s1,leaf=l-" + node + ",rack=r-" + node)
                    .ok());
  }
  json shards_of(CorraldProcess& r) { return body(r.client(token_).get("/v1/shards")); }

  TempDir dir_;
  std::string url_;
  std::string token_;
  fs::path sharded_, plain_;
  std::vector<std::unique_ptr<CorraldProcess>> replicas_;
  std::vector<std::unique_ptr<AgentProcess>> agents_;
};

TEST_F(ReplicaSetup, ASecondReplicaRunsOnlyWithTheFirstOnesKeyFileAndThenJobsRunThroughBoth) {
  CorraldProcess& a = replica("a", sharded_);
  ASSERT_TRUE(a.start().ok());
  token_ = a.admin_token();

  // b without a key file: it would make its own, under which nothing of a's opens.
  CorraldProcess& b = replica("b", sharded_);
  const auto none = b.start();
  ASSERT_FALSE(none.ok());
  std::string said = refusal(dir_.path() / "b");
  EXPECT_NE(said.find("no key file at " + (dir_.path() / "b" / "corrald.key").string()),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("(fingerprint "), std::string::npos) << said;
  EXPECT_NE(said.find("--key-file"), std::string::npos) << said;
  // b with another key file (as a replica that once started alone has): named, both keys.
  fs::create_directories(dir_.path() / "b");
  std::ofstream(dir_.path() / "b" / "corrald.key") << "kbbbbbbbb " << std::string(64, 'b') << "\n";
  ASSERT_FALSE(b.start().ok());
  said = refusal(dir_.path() / "b");
  EXPECT_NE(said.find("holds kbbbbbbbb (fingerprint "), std::string::npos) << said;
  EXPECT_NE(said.find("wrapped by key k"), std::string::npos) << said;
  EXPECT_NE(said.find("--key-file"), std::string::npos) << said;

  // As the refusal says: a's key file, copied.
  fs::copy_file(dir_.path() / "a" / "corrald.key", dir_.path() / "b" / "corrald.key",
                fs::copy_options::overwrite_existing);
  ASSERT_TRUE(b.start().ok());

  // The H100 node's agent talks to b, the A100 node's to a: whichever replica places a
  // job, the other may be the one that hands it to its agent.
  agent("n1", "dgx-h100", b.addr() + ",http://" + a.addr());
  agent("n2", "dgx-a100", a.addr() + ",http://" + b.addr());
  auto via_a = a.client(token_), via_b = b.client(token_);
  ASSERT_TRUE(eventually([&] {
    return body(via_a.get("/v1/nodes")).value("nodes", json::array()).size() == 2;
  })) << via_a.get("/v1/nodes").body;
  std::vector<std::int64_t> ids;
  for (int i = 0; i < 12; ++i) {
    json spec = {{"name", "j" + std::to_string(i)},
                 {"resources", {{"gpus", 1}, {"gpuTypes", {i % 2 ? "H100" : "A100-80GB"}}}},
                 {"command", {"true"}}};
    if (i % 3 == 0) {  // some with a secret, which the worker checks it got
      spec["secretEnv"] = {{"TOKEN", "s3cret"}};
      spec["command"] = {"sh", "-c", "test \"$TOKEN\" = s3cret"};
    }
    const auto r = (i % 2 ? via_a : via_b).post("/v1/jobs", spec.dump());
    ASSERT_EQ(r.status, 201) << r.body;
    ids.push_back(body(r).value("id", std::int64_t{0}));
  }
  for (const auto id : ids) {
    EXPECT_TRUE(eventually(
        [&] {
          return body(via_a.get("/v1/jobs/" + std::to_string(id))).value("phase", "") ==
                 "succeeded";
        },
        60s))
        << via_a.get("/v1/jobs/" + std::to_string(id)).body;
  }
}

TEST_F(ReplicaSetup, AReplicaWithAnotherConfigTakesNoLeaseAndSaysWhyUntilTheOldConfigIsGone) {
  CorraldProcess& a = replica("a", sharded_);
  ASSERT_TRUE(a.start().ok());
  token_ = a.admin_token();
  fs::create_directories(dir_.path() / "b");
  fs::copy_file(dir_.path() / "a" / "corrald.key", dir_.path() / "b" / "corrald.key");
  CorraldProcess& b = replica("b", plain_);  // no shards: the one `default` shard
  ASSERT_TRUE(b.start().ok());

  // b answers, but holds nothing and says why: in /healthz, /v1/shards and its log.
  ASSERT_TRUE(eventually([&] {
    return body(b.client("").get("/healthz")).value("status", "") == "degraded";
  })) << b.client("").get("/healthz").body;
  const std::string why = body(b.client("").get("/healthz")).value("reason", "");
  EXPECT_NE(why.find("differs from config"), std::string::npos) << why;
  EXPECT_NE(why.find("live replicas a"), std::string::npos) << why;
  const json seen_by_b = shards_of(b);
  EXPECT_FALSE(seen_by_b["config"].value("agrees", true)) << seen_by_b.dump();
  EXPECT_EQ(seen_by_b["config"].value("problem", ""), why);
  std::this_thread::sleep_for(3s);  // two lease periods: b would have claimed by now
  for (const auto& s : shards_of(a).value("shards", json::array())) {
    EXPECT_EQ(s.value("holder", ""), "a") << s.dump();
  }
  for (const auto& s : shards_of(b).value("shards", json::array())) {
    EXPECT_FALSE(s.value("servedHere", true)) << s.dump();  // no `default` lease
  }
  EXPECT_EQ(body(a.client("").get("/healthz")).value("status", ""), "ok");
  std::ifstream log(dir_.path() / "b" / "corrald.log");
  const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("sched_config_mismatch"), std::string::npos) << text;

  // A rolling change: once no live replica runs the old config, b's is stored and b
  // schedules under it.
  a.stop();
  ASSERT_TRUE(eventually(
      [&] {
        const json s = shards_of(b);
        return s["config"].value("agrees", false) &&
               s.value("shards", json::array()).size() == 2 &&  // default and @controllers
               s["shards"][0].value("servedHere", false);
      },
      20s))
      << shards_of(b).dump();
  EXPECT_EQ(body(b.client("").get("/healthz")).value("status", ""), "ok");
}

}  // namespace
}  // namespace corral::testing
