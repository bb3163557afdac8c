// Ledger crash test: corrald bills one-second accrual periods while jobs are placed and
// cancelled around it, and is killed with SIGKILL 20 times at random moments, then
// restarted. Afterwards the ledger is checked against a reconstruction from the
// allocation intervals alone (the store's allocation rows, read directly):
//   - every GPU's entries in every accrued period add up to the period (zero residual),
//     with no (GPU, period, bucket, job) twice and no gap;
//   - the GPU-time billed to each job on each GPU is exactly the overlap of its
//     allocations with the accrued window;
//   - money is GPU-time times the price to the micro-dollar, and the daily sums that
//     chargeback reads equal the entries.
// The seed comes from CORRAL_SEED when set, and is printed, so a failure replays.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "store/store.h"
#include "testing/corrald_process.h"
#include "testing/store_fixture.h"

namespace corral::testing {
namespace {

using nlohmann::json;
using testing::body;

constexpr std::int64_t kPeriodMs = 1000;

std::string job(int n) {
  return json{{"name", "bill-" + std::to_string(n)},
              {"resources", {{"gpus", 1 + n % 2}, {"gpuTypes", {"H100"}}}},
              {"command", {"true"}}}
      .dump();
}

// corrald's log (all its runs), the last 4 KiB.
std::string log_of(const TempDir& dir) {
  std::ifstream in(dir.path() / "corrald.log");
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  return all.size() > 4096 ? all.substr(all.size() - 4096) : all;
}

void bill_through_crashes(const std::string& store_url, const TempDir& dir) {
  std::uint64_t seed = std::random_device{}();
  if (const char* s = std::getenv("CORRAL_SEED")) seed = std::strtoull(s, nullptr, 10);
  std::printf("ledger crash test seed: CORRAL_SEED=%llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);

  // $3.60 an hour is one micro-dollar a millisecond: money must equal GPU-milliseconds.
  // The grace outlasts any transaction: a placement or release is stamped when its
  // transaction starts and visible when it commits, and a period must not be read between.
  const std::string config = (dir.path() / "corrald.yaml").string();
  std::ofstream(config) << "billing:\n  periodSeconds: 1\n  graceSeconds: 3\n"
                           "  prices: [{gpuType: H100, perGpuHour: 3.6}]\n";
  CorraldProcess server(dir.path(), store_url);
  server.set_extra_args({"--config", config});
  ASSERT_TRUE(server.start().ok());
  const std::string token = server.admin_token();
  for (int n = 0; n < 2; ++n) {
    auto r = server.admin().post(
        "/v1/nodes",
        json{{"id", "n" + std::to_string(n)}, {"gpuType", "H100"}, {"gpuCount", 8}}.dump());
    ASSERT_EQ(r.status, 201) << r.body;
  }

  // A client keeps the fleet churning: submits, and cancels a random running job.
  std::atomic<int> next_job{0};
  constexpr int kCrashes = 20;
  for (int crash = 0; crash <= kCrashes; ++crash) {
    std::atomic<bool> stop{false};
    std::thread client([&, addr = server.addr(), churn_seed = rng()] {
      TestClient c(addr, token);
      std::mt19937_64 local(churn_seed);
      while (!stop) {
        if (c.post("/v1/jobs", job(next_job++)).status == 0) return;
        auto allocs = body(c.get("/v1/allocations").body)["allocations"];
        if (allocs.is_array() && allocs.size() > 4) {
          const auto victim = allocs[local() % allocs.size()]["job"].get<std::int64_t>();
          if (c.post("/v1/jobs/" + std::to_string(victim) + "/cancel", "").status == 0) return;
        }
        struct timespec ts {
          0, 20'000'000
        };
        nanosleep(&ts, nullptr);
      }
    });
    struct timespec ts {
      0, static_cast<long>(150'000'000 + rng() % 450'000'000)
    };
    nanosleep(&ts, nullptr);
    if (crash < kCrashes) server.kill9();
    stop = true;
    client.join();
    if (crash < kCrashes) {
      ASSERT_TRUE(server.start().ok()) << "restart " << crash;
    }
  }
  // Let accrual catch up past the last crash, then stop for good.
  const auto accrued = [&] {
    return body(server.admin().get("/v1/chargeback").body).value("accruedUntilMs", std::int64_t{0});
  };
  const std::int64_t target = accrued() + 3 * kPeriodMs;
  ASSERT_TRUE(eventually([&] { return accrued() >= target; }, std::chrono::seconds(30)))
      << "accrued until " << accrued() << ", wanted " << target << "; corrald's log:\n"
      << log_of(dir);
  server.stop();

  // The reconstruction reads the store directly.
  const std::string url = store_url.empty() ? (dir.path() / "corral.db").string() : store_url;
  auto opened = store::open_store(url);
  ASSERT_TRUE(opened.ok()) << opened.status().to_string();
  std::vector<store::NodeRow> nodes;
  std::vector<store::AllocationRow> allocs;
  std::vector<store::LedgerRow> entries;
  std::vector<store::LedgerSum> sums;
  core::Time until;
  ASSERT_TRUE((*opened)
                  ->read([&](store::Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(until, tx.ledger().accrued_until());
                    CORRAL_ASSIGN_OR_RETURN(nodes, tx.nodes().list_nodes());
                    CORRAL_ASSIGN_OR_RETURN(
                        allocs, tx.allocations().list_allocations_overlapping(core::Time{}, until));
                    const store::LedgerQuery all{.from = core::Time{}, .to = until};
                    CORRAL_ASSIGN_OR_RETURN(entries, tx.ledger().list_ledger(all));
                    CORRAL_ASSIGN_OR_RETURN(sums, tx.ledger().sum_ledger(all));
                    return core::Status();
                  })
                  .ok());
  ASSERT_FALSE(entries.empty());
  ASSERT_FALSE(allocs.empty());
  const std::int64_t end = core::to_ms(until);
  std::int64_t first = end;
  for (const auto& n : nodes)
    first = std::min(first, core::to_ms(n.created_at) / kPeriodMs * kPeriodMs);
  std::map<std::string, std::int64_t> joined;  // node -> registration ms
  for (const auto& n : nodes) joined[n.id.value] = core::to_ms(n.created_at);

  // 1. Per GPU and period: the period's length (from the node's registration), once each.
  std::map<std::tuple<std::string, int, std::int64_t>, std::int64_t> per_gpu_period;
  std::set<std::tuple<std::string, int, std::int64_t, std::string, std::int64_t>> seen;
  std::int64_t ms_total = 0, money_total = 0;
  for (const auto& e : entries) {
    const std::int64_t p = core::to_ms(e.period_start);
    per_gpu_period[{e.node.value, e.gpu_index, p}] += e.gpu_ms;
    EXPECT_TRUE(seen.insert({e.node.value, e.gpu_index, p, e.bucket, e.job.value}).second)
        << "entry twice: " << e.key;
    EXPECT_EQ(e.amount_micros, e.gpu_ms) << e.key;
    ms_total += e.gpu_ms;
    money_total += e.amount_micros;
  }
  for (const auto& [node, at] : joined) {
    for (int g = 0; g < 8; ++g) {
      for (std::int64_t p = first; p < end; p += kPeriodMs) {
        const std::int64_t want =
            std::clamp(p + kPeriodMs - std::max(p, at), std::int64_t{0}, kPeriodMs);
        const auto it = per_gpu_period.find({node, g, p});
        EXPECT_EQ(it == per_gpu_period.end() ? 0 : it->second, want)
            << node << "/" << g << " period " << p;
      }
    }
  }
  // 2. Each job's GPU-time on each GPU is its allocations' overlap with the window, a
  // GPU's allocations taken in the order the store made them (by id): one that was stamped
  // before the previous one's release starts at that release (server/billing/accrual_input.cc).
  std::map<std::tuple<std::string, int, std::int64_t>, std::int64_t> held, billed;
  std::sort(allocs.begin(), allocs.end(), [](const auto& a, const auto& b) {
    return std::tie(a.node.value, a.gpu_index, a.id) < std::tie(b.node.value, b.gpu_index, b.id);
  });
  std::map<std::pair<std::string, int>, std::int64_t> released;  // the GPU's last release
  for (const auto& a : allocs) {
    std::int64_t& last = released[{a.node.value, a.gpu_index}];
    const std::int64_t from = std::max({core::to_ms(a.created_at), first, last});
    if (a.released_at) last = std::max(last, core::to_ms(*a.released_at));
    const std::int64_t to = std::min(a.released_at ? core::to_ms(*a.released_at) : end, end);
    if (to > from) held[{a.node.value, a.gpu_index, a.job.value}] += to - from;
  }
  for (const auto& e : entries) {
    if (e.job.value != 0) billed[{e.node.value, e.gpu_index, e.job.value}] += e.gpu_ms;
  }
  EXPECT_EQ(billed.size(), held.size());
  int shown = 0;
  for (const auto& [k, ms] : held) {
    const auto it = billed.find(k);
    const std::int64_t got = it == billed.end() ? -1 : it->second;
    EXPECT_EQ(got, ms) << "job " << std::get<2>(k) << " on " << std::get<0>(k) << "/"
                       << std::get<1>(k) << " (-1: not billed)";
    if (got != ms && ++shown == 10) break;
  }
  for (const auto& [k, ms] : billed) {
    EXPECT_TRUE(held.count(k)) << "job " << std::get<2>(k) << " billed " << ms << " ms on "
                               << std::get<0>(k) << "/" << std::get<1>(k) << " it never held";
  }
  // 3. The daily sums chargeback reads are the entries.
  std::int64_t sum_ms = 0, sum_money = 0;
  for (const auto& s : sums) {
    sum_ms += s.gpu_ms;
    sum_money += s.amount_micros;
  }
  EXPECT_EQ(sum_ms, ms_total);
  EXPECT_EQ(sum_money, money_total);
  std::printf("ledger crash test: %zu entries over %lld periods, %zu allocations\n", entries.size(),
              static_cast<long long>((end - first) / kPeriodMs), allocs.size());
}

TEST(LedgerCrash, SqliteBillsEveryGpuMillisecondOnceThroughKill9) {
  TempDir dir;
  bill_through_crashes("", dir);
}

TEST(LedgerCrash, PostgresBillsEveryGpuMillisecondOnceThroughKill9) {
  auto url = fresh_postgres_database();
  if (!url.ok() && url.status().code() == core::StatusCode::kNotFound) {
    GTEST_SKIP() << url.status().message();
  }
  ASSERT_TRUE(url.ok()) << url.status().to_string();
  TempDir dir;
  bill_through_crashes(*url, dir);
}

}  // namespace
}  // namespace corral::testing
