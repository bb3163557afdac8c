// The accrual controller over a real store (SQLite and PostgreSQL) on a manual clock: what
// the store records of a period (allocations, job events, checkpoints, GPU state spans,
// node reservations) becomes the buckets docs/ledger.md describes; a period waits out its
// grace; accruing again, or from two controllers at once, writes nothing twice.
#include "server/billing/accrual_controller.h"

#include <cmath>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "core/clock.h"
#include "server/base/model_json.h"
#include "testing/store_fixture.h"

namespace corral::server {
namespace {

using core::Status;
using core::time_from_ms;

constexpr std::int64_t kT0 = 1'780'002'000'000;  // a multiple of a minute
constexpr std::int64_t kMin = 60'000;
core::Time at_t0(std::int64_t offset_ms) { return time_from_ms(kT0 + offset_ms); }

BillingSettings one_minute_periods() {
  BillingSettings b;
  b.period = core::seconds(60);
  b.grace = core::seconds(10);
  b.prices.set_price(core::GpuTypeId("H100"), "*", 3'600'000);  // a micro-dollar a ms
  return b;
}

template <typename Factory>
class AccrualControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = factory_.open();
    if (!store.ok() && store.status().code() == core::StatusCode::kNotFound) {
      GTEST_SKIP() << store.status().message();
    }
    ASSERT_TRUE(store.ok()) << store.status().to_string();
    store_ = std::move(store).value();
  }

  // n1 (2 GPUs) registered at kT0, n2 (1 GPU) half a minute later.
  Status fleet(store::Tx& tx) {
    for (const auto& [name, gpus, joined] :
         {std::tuple{"n1", 2, kT0}, std::tuple{"n2", 1, kT0 + 30'000}}) {
      core::Node node{.id = core::NodeId(name)};
      for (int g = 0; g < gpus; ++g)
        node.gpus.push_back({.index = g, .type = core::GpuTypeId("H100")});
      CORRAL_RETURN_IF_ERROR(tx.nodes().upsert_node({.id = node.id,
                                                     .spec_json = node_to_json(node),
                                                     .created_at = time_from_ms(joined),
                                                     .updated_at = time_from_ms(joined)}));
    }
    return Status();
  }

  // The next job (ids from 1), of `tenant`, one GPU, queued at kT0.
  Status add_job(store::Tx& tx, const char* tenant = "nlp") {
    return tx.jobs()
        .insert_job({.tenant = core::TenantId(tenant),
                     .name = "train",
                     .priority_class = "standard",
                     .gpus = 1,
                     .spec_json = R"({"name":"train"})",
                     .now = at_t0(0)})
        .status();
  }

  // Job `job` placed on n1/0 at `when` (its share: `milli`, 0 for the whole GPU), its
  // workers started at `started`.
  Status place(store::Tx& tx, int job, std::int64_t when, std::int64_t started,
               std::int32_t milli = 0) {
    CORRAL_RETURN_IF_ERROR(tx.allocations().insert_allocation({.job = core::JobId(job),
                                                               .attempt = 1,
                                                               .node = core::NodeId("n1"),
                                                               .gpu_index = 0,
                                                               .gpu_type = core::GpuTypeId("H100"),
                                                               .created_at = at_t0(when),
                                                               .share_milli = milli}));
    return tx.records().append_job_event(
        {.job = core::JobId(job), .time = at_t0(started), .kind = "started"});
  }

  // Accrues minute 0 once its grace has passed, as the controller does.
  void accrue_minute_zero() {
    AccrualController controller(*store_, clock_, specs_, one_minute_periods());
    clock_.set(at_t0(kMin + 10'000));
    auto r = controller.accrue_due();
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_EQ(r->periods, 1);
  }

  std::map<std::string, std::int64_t> buckets(std::int64_t period, const std::string& node,
                                              int gpu) {
    std::map<std::string, std::int64_t> out;
    EXPECT_TRUE(store_
                    ->read([&](store::Tx& tx) {
                      CORRAL_ASSIGN_OR_RETURN(
                          auto rows, tx.ledger().list_ledger(
                                         {.from = at_t0(period), .to = at_t0(period + 1)}));
                      for (const auto& r : rows) {
                        if (r.node.value == node && r.gpu_index == gpu) out[r.bucket] += r.gpu_ms;
                      }
                      return Status();
                    })
                    .ok());
    return out;
  }

  Factory factory_;
  std::unique_ptr<store::Store> store_;
  core::ManualClock clock_{at_t0(0)};
  SpecCache specs_;
};

TYPED_TEST_SUITE(AccrualControllerTest, corral::testing::Stores, corral::testing::StoreNames);

// Minute 0: job 1 (tenant nlp) is placed on n1/0 at 0:00, starts at 0:05, checkpoints at
// 0:30, is asked to stop (preempted) at 0:40 and releases at 0:50. n1/1 is unhealthy from
// 0:10 to 0:20 and n1 is drained from 0:45 on. n2 joins at 0:30 and is reserved by cv.
// Minute 1: job 2 holds n1/1 from 1:00 on; n1/0 stays drained.
TYPED_TEST(AccrualControllerTest, TheStoresFactsBecomeTheBuckets) {
  ASSERT_TRUE(
      this->store_
          ->transact([&](store::Tx& tx) {
            CORRAL_RETURN_IF_ERROR(this->fleet(tx));
            CORRAL_RETURN_IF_ERROR(this->add_job(tx, "nlp"));
            CORRAL_RETURN_IF_ERROR(this->add_job(tx, "vision"));
            const core::JobId one(1), two(2);
            CORRAL_RETURN_IF_ERROR(
                tx.allocations().insert_allocation({.job = one,
                                                    .attempt = 1,
                                                    .node = core::NodeId("n1"),
                                                    .gpu_index = 0,
                                                    .gpu_type = core::GpuTypeId("H100"),
                                                    .created_at = at_t0(0)}));
            for (const auto& [t, kind] :
                 {std::pair{5'000, "started"}, std::pair{40'000, "preempted"}}) {
              CORRAL_RETURN_IF_ERROR(
                  tx.records().append_job_event({.job = one, .time = at_t0(t), .kind = kind}));
            }
            CORRAL_RETURN_IF_ERROR(tx.checkpoints().insert_checkpoint(
                {.job = one, .attempt = 1, .step = 10, .uri = "file:///c", .time = at_t0(30'000)}));
            CORRAL_RETURN_IF_ERROR(
                tx.allocations().release_allocations(one, at_t0(50'000)).status());
            CORRAL_RETURN_IF_ERROR(tx.ledger().open_gpu_state({.node = core::NodeId("n1"),
                                                               .gpu_index = 1,
                                                               .kind = "unhealthy",
                                                               .start = at_t0(10'000)}));
            CORRAL_RETURN_IF_ERROR(
                tx.ledger().close_gpu_state(core::NodeId("n1"), 1, "unhealthy", at_t0(20'000)));
            CORRAL_RETURN_IF_ERROR(tx.ledger().open_gpu_state({.node = core::NodeId("n1"),
                                                               .gpu_index = -1,
                                                               .kind = "drained",
                                                               .start = at_t0(45'000)}));
            CORRAL_RETURN_IF_ERROR(tx.tenants().insert_reservation(
                {.id = core::ReservationId("r1"),
                 .tenant = core::TenantId("cv"),
                 .spec_json = reservation_to_json({.id = core::ReservationId("r1"),
                                                   .tenant = core::TenantId("cv"),
                                                   .nodes = {core::NodeId("n2")},
                                                   .start = at_t0(0),
                                                   .end = at_t0(10 * kMin)}),
                 .created_at = at_t0(0)}));
            CORRAL_RETURN_IF_ERROR(
                tx.allocations().insert_allocation({.job = two,
                                                    .attempt = 1,
                                                    .node = core::NodeId("n1"),
                                                    .gpu_index = 1,
                                                    .gpu_type = core::GpuTypeId("H100"),
                                                    .created_at = at_t0(kMin)}));
            return tx.records().append_job_event(
                {.job = two, .time = at_t0(kMin), .kind = "started"});
          })
          .ok());
  // A node reservation reads back as it was stored (it once did not: a count of 0 beside
  // nodes was refused, and the scheduler and the ledger both dropped it).
  const core::Reservation reservation{.id = core::ReservationId("r1"),
                                      .tenant = core::TenantId("cv"),
                                      .nodes = {core::NodeId("n2")},
                                      .start = at_t0(0),
                                      .end = at_t0(10 * kMin)};
  const auto back = reservation_from_json(reservation_to_json(reservation));
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(*back, reservation);
  AccrualController controller(*this->store_, this->clock_, this->specs_, one_minute_periods());
  // Minute 0 ends at 1:00; its grace (10 s) runs to 1:10.
  this->clock_.set(at_t0(kMin + 9'000));
  auto r = controller.accrue_due();
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->periods, 0);
  this->clock_.set(at_t0(2 * kMin + 10'000));
  r = controller.accrue_due();
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->periods, 2);
  EXPECT_EQ(r->accrued_until, at_t0(2 * kMin));

  using B = std::map<std::string, std::int64_t>;
  // n1/0: 0:00-0:05 start-up, 0:05-0:30 used, 0:30-0:40 lost after the checkpoint,
  // 0:40-0:50 stopping, 0:50-1:00 free on a drained node.
  EXPECT_EQ(this->buckets(0, "n1", 0), (B{{"restart_overhead", 5'000 + 10'000},
                                          {"used", 25'000},
                                          {"preemption_lost", 10'000},
                                          {"drained", 10'000}}));
  EXPECT_EQ(this->buckets(0, "n1", 1),
            (B{{"unallocated", 35'000}, {"unhealthy", 10'000}, {"drained", 15'000}}));
  // n2 joined at 0:30: billed from then, reserved for cv.
  EXPECT_EQ(this->buckets(0, "n2", 0), (B{{"reserved_idle", 30'000}}));
  EXPECT_EQ(this->buckets(kMin, "n1", 0), (B{{"drained", kMin}}));
  EXPECT_EQ(this->buckets(kMin, "n1", 1), (B{{"used", kMin}}));  // held on a drained node
  EXPECT_EQ(this->buckets(kMin, "n2", 0), (B{{"reserved_idle", kMin}}));

  // Again: nothing due, nothing written; a second controller on the same store agrees.
  r = controller.accrue_due();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->periods, 0);
  EXPECT_EQ(r->entries, 0);
}

// Telemetry's 1-minute rollups are accrual's utilization samples: job 1 holds n1/0 from
// 0:00 and its GPU is busy in minute 0 and idle in minute 1 (averages 0.9 and 0.01), so
// minute 0 is used and minute 1 allocated_idle. n1/1's idle samples bill nothing to
// anyone (it is free), and n2/0, held without any sample, stays used.
TYPED_TEST(AccrualControllerTest, TelemetryRollupsMakeAnIdleHoldAllocatedIdle) {
  ASSERT_TRUE(
      this->store_
          ->transact([&](store::Tx& tx) {
            CORRAL_RETURN_IF_ERROR(this->fleet(tx));
            CORRAL_RETURN_IF_ERROR(this->add_job(tx));
            CORRAL_RETURN_IF_ERROR(this->add_job(tx));
            for (const auto& [job, node, start] :
                 {std::tuple{1, "n1", std::int64_t{0}}, std::tuple{2, "n2", kMin}}) {
              CORRAL_RETURN_IF_ERROR(
                  tx.allocations().insert_allocation({.job = core::JobId(job),
                                                      .attempt = 1,
                                                      .node = core::NodeId(node),
                                                      .gpu_index = 0,
                                                      .gpu_type = core::GpuTypeId("H100"),
                                                      .created_at = at_t0(start)}));
              CORRAL_RETURN_IF_ERROR(tx.records().append_job_event(
                  {.job = core::JobId(job), .time = at_t0(start), .kind = "started"}));
            }
            std::vector<store::TelemetryRow> rows;
            for (const auto& [gpu, t, util] :
                 std::vector<std::tuple<int, std::int64_t, double>>{{0, 10'000, 0.9},
                                                                    {0, 40'000, 0.9},
                                                                    {0, kMin + 10'000, 0.0},
                                                                    {0, kMin + 30'000, 0.02},
                                                                    {1, 10'000, 0.0},
                                                                    {1, kMin + 10'000, 0.0}}) {
              rows.push_back({.node = core::NodeId("n1"),
                              .gpu_index = gpu,
                              .time = at_t0(t),
                              .utilization = util});
            }
            return tx.records().insert_telemetry_batch(rows);
          })
          .ok());
  AccrualController controller(*this->store_, this->clock_, this->specs_, one_minute_periods());
  this->clock_.set(at_t0(2 * kMin + 10'000));
  auto r = controller.accrue_due();
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->periods, 2);
  using B = std::map<std::string, std::int64_t>;
  EXPECT_EQ(this->buckets(0, "n1", 0), (B{{"used", kMin}}));
  EXPECT_EQ(this->buckets(kMin, "n1", 0), (B{{"allocated_idle", kMin}}));
  EXPECT_EQ(this->buckets(0, "n1", 1), (B{{"unallocated", kMin}}));
  EXPECT_EQ(this->buckets(kMin, "n1", 1), (B{{"unallocated", kMin}}));
  EXPECT_EQ(this->buckets(kMin, "n2", 0), (B{{"used", kMin}}));
}

// A placement stamped 5 ms before the release of the GPU's previous holder (the cancel's
// transaction took its time after the scheduler cycle's, and committed first) is no second
// holder at once: job 2 holds n1/0 from job 1's release on, and accrual goes on.
TYPED_TEST(AccrualControllerTest, APlacementStampedBeforeTheLastReleaseStartsAtIt) {
  ASSERT_TRUE(
      this->store_
          ->transact([&](store::Tx& tx) {
            CORRAL_RETURN_IF_ERROR(this->fleet(tx));
            CORRAL_RETURN_IF_ERROR(this->add_job(tx));
            CORRAL_RETURN_IF_ERROR(this->add_job(tx));
            CORRAL_RETURN_IF_ERROR(this->place(tx, 1, 0, 0));
            CORRAL_RETURN_IF_ERROR(
                tx.allocations().release_allocations(core::JobId(1), at_t0(30'000)).status());
            return this->place(tx, 2, 29'995, 30'500);
          })
          .ok());
  this->accrue_minute_zero();
  using B = std::map<std::string, std::int64_t>;
  // Job 1: 30 s used; job 2: start-up from 0:30.000 to 0:30.500, then used.
  EXPECT_EQ(this->buckets(0, "n1", 0), (B{{"used", 30'000 + 29'500}, {"restart_overhead", 500}}));
}

// Shares of a GPU are billed their share of its time: job 1 holds half of n1/0 and job 2 a
// quarter from 0:00; job 1 releases at 0:30, and job 3's half, stamped 5 ms before that
// release, starts when the room is free. Each share's part is used, the part no share
// holds is unallocated, and the GPU's minute adds up.
TYPED_TEST(AccrualControllerTest, SharesAreBilledTheirShareAndAPlacementWaitsForRoom) {
  ASSERT_TRUE(
      this->store_
          ->transact([&](store::Tx& tx) {
            CORRAL_RETURN_IF_ERROR(this->fleet(tx));
            for (int i = 0; i < 3; ++i) CORRAL_RETURN_IF_ERROR(this->add_job(tx));
            CORRAL_RETURN_IF_ERROR(this->place(tx, 1, 0, 0, 500));
            CORRAL_RETURN_IF_ERROR(this->place(tx, 2, 0, 0, 250));
            CORRAL_RETURN_IF_ERROR(
                tx.allocations().release_allocations(core::JobId(1), at_t0(30'000)).status());
            return this->place(tx, 3, 29'995, 30'000, 500);
          })
          .ok());
  this->accrue_minute_zero();
  using B = std::map<std::string, std::int64_t>;
  // Job 1: 15 s (half of 30 s); job 2: 15 s (a quarter of 60 s); job 3: 15 s (half of the
  // last 30 s, from job 1's release on, when its workers started). Free: a
  // quarter of the first half minute and a quarter of the second.
  EXPECT_EQ(this->buckets(0, "n1", 0), (B{{"used", 45'000}, {"unallocated", 15'000}}));
}

// Work lost in periods already accrued is billed as lost (issue 38, item 11): job 1 holds
// n1/0 from 0:00, starts at 0:05 and checkpoints at 0:30; minutes 0 and 1 are accrued while
// it runs (as used). A rank fails at 2:20 and the hold ends: what it did after 0:30 is
// lost, and accruing minute 2 adds adjustments that move it out of used in minutes 0 and 1.
// Every GPU's time in every period still adds up, and the tenant's money is unchanged.
TYPED_TEST(AccrualControllerTest, WorkLostInAccruedPeriodsIsMovedToLost) {
  const core::JobId one(1);
  ASSERT_TRUE(
      this->store_
          ->transact([&](store::Tx& tx) {
            CORRAL_RETURN_IF_ERROR(this->fleet(tx));
            CORRAL_RETURN_IF_ERROR(this->add_job(tx, "nlp"));
            CORRAL_RETURN_IF_ERROR(
                tx.allocations().insert_allocation({.job = one,
                                                    .attempt = 1,
                                                    .node = core::NodeId("n1"),
                                                    .gpu_index = 0,
                                                    .gpu_type = core::GpuTypeId("H100"),
                                                    .created_at = at_t0(0)}));
            CORRAL_RETURN_IF_ERROR(tx.records().append_job_event(
                {.job = one, .time = at_t0(5'000), .kind = "started"}));
            return tx.checkpoints().insert_checkpoint(
                {.job = one, .attempt = 1, .step = 10, .uri = "file:///c", .time = at_t0(30'000)});
          })
          .ok());
  AccrualController controller(*this->store_, this->clock_, this->specs_, one_minute_periods());
  this->clock_.set(at_t0(2 * kMin + 10'000));
  auto r = controller.accrue_due();
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->periods, 2);
  using B = std::map<std::string, std::int64_t>;
  ASSERT_EQ(this->buckets(0, "n1", 0), (B{{"restart_overhead", 5'000}, {"used", 55'000}}));
  ASSERT_EQ(this->buckets(kMin, "n1", 0), (B{{"used", kMin}}));
  const auto nlp_money = [&](std::int64_t period) {
    std::int64_t micros = 0;
    EXPECT_TRUE(this->store_
                    ->read([&](store::Tx& tx) {
                      CORRAL_ASSIGN_OR_RETURN(
                          auto rows, tx.ledger().list_ledger({.from = at_t0(period),
                                                              .to = at_t0(period + 1),
                                                              .tenant = core::TenantId("nlp")}));
                      for (const auto& row : rows) micros += row.amount_micros;
                      return Status();
                    })
                    .ok());
    return micros;
  };
  const std::int64_t billed0 = nlp_money(0), billed1 = nlp_money(kMin);

  ASSERT_TRUE(
      this->store_
          ->transact([&](store::Tx& tx) {
            CORRAL_RETURN_IF_ERROR(tx.records().append_job_event(
                {.job = one, .time = at_t0(2 * kMin + 20'000), .kind = "rank failed"}));
            return tx.allocations().release_allocations(one, at_t0(2 * kMin + 20'000)).status();
          })
          .ok());
  this->clock_.set(at_t0(3 * kMin + 10'000));
  r = controller.accrue_due();
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->periods, 1);
  EXPECT_EQ(this->buckets(0, "n1", 0),
            (B{{"restart_overhead", 5'000}, {"used", 25'000}, {"preemption_lost", 30'000}}));
  EXPECT_EQ(this->buckets(kMin, "n1", 0), (B{{"used", 0}, {"preemption_lost", kMin}}));
  EXPECT_EQ(this->buckets(2 * kMin, "n1", 0),
            (B{{"preemption_lost", 20'000}, {"unallocated", 40'000}}));
  // Conservation: each GPU's entries, adjustments included, add up to its time in the
  // period (n2 joined at 0:30).
  for (std::int64_t period : {std::int64_t{0}, kMin, 2 * kMin}) {
    for (const auto& [node, gpu] : {std::pair{"n1", 0}, std::pair{"n1", 1}, std::pair{"n2", 0}}) {
      std::int64_t ms = 0;
      for (const auto& [bucket, v] : this->buckets(period, node, gpu)) ms += v;
      EXPECT_EQ(ms, period == 0 && std::string(node) == "n2" ? 30'000 : kMin)
          << node << "/" << gpu << " in minute " << period / kMin;
    }
  }
  EXPECT_EQ(nlp_money(0), billed0);
  EXPECT_EQ(nlp_money(kMin), billed1);
  // Nothing is due again, and nothing is written twice.
  r = controller.accrue_due();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->entries, 0);
}

TYPED_TEST(AccrualControllerTest, TwoControllersAtOnceWriteEachEntryOnce) {
  ASSERT_TRUE(this->store_
                  ->transact([&](store::Tx& tx) {
                    CORRAL_RETURN_IF_ERROR(this->fleet(tx));
                    CORRAL_RETURN_IF_ERROR(this->add_job(tx));
                    return tx.allocations().insert_allocation({.job = core::JobId(1),
                                                               .attempt = 1,
                                                               .node = core::NodeId("n1"),
                                                               .gpu_index = 0,
                                                               .gpu_type = core::GpuTypeId("H100"),
                                                               .created_at = at_t0(0)});
                  })
                  .ok());
  this->clock_.set(at_t0(30 * kMin + 10'000));
  // Each counts, for /metrics, only what it inserted.
  LedgerCounters counted_a, counted_b;
  AccrualController a(*this->store_, this->clock_, this->specs_, one_minute_periods(), &counted_a);
  AccrualController b(*this->store_, this->clock_, this->specs_, one_minute_periods(), &counted_b);
  std::int64_t written[2] = {0, 0};
  std::thread ta([&] {
    auto r = a.accrue_due(100);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    written[0] = r->entries;
  });
  std::thread tb([&] {
    auto r = b.accrue_due(100);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    written[1] = r->entries;
  });
  ta.join();
  tb.join();
  std::vector<store::LedgerRow> rows;
  ASSERT_TRUE(this->store_
                  ->read([&](store::Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(
                        rows, tx.ledger().list_ledger({.from = at_t0(0), .to = at_t0(60 * kMin)}));
                    CORRAL_ASSIGN_OR_RETURN(auto until, tx.ledger().accrued_until());
                    EXPECT_EQ(until, at_t0(30 * kMin));
                    return Status();
                  })
                  .ok());
  EXPECT_EQ(static_cast<std::int64_t>(rows.size()), written[0] + written[1]);
  // 30 minutes: n1 has 2 GPUs (one held, one free), n2 one from its 30 s on.
  std::map<std::pair<std::string, int>, std::int64_t> per_gpu;
  for (const auto& row : rows) per_gpu[{row.node.value, row.gpu_index}] += row.gpu_ms;
  EXPECT_EQ((per_gpu[{"n1", 0}]), 30 * kMin);
  EXPECT_EQ((per_gpu[{"n1", 1}]), 30 * kMin);
  EXPECT_EQ((per_gpu[{"n2", 0}]), 30 * kMin - 30'000);
  // The two controllers' ledger counters add up to the ledger, each entry once.
  const auto counted_ms = [](const LedgerCounters& c) {
    std::string text;
    c.render(text);
    double seconds = 0;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("corral_ledger_gpu_seconds_total{", 0) == 0) {
        seconds += std::stod(line.substr(line.rfind(' ') + 1));
      }
    }
    return static_cast<std::int64_t>(std::llround(seconds * 1000));
  };
  std::int64_t ledger_ms = 0;
  for (const auto& row : rows) ledger_ms += row.gpu_ms;
  EXPECT_EQ(counted_ms(counted_a) + counted_ms(counted_b), ledger_ms);
  EXPECT_GT(ledger_ms, 0);
}

}  // namespace
}  // namespace corral::server
