// Attribution: the three modes on a worked day, and random reports where the shares never
// exceed what was unattributed (proportional: exactly it), a guarantee never pays for more
// than it left idle, and money splits to the micro-dollar.
#include "ledger/attribution.h"

#include <map>

#include <gtest/gtest.h>

#include "testing/random_fleet.h"

namespace corral::ledger {
namespace {

const core::GpuTypeId kH100("H100");
constexpr std::int64_t kMsPerHour = 3'600'000;

// A 10-hour report of 4 H100s (40 GPU-hours at $1 an hour): nlp was charged for 20
// GPU-hours, vision for 10, and 10 went unused. nlp is guaranteed 2 GPUs (20 GPU-hours:
// all used), vision 2 (20: it left 10 idle).
std::vector<TypeTotal> day() {
  return {{core::TenantId("nlp"), kH100, 20 * kMsPerHour, 20'000'000},
          {core::TenantId("vision"), kH100, 10 * kMsPerHour, 10'000'000},
          {core::TenantId(), kH100, 10 * kMsPerHour, 10'000'000}};
}
const std::vector<Guarantee> kGuarantees = {{core::TenantId("nlp"), kH100, 2'000},
                                            {core::TenantId("vision"), kH100, 2'000}};

TEST(Attribution, NoneLeavesItWithTheOperator) {
  EXPECT_TRUE(attribute(Attribution::kNone, day(), kGuarantees, core::seconds(36000)).empty());
}

TEST(Attribution, ProportionalSplitsByUse) {
  EXPECT_EQ(attribute(Attribution::kProportional, day(), kGuarantees, core::seconds(36000)),
            (std::vector<TypeTotal>{{core::TenantId("nlp"), kH100, 24'000'000, 6'666'667},
                                    {core::TenantId("vision"), kH100, 12'000'000, 3'333'333}}));
}

TEST(Attribution, AGuaranteeLeftIdlePaysForTheIdleTime) {
  // nlp used its whole guarantee: it pays nothing; vision left 10 GPU-hours idle.
  EXPECT_EQ(
      attribute(Attribution::kGuarantee, day(), kGuarantees, core::seconds(36000)),
      (std::vector<TypeTotal>{{core::TenantId("vision"), kH100, 10 * kMsPerHour, 10'000'000}}));
  // Guaranteed more than the idle time: they share it by idle guarantee.
  const std::vector<Guarantee> big = {{core::TenantId("nlp"), kH100, 4'000},
                                      {core::TenantId("vision"), kH100, 4'000}};
  const auto shares = attribute(Attribution::kGuarantee, day(), big, core::seconds(36000));
  // Idle guarantees: nlp 40-20 = 20 h, vision 40-10 = 30 h; 10 h to share, 2:3.
  EXPECT_EQ(shares,
            (std::vector<TypeTotal>{{core::TenantId("nlp"), kH100, 4 * kMsPerHour, 4'000'000},
                                    {core::TenantId("vision"), kH100, 6 * kMsPerHour, 6'000'000}}));
  EXPECT_EQ(attribution_from_string("guarantee"), Attribution::kGuarantee);
  EXPECT_FALSE(attribution_from_string("fair").has_value());
}

TEST(AttributionProperty, SharesAddUpAndNeverExceedThePool) {
  for (std::uint64_t seed = 1; seed <= 2000; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    testing::Rng rng(seed);
    std::vector<TypeTotal> totals;
    std::vector<Guarantee> guarantees;
    const std::vector<core::GpuTypeId> types = {kH100, core::GpuTypeId("A100")};
    for (const auto& type : types) {
      for (int t = static_cast<int>(rng.uniform(0, 4)); t > 0; --t) {
        const core::TenantId tenant("t" + std::to_string(rng.uniform(0, 5)));
        totals.push_back(
            {tenant, type, rng.uniform(0, 50 * kMsPerHour), rng.uniform(0, 99'999'999)});
        // Thousandths of a GPU: fractions (2.5 GPUs) as well as whole ones.
        if (rng.chance(0.6)) guarantees.push_back({tenant, type, rng.uniform(0, 8'000)});
      }
      if (rng.chance(0.8)) {
        totals.push_back(
            {core::TenantId(), type, rng.uniform(1, 50 * kMsPerHour), rng.uniform(0, 99'999'999)});
      }
    }
    const core::Duration window = core::seconds(rng.uniform(1, 86400));
    std::map<core::GpuTypeId, std::pair<std::int64_t, std::int64_t>> pool, charged_total;
    std::map<std::pair<core::TenantId, core::GpuTypeId>, std::int64_t> charged, guaranteed;
    for (const auto& t : totals) {
      if (t.tenant.value.empty()) {
        pool[t.type].first += t.gpu_ms;
        pool[t.type].second += t.amount;
      } else {
        charged[{t.tenant, t.type}] += t.gpu_ms;
        charged_total[t.type].first += t.gpu_ms;
      }
    }
    for (const auto& g : guarantees) {
      guaranteed[{g.tenant, g.type}] += g.milli * core::to_ms(window) / 1000;
    }
    for (const Attribution mode : {Attribution::kProportional, Attribution::kGuarantee}) {
      std::map<core::GpuTypeId, std::pair<std::int64_t, std::int64_t>> shared;
      for (const TypeTotal& s : attribute(mode, totals, guarantees, window)) {
        EXPECT_FALSE(s.tenant.value.empty());
        EXPECT_GE(s.gpu_ms, 0);
        EXPECT_GE(s.amount, 0);
        shared[s.type].first += s.gpu_ms;
        shared[s.type].second += s.amount;
        if (mode == Attribution::kGuarantee) {
          const std::int64_t idle = std::max<std::int64_t>(
              0, guaranteed[{s.tenant, s.type}] - charged[{s.tenant, s.type}]);
          EXPECT_LE(s.gpu_ms, idle);
        }
      }
      for (const auto& [type, p] : pool) {
        EXPECT_LE(shared[type].first, p.first);
        EXPECT_LE(shared[type].second, p.second);
        if (mode == Attribution::kProportional && charged_total[type].first > 0) {
          EXPECT_EQ(shared[type], p) << "proportional spreads the whole pool";
        }
      }
    }
    if (HasFailure()) return;
  }
}

}  // namespace
}  // namespace corral::ledger
