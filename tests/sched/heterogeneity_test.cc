// Heterogeneity: a job that gives its speed by GPU type is placed on the type with the
// most speed per unit of price (the type's usage factor, raised to type_price_weight),
// falling back in that order when the best type is full or its quota refuses.
#include <gtest/gtest.h>

#include "testing/decide_helpers.h"
#include "testing/fleet_builder.h"

namespace corral::sched {
namespace {

using testing::decide_checked;
using testing::FleetBuilder;
using testing::JobBuilder;
using testing::placement_of;

// One node of each type. Usage factors (the built-in catalog): H100 2.0, A100-80GB 1.0,
// T4 0.15.
FleetBuilder three_types() {
  FleetBuilder f;
  f.dgx("h", "H100").dgx("a", "A100-80GB").node("t", "T4", 8, 1);
  return f;
}

std::string type_of(const Decisions& d, std::int64_t job) {
  const Placement* p = placement_of(d, job);
  return p == nullptr ? "" : p->gpu_type.value;
}

SchedulerConfig price_weight(double w) {
  SchedulerConfig c;
  c.type_price_weight = w;
  return c;
}

// Speeds H100 2.2, A100 1, T4 0.3. Per unit of price (weight 1): 1.1, 1, 2 -> the T4.
// Fastest (weight 0): the H100. At 0.5: 2.2/1.41 = 1.56, 1, 0.3/0.39 = 0.77 -> the H100.
TEST(Heterogeneity, TheTypeWithTheMostSpeedPerPriceWins) {
  FleetBuilder f = three_types();
  f.pending(JobBuilder(1).gpus(4).speed({{"H100", 2.2}, {"A100-80GB", 1.0}, {"T4", 0.3}}));
  EXPECT_EQ(type_of(decide_checked(f.build(), price_weight(1)), 1), "T4");
  EXPECT_EQ(type_of(decide_checked(f.build(), price_weight(0)), 1), "H100");
  EXPECT_EQ(type_of(decide_checked(f.build(), price_weight(0.5)), 1), "H100");
  EXPECT_EQ(type_of(decide_checked(f.build()), 1), "H100") << "the default weight is 0.5";
}

// An elastic job weighs size and type together: 4 free H100 (speed 2.2, price weight
// 2^0.5) against 8 free T4. At a T4 speed of 0.25 the 4 H100 run it faster per unit of
// price (2.2 x 4 / 1.41 = 6.2 against 0.25 x 8 / 0.39 = 5.2), though the T4 hold more of
// it; at 0.5 the 8 T4 win (10.3).
TEST(Heterogeneity, AnElasticJobWeighsItsSizeAndTheTypeTogether) {
  const auto with_t4_speed = [](double speed) {
    FleetBuilder f;
    f.dgx("h", "H100").node("t", "T4", 8, 1);
    f.running(JobBuilder(9).gpus(4).types({"H100"}), {{"h", 0}, {"h", 1}, {"h", 2}, {"h", 3}});
    f.pending(JobBuilder(1).gpus(1).elastic(1, 8).speed({{"H100", 2.2}, {"T4", speed}}));
    return decide_checked(f.build());
  };
  const Decisions fast = with_t4_speed(0.25);
  ASSERT_NE(placement_of(fast, 1), nullptr);
  EXPECT_EQ(type_of(fast, 1), "H100");
  EXPECT_EQ(placement_of(fast, 1)->gpus.size(), 4u);
  const Decisions many = with_t4_speed(0.5);
  ASSERT_NE(placement_of(many, 1), nullptr);
  EXPECT_EQ(type_of(many, 1), "T4");
  EXPECT_EQ(placement_of(many, 1)->gpus.size(), 8u);
}

// Without speeds the order for "any type" is unchanged: the tightest placement, then the
// cheapest type. One GPU is as tight on every type, so the T4.
TEST(Heterogeneity, WithoutSpeedsTheCheapestTypeComesFirst) {
  FleetBuilder f = three_types();
  f.pending(JobBuilder(1).gpus(1));
  EXPECT_EQ(type_of(decide_checked(f.build(), price_weight(0)), 1), "T4");
}

// The T4 node is full: the job falls back to the next best at weight 1, the H100
// (2.2 / 2 = 1.1 against the A100's 1 / 1).
TEST(Heterogeneity, AFullTypeFallsBackInValueOrder) {
  FleetBuilder f = three_types();
  f.running(JobBuilder(9).gpus(8).types({"T4"}),
            {{"t", 0}, {"t", 1}, {"t", 2}, {"t", 3}, {"t", 4}, {"t", 5}, {"t", 6}, {"t", 7}});
  f.pending(JobBuilder(1).gpus(4).speed({{"H100", 2.2}, {"A100-80GB", 1.0}, {"T4", 0.3}}));
  EXPECT_EQ(type_of(decide_checked(f.build(), price_weight(1)), 1), "H100");
}

// The tenant may hold no T4 (quota 0, no borrowing): within its quotas the best type
// left is the H100.
TEST(Heterogeneity, QuotaIsRespected) {
  FleetBuilder f = three_types();
  f.quota("t1", "T4", 0, 0);
  f.pending(JobBuilder(1).gpus(4).speed({{"H100", 2.2}, {"A100-80GB", 1.0}, {"T4", 0.3}}));
  EXPECT_EQ(type_of(decide_checked(f.build(), price_weight(1)), 1), "H100");
}

// A type the job gives no speed for comes after every type it does: with only an A100
// figure it goes there, though the T4 is cheaper. With an explicit list, the list still
// limits the choice and the speeds order it.
TEST(Heterogeneity, TypesWithoutASpeedComeLastAndTheListStillLimits) {
  FleetBuilder f = three_types();
  f.pending(JobBuilder(1).gpus(4).speed({{"A100-80GB", 1.0}}));
  f.pending(JobBuilder(2)
                .gpus(4)
                .types({"A100-80GB", "H100"})
                .speed({{"A100-80GB", 1.0}, {"H100", 3.0}}));
  const Decisions d = decide_checked(f.build(), price_weight(1));
  EXPECT_EQ(type_of(d, 1), "A100-80GB");
  EXPECT_EQ(type_of(d, 2), "H100") << "3 / 2 beats 1 / 1, though A100 is listed first";
}

}  // namespace
}  // namespace corral::sched
