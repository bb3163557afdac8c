// Issue 38, end to end: the exact setup of docs/scale-out.md, started the way the doc
// says, runs 300 jobs to success through a kill -9 and restart of each replica in turn.
//   - three replicas a, b, c on one PostgreSQL, each with its own data dir, one config
//     file with two shards, and a's key file copied (mode 0600) into b's and c's dirs;
//   - four simulated nodes (two per shard) whose agents are given every replica;
//   - 300 short jobs of three tenants on both shards, submitted through every live
//     replica while each replica in turn is killed with SIGKILL, restarted with the same
//     command line and waited for until it holds a lease again.
// Each worker writes a line when it starts and one when it ends, naming its job,
// attempt, node and GPUs. Then: every job succeeded, each started exactly once, no
// replica refused to restart, and no GPU was held by two jobs at once, neither by the
// workers' own account nor in the store's allocation history.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
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
namespace fs = std::filesystem;

constexpr int kJobs = 300;
const std::vector<std::string> kNames = {"a", "b", "c"};
const std::vector<std::string> kTenants = {"vision", "speech", "search"};

// One worker's start or end, from its line in the shared log.
struct WorkerMark {
  bool start = false;
  std::int64_t job = 0;
  int rank = 0;
  int attempt = 0;
  std::string node;  // the agent's URL: one per node
  std::vector<int> gpus;
  std::int64_t at_ns = 0;
};

std::vector<WorkerMark> read_marks(const fs::path& log) {
  std::vector<WorkerMark> out;
  std::ifstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string kind, gpus;
    WorkerMark m;
    if (!(words >> kind >> m.job >> m.rank >> m.attempt >> m.node >> gpus >> m.at_ns)) continue;
    m.start = kind == "start";
    std::istringstream list(gpus);
    for (std::string g; std::getline(list, g, ',');) m.gpus.push_back(std::stoi(g));
    out.push_back(m);
  }
  return out;
}

class ReplicaRestart : public ::testing::Test {
 protected:
  void SetUp() override {
    store_url_or_skip<PostgresFactory>(url_);  // PostgreSQL only: replicas share one
    if (IsSkipped() || HasFatalFailure()) return;
    config_ = dir_.path() / "corrald.yaml";
    std::ofstream(config_) << "scheduler: {minRuntimeMs: 0, tickMs: 200}\n"
                              "agents: {nodeLostAfterMs: 10000, stopGraceMs: 2000}\n"
                              "replica: {leaseMs: 1500}\n"
                              "shards:\n"
                              "  - {name: h100, gpuTypes: [H100]}\n"
                              "  - {name: a100, gpuTypes: [A100-80GB]}\n";
  }
  void TearDown() override {
    for (auto& a : agents_) a->crash_node();
    for (auto& r : replicas_) r->stop();
  }

  // The doc's command line: its own data dir, the shared store and config, its name.
  // A restart listens where the first start did, as the doc's fixed --listen does: the
  // agents' --server lists name it.
  core::Status start(int i) {
    replicas_[i]->set_extra_args({"--config", config_.string(), "--replica", kNames[i]});
    const auto started = replicas_[i]->start();
    if (started.ok()) replicas_[i]->set_listen(replicas_[i]->addr());
    return started;
  }
  TestClient client(int i) { return replicas_[i]->client(token_); }
  // Any live replica's /v1/shards.
  json shards() {
    for (std::size_t i = 0; i < replicas_.size(); ++i) {
      if (!replicas_[i]->running()) continue;
      const auto r = client(static_cast<int>(i)).get("/v1/shards");
      if (r.status == 200) return body(r);
    }
    return json::object();
  }
  // Every lease live, and each replica holding one: three leases (two shards and
  // @controllers) spread over three replicas.
  bool spread() {
    std::set<std::string> holders;
    for (const auto& s : shards().value("shards", json::array())) {
      if (!s.value("live", false)) return false;
      holders.insert(s.value("holder", ""));
    }
    return holders.size() == kNames.size();
  }

  TempDir dir_;
  std::string url_;
  std::string token_;
  fs::path config_;
  std::vector<std::unique_ptr<CorraldProcess>> replicas_;
  std::vector<std::unique_ptr<AgentProcess>> agents_;
};

TEST_F(ReplicaRestart, ThreeHundredJobsRunOnceThroughAKill9AndRestartOfEachReplica) {
  const auto t0 = std::chrono::steady_clock::now();
  for (const auto& name : kNames) {
    replicas_.push_back(std::make_unique<CorraldProcess>(dir_.path() / name, url_));
  }
  // a first: it makes the key file and the bootstrap tokens on the fresh database.
  ASSERT_TRUE(start(0).ok());
  token_ = replicas_[0]->admin_token();
  ASSERT_FALSE(token_.empty());
  const fs::path key = dir_.path() / "a" / "corrald.key";
  ASSERT_EQ(fs::status(key).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  for (int i = 1; i < 3; ++i) {  // scp -p: the same bytes, mode 0600
    const fs::path copy = dir_.path() / kNames[i] / "corrald.key";
    fs::create_directories(copy.parent_path());
    fs::copy_file(key, copy);
    fs::permissions(copy, fs::perms::owner_read | fs::perms::owner_write);
    ASSERT_TRUE(start(i).ok()) << kNames[i];
  }
  ASSERT_TRUE(eventually([&] { return spread(); }, 20s)) << shards().dump();

  // Two nodes per shard; each agent is given every replica, starting at a different one.
  const std::vector<std::pair<std::string, std::string>> nodes = {
      {"n1", "dgx-h100"}, {"n2", "dgx-a100"}, {"n3", "dgx-h100"}, {"n4", "dgx-a100"}};
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    std::string servers;
    for (std::size_t k = 0; k < replicas_.size(); ++k) {
      servers += (k == 0 ? "" : ",http://") + replicas_[(n + k) % replicas_.size()]->addr();
    }
    const auto& [node, preset] = nodes[n];
    agents_.push_back(std::make_unique<AgentProcess>(node, dir_.path() / ("agent-" + node)));
    ASSERT_TRUE(agents_.back()
                    ->start(servers, dir_.path() / "a" / "join.token", preset,
                            "spine=s1,leaf=l-" + node + ",rack=r-" + node)
                    .ok());
  }
  auto admin = client(0);
  for (const auto& t : kTenants) {
    const auto r = admin.put("/v1/tenants/" + t, "{}");
    ASSERT_EQ(r.status, 201) << r.body;
  }
  ASSERT_TRUE(eventually([&] {
    std::size_t ready = 0;
    for (const auto& n : body(admin.get("/v1/nodes")).value("nodes", json::array())) {
      ready += n.contains("heartbeatAtMs");
    }
    return ready == nodes.size();
  })) << admin.get("/v1/nodes").body;

  // Submissions through every live replica, in the background. A replica is killed only
  // between two submissions (the lock), so every submission is answered: 201, or a
  // refusal that fails the test.
  const fs::path marks = dir_.path() / "workers.log";
  const std::string mark =
      "$CORRAL_JOB_ID $RANK $CORRAL_ATTEMPT $CORRAL_AGENT_URL $CUDA_VISIBLE_DEVICES";
  const std::string command = "echo start " + mark + " $(date +%s%N) >> " + marks.string() +
                              "; sleep 0.1; echo end " + mark + " $(date +%s%N) >> " +
                              marks.string();
  std::mutex mu;
  std::vector<bool> up(replicas_.size(), true);
  std::vector<std::int64_t> ids;
  std::vector<std::string> refused;
  std::thread submitter([&] {
    for (int n = 0; n < kJobs; ++n) {
      std::this_thread::sleep_for(10ms);
      std::lock_guard lock(mu);
      int via = n % 3;
      while (!up[via]) via = (via + 1) % 3;
      const json spec = {
          {"name", "j" + std::to_string(n)},
          {"tenant", kTenants[n % kTenants.size()]},
          {"resources", {{"gpus", 1 + n % 2}, {"gpuTypes", {n % 4 < 2 ? "H100" : "A100-80GB"}}}},
          {"command", {"sh", "-c", command}}};
      const auto r = client(via).post("/v1/jobs", spec.dump());
      if (r.status != 201) {
        refused.push_back(kNames[via] + ": " + std::to_string(r.status) + " " + r.body);
        continue;
      }
      ids.push_back(body(r).value("id", std::int64_t{0}));
    }
  });

  // Each replica in turn, a quarter of the way through the submissions: SIGKILL, then
  // the same command line again, and wait until it holds a lease again.
  std::vector<std::string> restart_failures;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(eventually(
        [&] {
          std::lock_guard lock(mu);
          return ids.size() + refused.size() >= static_cast<std::size_t>((i + 1) * kJobs / 4);
        },
        60s));
    {
      std::lock_guard lock(mu);
      up[i] = false;
      replicas_[i]->kill9();
    }
    const auto killed = std::chrono::steady_clock::now();
    const auto restarted = start(i);
    if (!restarted.ok()) {
      restart_failures.push_back(kNames[i] + ": " + restarted.to_string());
      continue;
    }
    {
      std::lock_guard lock(mu);
      up[i] = true;
    }
    const auto answered = std::chrono::steady_clock::now();
    EXPECT_TRUE(eventually([&] { return spread(); }, 20s))
        << kNames[i] << " did not take a lease again: " << shards().dump();
    const auto ms = [](auto d) {
      return static_cast<long long>(
          std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
    };
    std::printf(
        "replica_restart: %s killed; restarted, answering after %lld ms; holds a lease again "
        "%lld ms later\n",
        kNames[i].c_str(), ms(answered - killed), ms(std::chrono::steady_clock::now() - answered));
  }
  submitter.join();
  EXPECT_TRUE(restart_failures.empty()) << restart_failures.front();
  EXPECT_TRUE(refused.empty()) << refused.size() << " refused, first " << refused.front();
  ASSERT_EQ(ids.size(), static_cast<std::size_t>(kJobs));

  // Every job succeeded, read through the last replica restarted.
  auto c = client(2);
  std::map<std::string, int> phases;
  std::vector<std::int64_t> unfinished = ids;
  std::string first_unfinished;
  const bool all_done = eventually(
      [&] {
        phases.clear();
        std::vector<std::int64_t> still;
        for (const std::int64_t id : unfinished) {
          const json j = body(c.get("/v1/jobs/" + std::to_string(id)));
          const std::string phase = j.value("phase", "?");
          ++phases[phase];
          if (phase != "succeeded") {
            if (still.empty()) first_unfinished = j.dump();
            still.push_back(id);
          }
        }
        unfinished = still;
        return unfinished.empty();
      },
      60s);
  std::string tally;
  for (const auto& [phase, count] : phases) tally += " " + phase + "=" + std::to_string(count);
  EXPECT_TRUE(all_done) << unfinished.size() << " unfinished:" << tally << "; first "
                        << first_unfinished;

  // Each rank of each job (job n has 1 + n % 2 GPUs, one rank each) started once and
  // ended once.
  const auto worker_marks = read_marks(marks);
  std::map<std::pair<std::int64_t, int>, std::pair<int, int>>
      runs;  // (job, rank) -> (starts, ends)
  for (const auto& m : worker_marks) {
    auto& [starts, ends] = runs[{m.job, m.rank}];
    (m.start ? starts : ends) += 1;
  }
  int twice = 0, never = 0;
  for (std::size_t n = 0; n < ids.size(); ++n) {
    for (int rank = 0; rank < 1 + static_cast<int>(n % 2); ++rank) {
      const auto [starts, ends] = runs[{ids[n], rank}];
      twice += starts > 1;
      never += starts == 0;
      EXPECT_EQ(starts, 1) << "job " << ids[n] << " rank " << rank << " started " << starts
                           << " times";
      EXPECT_EQ(ends, 1) << "job " << ids[n] << " rank " << rank << " ended " << ends << " times";
    }
  }
  EXPECT_EQ(runs.size(), static_cast<std::size_t>(kJobs * 3 / 2)) << "ranks of unknown jobs ran";
  std::printf("replica_restart: %zu jobs, %zu unfinished, %d ranks started twice, %d never\n",
              ids.size(), unfinished.size(), twice, never);

  // No GPU ran two workers at once: on each (node, GPU), every start follows the end
  // before it.
  std::map<std::pair<std::string, int>, std::vector<std::pair<std::int64_t, bool>>> per_gpu;
  for (const auto& m : worker_marks) {
    for (const int g : m.gpus) per_gpu[{m.node, g}].push_back({m.at_ns, m.start});
  }
  int overlaps = 0;
  for (auto& [gpu, events] : per_gpu) {
    std::sort(events.begin(), events.end());
    int busy = 0;
    for (const auto& [at, start] : events) {
      busy += start ? 1 : -1;
      if (busy > 1) ++overlaps;
    }
  }
  EXPECT_EQ(overlaps, 0) << "workers sharing a GPU";

  // Nor in the store: no two allocations of one GPU overlap in time.
  auto opened = store::open_store(url_);
  ASSERT_TRUE(opened.ok());
  std::vector<store::AllocationRow> rows;
  ASSERT_TRUE((*opened)
                  ->read([&](store::Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(rows, tx.allocations().list_allocations_overlapping(
                                                      core::Time{}, core::time_from_ms(1LL << 50)));
                    return core::Status();
                  })
                  .ok());
  std::map<std::tuple<std::string, int>, std::vector<const store::AllocationRow*>> by_gpu;
  for (const auto& row : rows) by_gpu[{row.node.value, row.gpu_index}].push_back(&row);
  int held_twice = 0;
  for (auto& [gpu, held] : by_gpu) {
    std::sort(held.begin(), held.end(),
              [](auto* x, auto* y) { return x->created_at < y->created_at; });
    for (std::size_t k = 1; k < held.size(); ++k) {
      const auto* prev = held[k - 1];
      if (!prev->released_at || *prev->released_at > held[k]->created_at) {
        ++held_twice;
        ADD_FAILURE() << std::get<0>(gpu) << " GPU " << std::get<1>(gpu) << " held by job "
                      << prev->job.value << " and job " << held[k]->job.value;
      }
    }
  }
  EXPECT_EQ(held_twice, 0);
  std::printf("replica_restart: %zu allocations checked, %zu worker marks, %lld ms in all\n",
              rows.size(), worker_marks.size(),
              static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                         std::chrono::steady_clock::now() - t0)
                                         .count()));
}

}  // namespace
}  // namespace corral::testing
