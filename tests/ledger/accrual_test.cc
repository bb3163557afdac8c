// Accrual: a worked hour whose buckets can be checked by hand (docs/ledger.md tells the
// same story), the errors, and a property test over random hours: every GPU's entries add
// up to the period with zero residual, no key twice, money is GPU-time times the price,
// and the same facts in any order give the same entries.
#include "ledger/accrual.h"

#include <algorithm>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "testing/random_fleet.h"

namespace corral::ledger {
namespace {

using core::seconds;

constexpr std::int64_t kHourMs = 3'600'000;
const core::Time kStart = core::time_from_ms(100 * kHourMs);
core::Time at(std::int64_t offset_s) { return kStart + seconds(offset_s); }

core::PriceBook prices() {
  core::PriceBook book(50);                                 // preemptible work at half price
  book.set_price(core::GpuTypeId("H100"), "*", 3'600'000);  // $3.60 an hour: 1 micro-$ a ms
  return book;
}

std::map<std::string, std::int64_t> ms_by_bucket(const std::vector<Entry>& entries,
                                                 std::int32_t gpu) {
  std::map<std::string, std::int64_t> out;
  for (const Entry& e : entries) {
    if (e.index == gpu) out[std::string(to_string(e.bucket))] += e.gpu_ms;
  }
  return out;
}

// One hour of a node with three GPUs:
//   GPU 0: job 7 (tenant nlp) from 0 to 40 min, preempted; it started with 2 min of
//          restore, checkpointed last at 30 min, and its samples say busy, then idle from
//          20 to 25 min. Then free; from 50 min reserved for tenant cv.
//   GPU 1: unhealthy from 10 to 20 min, free otherwise, the node drained from 45 min.
//   GPU 2: job 8 (tenant cv, preemptible) all hour, no samples: used.
TEST(Accrual, AWorkedHour) {
  AccrualInput in;
  for (int g = 0; g < 3; ++g) in.gpus.push_back({core::NodeId("n1"), g, core::GpuTypeId("H100")});
  in.holds.push_back({.node = core::NodeId("n1"),
                      .index = 0,
                      .job = core::JobId(7),
                      .attempt = 2,
                      .tenant = core::TenantId("nlp"),
                      .start = at(0),
                      .end = at(2400),
                      .overhead = seconds(120),
                      .lost_from = at(1800)});
  in.holds.push_back({.node = core::NodeId("n1"),
                      .index = 2,
                      .job = core::JobId(8),
                      .attempt = 1,
                      .tenant = core::TenantId("cv"),
                      .preemptible = true,
                      .start = at(-600)});
  in.samples = {{core::NodeId("n1"), 0, at(0), 0.9},
                {core::NodeId("n1"), 0, at(1200), 0.01},
                {core::NodeId("n1"), 0, at(1500), 0.8}};
  in.reserved.push_back({core::NodeId("n1"), 0, at(3000), at(7200), core::TenantId("cv")});
  in.unhealthy.push_back({core::NodeId("n1"), 1, at(600), at(1200)});
  in.drained.push_back({core::NodeId("n1"), 1, at(2700), at(99999)});

  auto entries = accrue(in, prices(), {}, kStart);
  ASSERT_TRUE(entries.ok()) << entries.status().to_string();
  EXPECT_EQ(ms_by_bucket(*entries, 0),
            (std::map<std::string, std::int64_t>{{"restart_overhead", 120'000},
                                                 {"used", 1'380'000},  // 2-20, 25-30 min
                                                 {"allocated_idle", 300'000},
                                                 {"preemption_lost", 600'000},
                                                 {"unallocated", 600'000},
                                                 {"reserved_idle", 600'000}}));
  EXPECT_EQ(ms_by_bucket(*entries, 1),
            (std::map<std::string, std::int64_t>{
                {"unallocated", 2'100'000}, {"unhealthy", 600'000}, {"drained", 900'000}}));
  EXPECT_EQ(ms_by_bucket(*entries, 2), (std::map<std::string, std::int64_t>{{"used", kHourMs}}));
  for (const Entry& e : *entries) {
    if (e.bucket == Bucket::kReservedIdle) {
      EXPECT_EQ(e.tenant.value, "cv");
    }
    if (e.bucket == Bucket::kUnallocated) {
      EXPECT_TRUE(e.tenant.value.empty());
    }
    if (e.job.value == 7) {
      EXPECT_EQ(e.tenant.value, "nlp");
    }
    // 1 micro-dollar a millisecond; job 8 is preemptible: half.
    EXPECT_EQ(e.amount, e.job.value == 8 ? e.gpu_ms / 2 : e.gpu_ms) << e.key;
  }
  EXPECT_EQ(entries->front().key, "n1/0/360000000/used/7/nlp");
}

// Two shares of one GPU: each billed its share of the time it held the GPU, the rest of
// the GPU unallocated, and a stretch too short to split evenly split exactly.
TEST(Accrual, SharesOfAGpuAreBilledTheirShareExactly) {
  AccrualInput in;
  in.gpus.push_back({core::NodeId("n1"), 0, core::GpuTypeId("H100")});
  const auto share = [](std::int64_t job, const char* tenant, std::int32_t milli, core::Time end) {
    return Hold{.node = core::NodeId("n1"),
                .index = 0,
                .job = core::JobId(job),
                .attempt = 1,
                .tenant = core::TenantId(tenant),
                .start = at(-60),
                .end = end,
                .share_milli = milli};
  };
  in.holds = {share(1, "a", 250, at(1800)), share(2, "b", 500, at(3600))};
  auto entries = accrue(in, prices(), {}, kStart);
  ASSERT_TRUE(entries.ok()) << entries.status().to_string();
  std::map<std::int64_t, std::int64_t> by_job;
  for (const Entry& e : *entries) by_job[e.job.value] += e.gpu_ms;
  EXPECT_EQ(by_job, (std::map<std::int64_t, std::int64_t>{
                        {0, 900'000 + 450'000}, {1, 450'000}, {2, 1'800'000}}));
  for (const Entry& e : *entries) EXPECT_EQ(e.amount, e.gpu_ms) << e.key;  // 1 micro-$ a ms

  // 7 ms at 0.333, 0.5 and the free 0.167: 2.331, 3.5 and 1.169 round down to 2, 3 and 1,
  // and the millisecond left goes to the largest remainder, the half's.
  const core::Time t7 = kStart + core::Duration(7);
  in.holds = {share(1, "a", 333, t7), share(2, "b", 500, t7)};
  entries = accrue(in, prices(), {}, kStart);
  ASSERT_TRUE(entries.ok()) << entries.status().to_string();
  by_job.clear();
  for (const Entry& e : *entries) by_job[e.job.value] += e.gpu_ms;
  EXPECT_EQ(by_job, (std::map<std::int64_t, std::int64_t>{{0, kHourMs - 6}, {1, 2}, {2, 4}}));

  in.holds = {share(1, "a", 600, at(3600)), share(2, "b", 500, at(3600))};
  EXPECT_NE(accrue(in, prices(), {}, kStart).status().message().find("add up to 1100/1000"),
            std::string::npos);
  in.holds = {share(1, "a", 600, at(3600)), share(2, "b", 0, at(3600))};
  EXPECT_NE(accrue(in, prices(), {}, kStart).status().message().find("held by jobs 1 and 2"),
            std::string::npos);
  in.holds = {share(1, "a", 1000, at(3600))};
  EXPECT_NE(accrue(in, prices(), {}, kStart).status().message().find("1 to 999 thousandths"),
            std::string::npos);
}

// A hold started and stopped in one instant held nothing, whichever order it comes in
// beside the hold that starts then.
TEST(Accrual, AnEmptyHoldIsNoHold) {
  AccrualInput in;
  in.gpus.push_back({core::NodeId("n1"), 0, core::GpuTypeId("H100")});
  const Hold empty{.node = core::NodeId("n1"),
                   .index = 0,
                   .job = core::JobId(1),
                   .start = at(60),
                   .end = at(60)};
  const Hold next{.node = core::NodeId("n1"), .index = 0, .job = core::JobId(2), .start = at(60)};
  for (const auto& holds : {std::vector{empty, next}, std::vector{next, empty}}) {
    in.holds = holds;
    auto entries = accrue(in, prices(), {}, kStart);
    ASSERT_TRUE(entries.ok()) << entries.status().to_string();
    EXPECT_EQ(ms_by_bucket(*entries, 0),
              (std::map<std::string, std::int64_t>{{"unallocated", 60'000}, {"used", 3'540'000}}));
  }
}

TEST(Accrual, RefusesWhatCannotBeBilled) {
  AccrualInput in;
  in.gpus.push_back({core::NodeId("n1"), 0, core::GpuTypeId("H100")});
  EXPECT_NE(accrue(in, prices(), {}, kStart + seconds(1))
                .status()
                .to_string()
                .find("not a multiple of the period"),
            std::string::npos);
  in.holds.push_back(
      {.node = core::NodeId("n1"), .index = 0, .job = core::JobId(1), .start = at(0)});
  in.holds.push_back(
      {.node = core::NodeId("n1"), .index = 0, .job = core::JobId(2), .start = at(60)});
  EXPECT_NE(accrue(in, prices(), {}, kStart)
                .status()
                .to_string()
                .find("GPU n1/0 is held by jobs 1 and 2 at once"),
            std::string::npos);
  in.holds.pop_back();
  in.gpus.push_back({core::NodeId("n2"), 0, core::GpuTypeId("B200")});
  EXPECT_NE(
      accrue(in, prices(), {}, kStart).status().to_string().find("no price for GPU type B200"),
      std::string::npos);
  in.gpus.pop_back();
  in.holds.push_back(
      {.node = core::NodeId("n9"), .index = 3, .job = core::JobId(3), .start = at(0)});
  EXPECT_NE(accrue(in, prices(), {}, kStart)
                .status()
                .to_string()
                .find("job 3 holds GPU n9/3, which the input does not list"),
            std::string::npos);
}

// Random hours: a few GPUs, holds that never overlap on a GPU (some preempted, some with
// overhead, some still running), spans of every kind and samples. On some GPUs the holds
// are shares instead, in two or three lanes whose shares add up to at most the GPU.
AccrualInput random_hour(testing::Rng& rng) {
  AccrualInput in;
  const auto gpus = static_cast<std::int32_t>(rng.uniform(1, 6));
  for (std::int32_t g = 0; g < gpus; ++g) {
    in.gpus.push_back({core::NodeId("n" + std::to_string(g % 2)), g, core::GpuTypeId("H100")});
  }
  std::int64_t job = 1;
  const auto t = [&](std::int64_t lo, std::int64_t hi) { return at(rng.uniform(lo, hi)); };
  for (Gpu& g : in.gpus) {
    // Some GPUs join the fleet during the hour: nothing holds them before.
    const std::int64_t since = rng.chance(0.2) ? rng.uniform(0, 3000) : -3600;
    g.since = at(since);
    std::vector<std::int32_t> lanes = {0};  // one lane of whole-GPU holds
    if (rng.chance(0.3)) {
      lanes = {static_cast<std::int32_t>(rng.uniform(1, 600))};
      lanes.push_back(static_cast<std::int32_t>(rng.uniform(1, 999 - lanes[0])));
      if (rng.chance(0.5) && lanes[0] + lanes[1] < 999) {
        lanes.push_back(static_cast<std::int32_t>(rng.uniform(1, 999 - lanes[0] - lanes[1])));
      }
    }
    for (const std::int32_t share : lanes) {
      std::int64_t cursor = since == -3600 ? -1800 : since;
      while (cursor < 3600 + 600 && rng.chance(0.7)) {
        const std::int64_t begin = cursor + rng.uniform(0, 900);
        const std::int64_t length = rng.uniform(1, 2400);
        Hold h{.node = g.node,
               .index = g.index,
               .job = core::JobId(job++),
               .attempt = 1,
               .tenant = core::TenantId(rng.chance(0.5) ? "a" : "b"),
               .preemptible = rng.chance(0.3),
               .start = at(begin),
               .overhead = seconds(rng.uniform(0, 300)),
               .share_milli = share};
        if (rng.chance(0.8)) h.end = at(begin + length);
        if (h.end && rng.chance(0.4)) h.lost_from = at(begin + rng.uniform(0, length));
        if (h.end && rng.chance(0.3)) h.stopping_from = at(begin + rng.uniform(0, length));
        in.holds.push_back(h);
        if (!h.end) break;
        cursor = begin + length;
      }
    }
    for (auto* spans : {&in.unhealthy, &in.drained, &in.reserved}) {
      if (!rng.chance(0.3)) continue;
      const core::Time from = t(-600, 3600);
      spans->push_back({g.node, g.index, from, from + seconds(rng.uniform(1, 3600)),
                        core::TenantId(spans == &in.reserved ? "r" : "")});
    }
    for (int s = static_cast<int>(rng.uniform(0, 20)); s > 0; --s) {
      in.samples.push_back(
          {g.node, g.index, t(-600, 3700), static_cast<double>(rng.uniform(0, 100)) / 100});
    }
  }
  return in;
}

// The rules of accrual.h written out again, one second at a time (every time in
// random_hour() is a whole second): GPU `g`'s second `s` as (bucket, job, milliseconds)
// parts: one of 1000 ms, or with shares each share's thousandths and the rest's (a share
// of a whole second is a whole number of milliseconds, so no rounding). Job -1: not
// billed.
struct Part {
  Bucket bucket;
  std::int64_t job;
  std::int64_t ms;
};
std::vector<Part> reference(const AccrualInput& in, const Gpu& g, std::int64_t s) {
  const core::Time t = at(s);
  if (t < g.since) return {{Bucket::kUnallocated, -1, 1000}};  // not in the fleet yet
  const auto on = [&](const auto& x) { return x.node == g.node && x.index == g.index; };
  const auto in_span = [&](const std::vector<Span>& spans) {
    return std::any_of(spans.begin(), spans.end(),
                       [&](const Span& x) { return on(x) && x.start <= t && t < x.end; });
  };
  if (in_span(in.unhealthy)) return {{Bucket::kUnhealthy, 0, 1000}};
  std::vector<Part> out;
  std::int64_t left = 1000;
  for (const Hold& h : in.holds) {
    if (!on(h) || t < h.start || (h.end && t >= *h.end)) continue;
    const std::int64_t ms = h.share_milli > 0 ? h.share_milli : 1000;
    left -= ms;
    const auto part = [&](Bucket b) { out.push_back({b, h.job.value, ms}); };
    if (t < h.start + h.overhead || (h.stopping_from && t >= *h.stopping_from)) {
      part(Bucket::kRestartOverhead);
      continue;
    }
    if (h.lost_from && t >= *h.lost_from) {
      part(Bucket::kPreemptionLost);
      continue;
    }
    const Sample* last = nullptr;  // the latest at or before t; the last of equals wins
    for (const Sample& x : in.samples) {
      if (on(x) && x.time <= t && x.time >= h.start && (last == nullptr || x.time >= last->time)) {
        last = &x;
      }
    }
    const bool idle = last != nullptr && last->utilization < AccrualConfig{}.idle_below;
    part(idle ? Bucket::kAllocatedIdle : Bucket::kUsed);
  }
  if (left == 0) return out;
  const Bucket rest = in_span(in.drained)    ? Bucket::kDrained
                      : in_span(in.reserved) ? Bucket::kReservedIdle
                                             : Bucket::kUnallocated;
  out.push_back({rest, 0, left});
  return out;
}

// A price book whose H100 price changes at a few random whole seconds of the hour, some
// changes to the price it already had.
core::PriceBook random_prices(testing::Rng& rng) {
  core::PriceBook book(50);
  book.set_price(core::GpuTypeId("H100"), "*", 3'600'000);
  std::int64_t price = 3'600'000;
  for (int c = static_cast<int>(rng.uniform(0, 3)); c > 0; --c) {
    if (rng.chance(0.7)) price = rng.uniform(1, 9) * 1'000'000 + rng.uniform(0, 999);
    book.set_price(core::GpuTypeId("H100"), "*", price, at(rng.uniform(1, 3599)));
  }
  return book;
}

TEST(AccrualProperty, EveryGpuMillisecondIsBilledOnce) {
  for (std::uint64_t seed = 1; seed <= 600; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    testing::Rng rng(seed);
    AccrualInput in = random_hour(rng);
    const core::PriceBook book = random_prices(rng);
    auto entries = accrue(in, book, {}, kStart);
    ASSERT_TRUE(entries.ok()) << entries.status().to_string();
    std::map<std::pair<std::string, std::int32_t>, std::int64_t> per_gpu;
    std::set<std::string> keys;
    for (const Entry& e : *entries) {
      per_gpu[{e.node.value, e.index}] += e.gpu_ms;
      EXPECT_TRUE(keys.insert(e.key).second) << "key twice: " << e.key;
      EXPECT_GT(e.gpu_ms, 0) << e.key;
    }
    // Every GPU's entries add up to the part of the hour it was in the fleet.
    for (const Gpu& g : in.gpus) {
      const std::int64_t joined =
          std::clamp(core::to_ms(g.since - kStart), std::int64_t{0}, kHourMs);
      if (joined < kHourMs) {
        EXPECT_EQ((per_gpu[{g.node.value, g.index}]), kHourMs - joined);
      }
    }
    // Bucket by bucket and job, what the second-by-second reference says; money is each
    // entry's seconds at the price in effect in each, rounded once per stretch of one price.
    for (const Gpu& g : in.gpus) {
      std::map<std::pair<Bucket, std::int64_t>, std::int64_t> want, got;
      std::map<std::pair<Bucket, std::int64_t>, std::map<std::int64_t, std::int64_t>> ms_at;
      std::map<std::pair<Bucket, std::int64_t>, core::MicroDollars> want_money, got_money;
      std::int64_t stretch = 0, last_price = -1;
      for (std::int64_t sec = 0; sec < 3600; ++sec) {
        const std::int64_t price = *book.price_per_gpu_hour(g.type, "*", false, at(sec));
        if (price != last_price) stretch = sec;
        last_price = price;
        for (const auto& [bucket, job, ms] : reference(in, g, sec)) {
          if (job < 0) continue;
          want[{bucket, job}] += ms;
          ms_at[{bucket, job}][stretch] += ms;
        }
      }
      for (const auto& [k, parts] : ms_at) {
        const bool preemptible = std::any_of(in.holds.begin(), in.holds.end(), [&](const Hold& h) {
          return h.job.value == k.second && h.preemptible;
        });
        for (const auto& [from, ms] : parts) {
          want_money[k] += *book.cost(g.type, "*", preemptible, ms, at(from));
        }
      }
      for (const Entry& e : *entries) {
        if (e.node != g.node || e.index != g.index) continue;
        got[{e.bucket, e.job.value}] += e.gpu_ms;
        got_money[{e.bucket, e.job.value}] += e.amount;
      }
      EXPECT_EQ(got, want) << g.node.value << "/" << g.index;
      EXPECT_EQ(got_money, want_money) << g.node.value << "/" << g.index;
    }
    // The same facts in another order: the same entries.
    std::reverse(in.holds.begin(), in.holds.end());
    std::reverse(in.unhealthy.begin(), in.unhealthy.end());
    std::reverse(in.gpus.begin(), in.gpus.end());
    auto again = accrue(in, book, {}, kStart);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, *entries);
    if (HasFailure()) return;
  }
}

TEST(Accrual, APriceChangeAppliesFromItsDate) {
  core::PriceBook book;
  book.set_price(core::GpuTypeId("H100"), "*", 3'600'000);            // 1 micro-$ a ms
  book.set_price(core::GpuTypeId("H100"), "*", 7'200'000, at(1800));  // 2 from 30 min
  book.set_price(core::GpuTypeId("H100"), "*", 7'200'000, at(2400));  // the same: no cut
  AccrualInput in;
  in.gpus.push_back({core::NodeId("n1"), 0, core::GpuTypeId("H100")});
  in.holds.push_back({.node = core::NodeId("n1"),
                      .index = 0,
                      .job = core::JobId(1),
                      .tenant = core::TenantId("a"),
                      .start = at(0)});
  auto entries = accrue(in, book, {}, kStart);
  ASSERT_TRUE(entries.ok()) << entries.status().to_string();
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ(entries->front().amount, 1'800'000 + 3'600'000);
  // The next hour is all at the new price.
  auto next = accrue(in, book, {}, kStart + seconds(3600));
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->front().amount, 7'200'000);
}

TEST(Accrual, AStopAskedIsOverheadAndAGpuIsBilledFromWhenItJoined) {
  AccrualInput in;
  in.gpus.push_back({core::NodeId("n1"), 0, core::GpuTypeId("H100"), at(600)});
  in.holds.push_back({.node = core::NodeId("n1"),
                      .index = 0,
                      .job = core::JobId(1),
                      .tenant = core::TenantId("a"),
                      .start = at(900),
                      .end = at(3000),
                      .stopping_from = at(2700),
                      .lost_from = at(2400)});
  auto entries = accrue(in, prices(), {}, kStart);
  ASSERT_TRUE(entries.ok()) << entries.status().to_string();
  EXPECT_EQ(ms_by_bucket(*entries, 0),
            (std::map<std::string, std::int64_t>{{"unallocated", 300'000 + 600'000},
                                                 {"used", 1'500'000},
                                                 {"preemption_lost", 300'000},
                                                 {"restart_overhead", 300'000}}));
  in.holds.front().start = at(300);  // before the GPU joined: a bug upstream
  EXPECT_NE(accrue(in, prices(), {}, kStart).status().to_string().find("before the GPU joined"),
            std::string::npos);
}

}  // namespace
}  // namespace corral::ledger
