// Crash test: corrald is killed with SIGKILL at random moments while clients submit
// jobs with idempotency keys, then restarted, 20+ times. Afterwards:
//   - every acknowledged submission exists exactly once (retries with the same key
//     after a crash return the first job, never a second one);
//   - no GPU is in two active allocations;
//   - scheduling resumes: freed GPUs go to waiting jobs after the last restart.
// The seed comes from CORRAL_SEED when set, and is printed, so a failure replays.
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/corrald_process.h"
#include "testing/store_fixture.h"

namespace corral::testing {
namespace {

using nlohmann::json;
using testing::body;

std::string job(const std::string& key) {
  return json{
      {"name", key}, {"resources", {{"gpus", 1}, {"gpuTypes", {"H100"}}}}, {"command", {"true"}}}
      .dump();
}

void crash_and_recover(const std::string& store_url, const TempDir& dir) {
  std::uint64_t seed = std::random_device{}();
  if (const char* s = std::getenv("CORRAL_SEED")) seed = std::strtoull(s, nullptr, 10);
  std::printf("crash test seed: CORRAL_SEED=%llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);

  CorraldProcess server(dir.path(), store_url);
  ASSERT_TRUE(server.start().ok());
  const std::string token = server.admin_token();
  // 4 nodes x 8 GPUs: the first 32 one-GPU jobs are placed, the rest wait.
  for (int n = 0; n < 4; ++n) {
    auto r = server.client(token).post(
        "/v1/nodes",
        json{{"id", "n" + std::to_string(n)}, {"gpuType", "H100"}, {"gpuCount", 8}}.dump());
    ASSERT_EQ(r.status, 201) << r.body;
  }

  constexpr int kCrashes = 20;
  constexpr int kClients = 3;
  std::mutex mu;
  std::map<std::string, std::int64_t> acked;  // key -> job id, guarded by mu
  std::set<std::string> unacked;              // sent, no answer yet; guarded by mu
  std::atomic<int> next_key{0};

  for (int crash = 0; crash <= kCrashes; ++crash) {
    std::atomic<bool> stop{false};
    std::vector<std::thread> clients;
    const std::string addr = server.addr();
    for (int c = 0; c < kClients; ++c) {
      clients.emplace_back([&, addr] {
        TestClient client(addr, token);
        while (!stop) {
          // Retry a key that never got an answer first, as a real client would.
          std::string key;
          {
            std::lock_guard lock(mu);
            if (!unacked.empty()) {
              key = *unacked.begin();
              unacked.erase(unacked.begin());
            }
          }
          if (key.empty()) key = "k" + std::to_string(next_key++);
          auto r = client.post("/v1/jobs", job(key), {{"Idempotency-Key", key}});
          std::lock_guard lock(mu);
          if (r.status == 201) {
            const std::int64_t id = body(r.body).value("id", std::int64_t{0});
            auto [it, fresh] = acked.emplace(key, id);
            EXPECT_EQ(it->second, id) << "key " << key << " answered with two different jobs";
          } else {
            unacked.insert(key);
            if (r.status == 0) return;  // the server is gone
          }
        }
      });
    }
    // Run for a random 30-250 ms, then kill without warning (the last round ends
    // cleanly so the checks below run against a live server).
    struct timespec ts {
      0, static_cast<long>(30'000'000 + rng() % 220'000'000)
    };
    nanosleep(&ts, nullptr);
    if (crash < kCrashes) server.kill9();
    stop = true;
    for (auto& t : clients) t.join();
    if (crash < kCrashes) {
      ASSERT_TRUE(server.start().ok()) << "restart " << crash;
    }
  }

  // Settle: retry every key that never got an answer, so each key has one job.
  TestClient admin = server.client(token);
  for (const auto& key : std::set<std::string>(unacked)) {
    auto r = admin.post("/v1/jobs", job(key), {{"Idempotency-Key", key}});
    ASSERT_EQ(r.status, 201) << r.body;
    acked.emplace(key, body(r.body).value("id", std::int64_t{0}));
  }
  // Enough jobs that the 32 GPUs fill and some wait, for the resume check below.
  for (int i = 0; acked.size() < 40; ++i) {
    const std::string key = "top-up-" + std::to_string(i);
    auto r = admin.post("/v1/jobs", job(key), {{"Idempotency-Key", key}});
    ASSERT_EQ(r.status, 201) << r.body;
    acked.emplace(key, body(r.body).value("id", std::int64_t{0}));
  }

  // 1. Every acknowledged job exists, exactly once per key.
  std::map<std::string, int> jobs_by_name;
  std::int64_t after = 0;
  while (true) {
    auto page = body(admin.get("/v1/jobs?limit=1000&after=" + std::to_string(after)).body);
    if (page["jobs"].empty()) break;
    for (const auto& j : page["jobs"]) {
      ++jobs_by_name[j["name"].get<std::string>()];
      after = j["id"].get<std::int64_t>();
    }
  }
  for (const auto& [key, id] : acked) {
    EXPECT_EQ(jobs_by_name[key], 1) << "key " << key;
    EXPECT_EQ(admin.get("/v1/jobs/" + std::to_string(id)).status, 200) << "job " << id;
  }
  EXPECT_EQ(jobs_by_name.size(), acked.size());

  // 2. No GPU is in two active allocations.
  auto allocs = body(admin.get("/v1/allocations").body)["allocations"];
  std::set<std::pair<std::string, int>> gpus;
  std::size_t held = 0;
  for (const auto& a : allocs) {
    for (const auto& g : a["gpus"]) {
      ++held;
      gpus.emplace(g["node"].get<std::string>(), g["index"].get<int>());
    }
  }
  EXPECT_EQ(gpus.size(), held);
  EXPECT_LE(held, 32u);

  // 3. Scheduling resumes: all 32 GPUs fill, and a cancelled job's GPU goes to the next.
  ASSERT_TRUE(eventually([&] {
    return body(admin.get("/v1/allocations").body)["allocations"].size() == 32;
  })) << "the scheduler did not fill the fleet after the last restart";
  const auto first = body(admin.get("/v1/allocations").body)["allocations"][0]["job"];
  ASSERT_EQ(
      admin.post("/v1/jobs/" + std::to_string(first.get<std::int64_t>()) + "/cancel", "").status,
      200);
  ASSERT_TRUE(eventually([&] {
    auto now = body(admin.get("/v1/allocations").body)["allocations"];
    return now.size() == 32 && now[0]["job"] != first;
  }));
  server.stop();
}

TEST(Crash, SqliteSurvivesKill9DuringSubmissions) {
  TempDir dir;
  crash_and_recover("", dir);
}

TEST(Crash, PostgresSurvivesKill9DuringSubmissions) {
  auto url = fresh_postgres_database();
  if (!url.ok() && url.status().code() == core::StatusCode::kNotFound) {
    GTEST_SKIP() << url.status().message();
  }
  ASSERT_TRUE(url.ok()) << url.status().to_string();
  TempDir dir;
  crash_and_recover(*url, dir);
}

}  // namespace
}  // namespace corral::testing
