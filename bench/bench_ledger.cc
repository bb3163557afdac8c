// The ledger at fleet scale, on a fresh SQLite store (or PostgreSQL with --store):
//   1. accrual of one period of a fleet of --gpus GPUs, every one held (read the period's
//      facts from the store, accrue, write the entries and the watermark): seconds;
//   2. --days days of ledger entries written period by period as the controller writes
//      them (--entries-per-gpu-hour on average: a GPU held by one job all hour is one
//      entry, a hold that ends mid-hour two or three); entries per second;
//   3. a chargeback over the whole window, by tenant and by job, from the daily sums and
//      the cut days' entries: the median of 5 runs;
//   4. the store's size per GPU-day.
// Usage: bench_ledger --dir DIR [--store postgresql://...] [--gpus 10000] [--days 30]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "server/base/model_json.h"
#include "server/billing/accrual_controller.h"
#include "server/billing/chargeback.h"
#include "store/store.h"

namespace corral {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::int64_t kHourMs = 3'600'000;
constexpr std::int64_t kT0 = 1'780'099'200'000;  // a midnight UTC

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

void check(const core::Status& s, const char* what) {
  if (s.ok()) return;
  std::fprintf(stderr, "bench_ledger: %s: %s\n", what, s.to_string().c_str());
  std::exit(1);
}

int run(const std::string& dir, const std::string& url, int gpus, int days, double per_gpu_hour) {
  std::filesystem::create_directories(dir);
  const std::string path = url.empty() ? dir + "/ledger.db" : url;
  if (url.empty()) std::filesystem::remove(path);
  auto opened = store::open_store(path);
  check(opened.status(), "open");
  store::Store& db = **opened;
  const int nodes = gpus / 8;
  const int tenants = 100;

  // 1. One period of a fully held fleet: nodes, jobs of 8 GPUs, their allocations.
  check(db.transact([&](store::Tx& tx) {
    for (int n = 0; n < nodes; ++n) {
      core::Node node{.id = core::NodeId("n" + std::to_string(n))};
      for (int g = 0; g < 8; ++g) {
        node.gpus.push_back({.index = g, .type = core::GpuTypeId("H100")});
      }
      CORRAL_RETURN_IF_ERROR(tx.nodes().upsert_node({.id = node.id,
                                                     .spec_json = server::node_to_json(node),
                                                     .created_at = core::time_from_ms(kT0),
                                                     .updated_at = core::time_from_ms(kT0)}));
      CORRAL_ASSIGN_OR_RETURN(
          auto job,
          tx.jobs().insert_job({.tenant = core::TenantId("t" + std::to_string(n % tenants)),
                                .name = "train",
                                .priority_class = "standard",
                                .gpus = 8,
                                .spec_json = "{}",
                                .now = core::time_from_ms(kT0)}));
      for (int g = 0; g < 8; ++g) {
        CORRAL_RETURN_IF_ERROR(
            tx.allocations().insert_allocation({.job = job.id,
                                                .attempt = 1,
                                                .node = node.id,
                                                .gpu_index = g,
                                                .gpu_type = core::GpuTypeId("H100"),
                                                .created_at = core::time_from_ms(kT0)}));
      }
      CORRAL_RETURN_IF_ERROR(tx.records().append_job_event(
          {.job = job.id, .time = core::time_from_ms(kT0 + 60'000), .kind = "started"}));
    }
    return core::Status();
  }),
        "fleet");
  server::BillingSettings billing;
  billing.prices.set_price(core::GpuTypeId("H100"), "*", 2'500'000);
  server::SpecCache specs;
  std::vector<double> accrual_s;
  for (int h = 0; h < 3; ++h) {
    const auto t = Clock::now();
    std::vector<store::LedgerRow> rows;
    check(db.read([&](store::Tx& tx) {
      const core::Time start = core::time_from_ms(kT0 + h * kHourMs);
      CORRAL_ASSIGN_OR_RETURN(
          auto entries, server::accrue_period(tx, specs, billing,
                                              {.start = start, .end = start + billing.period}));
      for (const auto& e : entries) rows.push_back(server::ledger_row(e));
      return core::Status();
    }),
          "accrue");
    check(db.transact([&](store::Tx& tx) { return tx.ledger().append_ledger(rows).status(); }),
          "append");
    accrual_s.push_back(seconds_since(t));
  }
  std::sort(accrual_s.begin(), accrual_s.end());
  std::printf("accrual of one hour of %d held GPUs (read, accrue, write): median %.2f s\n", gpus,
              accrual_s[1]);

  // 2. The rest of --days of entries, period by period.
  std::mt19937_64 rng(7);
  std::int64_t written = 0;
  const auto write_start = Clock::now();
  for (std::int64_t h = 3; h < days * 24; ++h) {
    std::vector<store::LedgerRow> rows;
    rows.reserve(static_cast<std::size_t>(gpus * per_gpu_hour) + 16);
    const core::Time start = core::time_from_ms(kT0 + h * kHourMs);
    for (int g = 0; g < gpus; ++g) {
      // Most GPU-hours are one job's; some are split between a job and free time.
      const bool split = std::uniform_real_distribution<>(0, 1)(rng) < per_gpu_hour - 1;
      const std::int64_t job = 1 + (g / 8 + h / 6 * 131) % (nodes * 4);
      const std::string node = "n" + std::to_string(g / 8);
      const auto row = [&](const std::string& bucket, std::int64_t job_id, std::int64_t ms) {
        const std::string tenant = job_id == 0 ? "" : "t" + std::to_string(job_id % tenants);
        rows.push_back({.key = node + "/" + std::to_string(g % 8) + "/" +
                               std::to_string(core::to_ms(start)) + "/" + bucket + "/" +
                               std::to_string(job_id) + "/" + tenant,
                        .node = core::NodeId(node),
                        .gpu_index = g % 8,
                        .gpu_type = core::GpuTypeId("H100"),
                        .bucket = bucket,
                        .tenant = core::TenantId(tenant),
                        .job = core::JobId(job_id),
                        .period_start = start,
                        .period_end = start + billing.period,
                        .gpu_ms = ms,
                        .amount_micros = ms * 2'500'000 / kHourMs});
      };
      if (split) {
        row("used", job, kHourMs / 3);
        row("unallocated", 0, kHourMs - kHourMs / 3);
      } else {
        row("used", job, kHourMs);
      }
    }
    check(db.transact([&](store::Tx& tx) {
      CORRAL_RETURN_IF_ERROR(tx.ledger().append_ledger(rows).status());
      return tx.ledger().set_accrued_until(start + billing.period);
    }),
          "write");
    written += static_cast<std::int64_t>(rows.size());
  }
  const double write_s = seconds_since(write_start);
  std::printf(
      "wrote %lld entries (%d days of %d GPUs) in %.0f s: %.0f entries/s, %.1f s per "
      "hour of the fleet\n",
      static_cast<long long>(written), days, gpus, write_s, written / write_s,
      write_s / (days * 24 - 3));

  // 3. Chargeback over the window, cut at both ends (an hour in, an hour short).
  for (const server::GroupBy by : {server::GroupBy::kTenant, server::GroupBy::kJob}) {
    std::vector<double> query_s;
    std::size_t rows_out = 0;
    for (int i = 0; i < 5; ++i) {
      const auto t = Clock::now();
      check(db.read([&](store::Tx& tx) {
        CORRAL_ASSIGN_OR_RETURN(
            auto sums,
            tx.ledger().sum_ledger({.from = core::time_from_ms(kT0 + kHourMs),
                                    .to = core::time_from_ms(kT0 + (days * 24 - 1) * kHourMs)}));
        const auto report = server::build_chargeback(sums, by, ledger::Attribution::kProportional,
                                                     {}, core::seconds(days * 86400));
        rows_out = report.rows.size();
        return core::Status();
      }),
            "chargeback");
      query_s.push_back(seconds_since(t));
    }
    std::sort(query_s.begin(), query_s.end());
    std::printf("chargeback of %d days by %s (%zu rows): median %.3f s (min %.3f, max %.3f)\n",
                days, std::string(server::to_string(by)).c_str(), rows_out, query_s[2], query_s[0],
                query_s[4]);
  }

  // 4. Size.
  if (url.empty()) {
    std::error_code ec;
    std::uint64_t bytes = std::filesystem::file_size(path, ec);
    const std::string wal = path + "-wal";
    if (std::filesystem::exists(wal)) bytes += std::filesystem::file_size(wal, ec);
    std::printf("store: %.1f GiB, %.0f bytes per GPU-day (%.1f entries per GPU-day)\n",
                bytes / (1024.0 * 1024 * 1024), static_cast<double>(bytes) / (gpus * days),
                static_cast<double>(written) / (static_cast<double>(gpus) * days));
  }
  return 0;
}

}  // namespace
}  // namespace corral

int main(int argc, char** argv) {
  CLI::App app("bench_ledger: accrual, ledger writes and chargeback at fleet scale");
  std::string dir, url;
  int gpus = 10000, days = 30;
  double per_gpu_hour = 1.5;
  app.add_option("--dir", dir, "where the SQLite file goes")->required();
  app.add_option("--store", url, "a PostgreSQL URL instead");
  app.add_option("--gpus", gpus)->check(CLI::Range(8, 100000));
  app.add_option("--days", days)->check(CLI::Range(1, 400));
  app.add_option("--entries-per-gpu-hour", per_gpu_hour)->check(CLI::Range(1.0, 2.0));
  CLI11_PARSE(app, argc, argv);
  return corral::run(dir, url, gpus, days, per_gpu_hour);
}
