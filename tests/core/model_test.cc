// The domain model's small pieces of behaviour: catalog lookups, quotas, reservations,
// prices, the manual clock.
#include <gtest/gtest.h>

#include "core/clock.h"
#include "core/gpu_type.h"
#include "core/price_book.h"
#include "core/priority.h"
#include "core/reservation.h"
#include "core/tenant.h"

namespace corral::core {
namespace {

TEST(GpuCatalog, IsSortedAndFindsByName) {
  const auto types = builtin_gpu_types();
  for (size_t i = 1; i < types.size(); ++i) EXPECT_LT(types[i - 1].id, types[i].id);
  const auto h100 = find_builtin_gpu_type("H100");
  ASSERT_TRUE(h100.has_value());
  EXPECT_EQ(h100->memory_mib, 80 * 1024);
  EXPECT_EQ(h100->tdp_watts, 700);
  EXPECT_GT(h100->usage_factor, find_builtin_gpu_type("T4")->usage_factor);
  EXPECT_FALSE(find_builtin_gpu_type("H100X").has_value());
}

TEST(Tenant, QuotaFallsBackToDefault) {
  Tenant t{.id = TenantId("nlp")};
  t.quotas[GpuTypeId("H100")] = Quota::gpus(64, 32);
  t.default_quota = Quota{.guaranteed_milli = 0, .borrow_limit_milli = 8'500};
  EXPECT_EQ(t.quota_for(GpuTypeId("H100")).max_total_milli(), 96'000);
  EXPECT_EQ(t.quota_for(GpuTypeId("A100-80GB")).guaranteed_milli, 0);
  EXPECT_EQ(t.quota_for(GpuTypeId("A100-80GB")).borrow_limit_milli, 8'500);
}

TEST(PriorityClass, DefaultsAreOrderedByTier) {
  const auto classes = default_priority_classes();
  ASSERT_EQ(classes.size(), 4u);
  EXPECT_EQ(classes[0].name, "interactive");
  EXPECT_EQ(classes[0].tier, kInteractiveTier);
  EXPECT_EQ(classes[1].name, "production");
  for (std::size_t i = 1; i < classes.size(); ++i) EXPECT_GT(classes[i - 1].tier, classes[i].tier);
  EXPECT_TRUE(classes[3].preemptible);
  EXPECT_FALSE(classes[0].preemptible);  // a session is never preempted
  EXPECT_FALSE(classes[1].preemptible);
}

TEST(Reservation, WindowIsHalfOpen) {
  Reservation r{.id = ReservationId("launch"),
                .tenant = TenantId("nlp"),
                .gpu_type = GpuTypeId("H100"),
                .count = 16,
                .start = time_from_ms(1000),
                .end = time_from_ms(2000)};
  EXPECT_FALSE(r.active_at(time_from_ms(999)));
  EXPECT_TRUE(r.active_at(time_from_ms(1000)));
  EXPECT_TRUE(r.active_at(time_from_ms(1999)));
  EXPECT_FALSE(r.active_at(time_from_ms(2000)));
}

TEST(PriceBook, RegionFallsBackToWildcardAndDiscountsPreemptible) {
  PriceBook book(/*preemptible_discount_percent=*/60);
  book.set_price(GpuTypeId("H100"), "*", 4'000'000);        // $4.00 per GPU-hour
  book.set_price(GpuTypeId("H100"), "eu-west", 5'000'000);  // $5.00
  EXPECT_EQ(*book.price_per_gpu_hour(GpuTypeId("H100"), "us-east", false), 4'000'000);
  EXPECT_EQ(*book.price_per_gpu_hour(GpuTypeId("H100"), "eu-west", false), 5'000'000);
  EXPECT_EQ(*book.price_per_gpu_hour(GpuTypeId("H100"), "eu-west", true), 2'000'000);
  const auto missing = book.price_per_gpu_hour(GpuTypeId("T4"), "us-east", false);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

TEST(PriceBook, CostIsExactForLargeFleets) {
  PriceBook book;
  book.set_price(GpuTypeId("H100"), "*", 4'000'000);
  // 8 GPUs for 90 minutes = 12 GPU-hours = $48.
  EXPECT_EQ(*book.cost(GpuTypeId("H100"), "x", false, 8LL * 90 * 60 * 1000), 48'000'000);
  // 10,000 GPUs for a year: 87.6M GPU-hours at $4 = $350.4M, no overflow.
  const std::int64_t year_gpu_ms = 10'000LL * 365 * 24 * 3'600'000;
  EXPECT_EQ(*book.cost(GpuTypeId("H100"), "x", false, year_gpu_ms), 350'400'000'000'000LL);
}

TEST(ManualClock, MovesOnlyWhenTold) {
  ManualClock clock(time_from_ms(5000));
  EXPECT_EQ(to_ms(clock.now()), 5000);
  clock.advance(seconds(2));
  EXPECT_EQ(to_ms(clock.now()), 7000);
  clock.set(time_from_ms(1));
  EXPECT_EQ(to_ms(clock.now()), 1);
}

TEST(SystemClock, IsAfter2020) {
  SystemClock clock;
  EXPECT_GT(to_ms(clock.now()), 1'577'836'800'000);  // 2020-01-01
}

}  // namespace
}  // namespace corral::core
