// LedgerRepo over both stores: entries written once per key, daily sums that always equal
// the entries they sum (randomized), the watermark, GPU state spans, and the allocations a
// period overlaps.
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <tuple>

#include <gtest/gtest.h>

#include "store/store.h"
#include "testing/store_fixture.h"

namespace corral::store {
namespace {

using core::Status;
using core::StatusCode;
using core::time_from_ms;

constexpr std::int64_t kHour = 3'600'000;
constexpr std::int64_t kDay = 24 * kHour;

template <typename Factory>
class LedgerStore : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = factory_.open();
    if (!store.ok() && store.status().code() == StatusCode::kNotFound) {
      GTEST_SKIP() << store.status().message();
    }
    ASSERT_TRUE(store.ok()) << store.status().to_string();
    store_ = std::move(store).value();
  }

  Factory factory_;
  std::unique_ptr<Store> store_;
};

TYPED_TEST_SUITE(LedgerStore, corral::testing::Stores, corral::testing::StoreNames);

LedgerRow entry(const std::string& key, std::int64_t period_ms, const std::string& tenant,
                std::int64_t job, const std::string& bucket, std::int64_t gpu_ms,
                std::int64_t amount) {
  return {.key = key,
          .node = core::NodeId("n1"),
          .gpu_index = 0,
          .gpu_type = core::GpuTypeId("H100"),
          .bucket = bucket,
          .tenant = core::TenantId(tenant),
          .job = core::JobId(job),
          .period_start = time_from_ms(period_ms),
          .period_end = time_from_ms(period_ms + kHour),
          .gpu_ms = gpu_ms,
          .amount_micros = amount};
}

TYPED_TEST(LedgerStore, AnEntryIsWrittenOncePerKey) {
  const std::vector<LedgerRow> rows = {entry("a", 0, "nlp", 7, "used", 1000, 5),
                                       entry("b", 0, "", 0, "unallocated", 2000, 9)};
  std::int64_t first = 0, again = 0;
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(first, tx.ledger().append_ledger(rows));
                    return Status();
                  })
                  .ok());
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(again, tx.ledger().append_ledger(rows));
                    return Status();
                  })
                  .ok());
  EXPECT_EQ(first, 2);
  EXPECT_EQ(again, 0);
  ASSERT_TRUE(
      this->store_
          ->transact([&](Tx& tx) {
            CORRAL_ASSIGN_OR_RETURN(auto all, tx.ledger().list_ledger({.from = time_from_ms(0),
                                                                       .to = time_from_ms(kDay)}));
            EXPECT_EQ(all, rows);
            CORRAL_ASSIGN_OR_RETURN(auto nlp,
                                    tx.ledger().list_ledger({.from = time_from_ms(0),
                                                             .to = time_from_ms(kDay),
                                                             .tenant = core::TenantId("nlp")}));
            EXPECT_EQ(nlp.size(), 1u);
            // The second write added nothing to the daily sums either.
            CORRAL_ASSIGN_OR_RETURN(auto sums, tx.ledger().sum_ledger({.from = time_from_ms(0),
                                                                       .to = time_from_ms(kDay)}));
            EXPECT_EQ(sums.size(), 2u);
            for (const auto& s : sums) EXPECT_EQ(s.gpu_ms, s.job.value == 7 ? 1000 : 2000);
            return Status();
          })
          .ok());
}

// Daily sums over any window, whole days or cut ones, equal the entries they sum; entries
// are written in several transactions with repeats, as accrual retries would.
TYPED_TEST(LedgerStore, SumsEqualTheirEntriesOverAnyWindow) {
  std::mt19937_64 rng(20261202);
  std::vector<LedgerRow> written;
  std::map<std::string, LedgerRow> unique;
  for (int batch = 0; batch < 6; ++batch) {
    std::vector<LedgerRow> rows;
    for (int i = 0; i < 40; ++i) {
      const std::int64_t period = static_cast<std::int64_t>(rng() % (5 * 24)) * kHour;
      const std::string tenant = rng() % 2 ? "nlp" : "vision";
      const std::int64_t job = static_cast<std::int64_t>(rng() % 4);
      const std::string bucket = rng() % 3 ? "used" : "allocated_idle";
      const std::string key = std::to_string(period) + "/" + tenant + "/" + std::to_string(job) +
                              "/" + bucket + "/" + std::to_string(rng() % 3);
      rows.push_back(entry(key, period, tenant, job, bucket,
                           static_cast<std::int64_t>(rng() % kHour),
                           static_cast<std::int64_t>(rng() % 1'000'000)));
      unique.try_emplace(key, rows.back());
    }
    ASSERT_TRUE(
        this->store_->transact([&](Tx& tx) { return tx.ledger().append_ledger(rows).status(); })
            .ok());
  }
  for (int trial = 0; trial < 60; ++trial) {
    std::int64_t a = static_cast<std::int64_t>(rng() % (6 * kDay));
    std::int64_t b = static_cast<std::int64_t>(rng() % (6 * kDay));
    if (trial % 3 == 0) a -= a % kDay;  // day-aligned ends too
    if (trial % 4 == 0) b -= b % kDay;
    if (a > b) std::swap(a, b);
    const std::optional<core::TenantId> tenant =
        trial % 2 ? std::optional(core::TenantId("nlp")) : std::nullopt;
    std::map<std::tuple<std::int64_t, std::string, std::int64_t, std::string>,
             std::pair<std::int64_t, std::int64_t>>
        want;
    for (const auto& [key, e] : unique) {
      const std::int64_t p = core::to_ms(e.period_start);
      if (p < a || p >= b || (tenant && e.tenant != *tenant)) continue;
      auto& w = want[{p - p % kDay, e.tenant.value, e.job.value, e.bucket}];
      w.first += e.gpu_ms;
      w.second += e.amount_micros;
    }
    ASSERT_TRUE(this->store_
                    ->read([&](Tx& tx) {
                      CORRAL_ASSIGN_OR_RETURN(
                          auto sums,
                          tx.ledger().sum_ledger(
                              {.from = time_from_ms(a), .to = time_from_ms(b), .tenant = tenant}));
                      EXPECT_EQ(sums.size(), want.size()) << "window " << a << ".." << b;
                      for (const auto& s : sums) {
                        const auto it =
                            want.find({core::to_ms(s.day), s.tenant.value, s.job.value, s.bucket});
                        EXPECT_NE(it, want.end());
                        if (it == want.end()) continue;
                        EXPECT_EQ(s.gpu_ms, it->second.first);
                        EXPECT_EQ(s.amount_micros, it->second.second);
                      }
                      return Status();
                    })
                    .ok());
  }
}

TYPED_TEST(LedgerStore, KeepsTheWatermark) {
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(const core::Time none, tx.ledger().accrued_until());
                    EXPECT_EQ(core::to_ms(none), 0);
                    CORRAL_RETURN_IF_ERROR(tx.ledger().set_accrued_until(time_from_ms(kHour)));
                    CORRAL_RETURN_IF_ERROR(tx.ledger().set_accrued_until(time_from_ms(2 * kHour)));
                    CORRAL_RETURN_IF_ERROR(
                        tx.ledger().set_accrued_until(time_from_ms(kHour)));  // no
                    CORRAL_ASSIGN_OR_RETURN(const core::Time until, tx.ledger().accrued_until());
                    EXPECT_EQ(core::to_ms(until), 2 * kHour);
                    return Status();
                  })
                  .ok());
}

TYPED_TEST(LedgerStore, GpuStateSpansOpenOnceAndClose) {
  const core::NodeId n1("n1");
  ASSERT_TRUE(
      this->store_
          ->transact([&](Tx& tx) {
            CORRAL_RETURN_IF_ERROR(tx.ledger().open_gpu_state({.node = n1,
                                                               .gpu_index = 3,
                                                               .kind = "unhealthy",
                                                               .reason = "XID 79",
                                                               .start = time_from_ms(100)}));
            // Still unhealthy at the next report: the open span stands.
            CORRAL_RETURN_IF_ERROR(tx.ledger().open_gpu_state({.node = n1,
                                                               .gpu_index = 3,
                                                               .kind = "unhealthy",
                                                               .reason = "XID 79",
                                                               .start = time_from_ms(200)}));
            CORRAL_RETURN_IF_ERROR(tx.ledger().open_gpu_state({.node = n1,
                                                               .gpu_index = -1,
                                                               .kind = "drained",
                                                               .reason = "drain by admin",
                                                               .start = time_from_ms(150)}));
            CORRAL_RETURN_IF_ERROR(
                tx.ledger().close_gpu_state(n1, 3, "unhealthy", time_from_ms(500)));
            CORRAL_RETURN_IF_ERROR(
                tx.ledger().close_gpu_state(n1, 3, "unhealthy", time_from_ms(900)));
            return Status();
          })
          .ok());
  ASSERT_TRUE(this->store_
                  ->read([&](Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(auto spans, tx.ledger().list_gpu_states(
                                                            time_from_ms(0), time_from_ms(1000)));
                    EXPECT_EQ(spans.size(), 2u);
                    if (spans.size() == 2) {
                      EXPECT_EQ(spans[0].gpu_index, -1);
                      EXPECT_FALSE(spans[0].end.has_value());
                      EXPECT_EQ(spans[1].start, time_from_ms(100));
                      EXPECT_EQ(spans[1].end, time_from_ms(500));
                    }
                    // A window after the GPU recovered sees only the open drain.
                    CORRAL_ASSIGN_OR_RETURN(auto later, tx.ledger().list_gpu_states(
                                                            time_from_ms(500), time_from_ms(1000)));
                    EXPECT_EQ(later.size(), 1u);
                    return Status();
                  })
                  .ok());
}

TYPED_TEST(LedgerStore, ListsTheAllocationsAPeriodOverlaps) {
  ASSERT_TRUE(
      this->store_
          ->transact([&](Tx& tx) {
            for (int gpu = 0; gpu < 3; ++gpu) {
              CORRAL_RETURN_IF_ERROR(tx.allocations().insert_allocation(
                  {.job = core::JobId(gpu + 1),
                   .attempt = 1,
                   .node = core::NodeId("n1"),
                   .gpu_index = gpu,
                   .gpu_type = core::GpuTypeId("H100"),
                   .created_at = time_from_ms(100 * (gpu + 1))}));
            }
            // Job 1 released at 250: it overlaps [200, 300) but not [300, 400).
            return tx.allocations().release_allocations(core::JobId(1), time_from_ms(250)).status();
          })
          .ok());
  ASSERT_TRUE(this->store_
                  ->read([&](Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(auto a, tx.allocations().list_allocations_overlapping(
                                                        time_from_ms(200), time_from_ms(300)));
                    EXPECT_EQ(a.size(), 2u);  // job 1 (until 250) and job 2 (from 200)
                    CORRAL_ASSIGN_OR_RETURN(auto b, tx.allocations().list_allocations_overlapping(
                                                        time_from_ms(300), time_from_ms(400)));
                    EXPECT_EQ(b.size(), 2u);  // jobs 2 and 3
                    CORRAL_ASSIGN_OR_RETURN(auto c, tx.allocations().list_allocations_overlapping(
                                                        time_from_ms(0), time_from_ms(100)));
                    EXPECT_TRUE(c.empty());
                    return Status();
                  })
                  .ok());
}

}  // namespace
}  // namespace corral::store
