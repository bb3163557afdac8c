// Quota admission: guaranteed, borrowed up to the borrow limit, and never beyond.
#include <gtest/gtest.h>

#include "testing/decide_helpers.h"
#include "testing/fleet_builder.h"

namespace corral::sched {
namespace {

using testing::decide_checked;
using testing::FleetBuilder;
using testing::JobBuilder;
using testing::pending_of;
using testing::placement_of;

FleetBuilder four_dgx() {
  FleetBuilder f;
  for (int i = 0; i < 4; ++i) f.dgx("n" + std::to_string(i));
  return f;
}

TEST(Admit, WithinGuaranteeIsNotBorrowed) {
  const auto s = four_dgx()
                     .quota("nlp", "H100", 16, 8)
                     .pending(JobBuilder(1).tenant("nlp").gpus(16).per_node(8))
                     .build();
  const Decisions d = decide_checked(s);
  ASSERT_NE(placement_of(d, 1), nullptr);
  EXPECT_FALSE(placement_of(d, 1)->borrowed);
}

TEST(Admit, BeyondGuaranteeIsBorrowed) {
  const auto s = four_dgx()
                     .quota("nlp", "H100", 16, 8)
                     .pending(JobBuilder(1).tenant("nlp").gpus(16).per_node(8).queued_at(1))
                     .pending(JobBuilder(2).tenant("nlp").gpus(8).queued_at(2))
                     .build();
  const Decisions d = decide_checked(s);
  ASSERT_NE(placement_of(d, 2), nullptr);
  EXPECT_TRUE(placement_of(d, 2)->borrowed);
}

TEST(Admit, NeverBeyondBorrowLimit) {
  const auto s = four_dgx()
                     .quota("nlp", "H100", 16, 8)
                     .running(JobBuilder(1).tenant("nlp").gpus(8), {{"n0", 0},
                                                                    {"n0", 1},
                                                                    {"n0", 2},
                                                                    {"n0", 3},
                                                                    {"n0", 4},
                                                                    {"n0", 5},
                                                                    {"n0", 6},
                                                                    {"n0", 7}})
                     .pending(JobBuilder(2).tenant("nlp").gpus(16).per_node(8).queued_at(1))
                     .pending(JobBuilder(3).tenant("nlp").gpus(1).queued_at(2))
                     .build();
  const Decisions d = decide_checked(s);
  ASSERT_NE(placement_of(d, 2), nullptr);  // 8 + 16 = 24 = 16 guaranteed + 8 borrowed
  ASSERT_NE(pending_of(d, 3), nullptr);
  EXPECT_EQ(pending_of(d, 3)->kind, PendingKind::kQuota);
  EXPECT_EQ(pending_of(d, 3)->reason,
            "quota: tenant nlp holds 24 H100 (16 guaranteed + 8/8 borrowed) and is at its "
            "borrow limit for 1 more");
}

TEST(Admit, NoBorrowingMeansGuaranteeIsTheLimit) {
  const auto s =
      four_dgx().quota("nlp", "H100", 4, 0).pending(JobBuilder(1).tenant("nlp").gpus(8)).build();
  const Decisions d = decide_checked(s);
  ASSERT_NE(pending_of(d, 1), nullptr);
  EXPECT_EQ(pending_of(d, 1)->reason,
            "quota: tenant nlp holds 0/4 guaranteed H100, may not borrow, and needs 8 more");
}

// Quota is per GPU type: a tenant out of H100 quota still runs on A100.
TEST(Admit, QuotaIsPerGpuType) {
  const auto s = FleetBuilder()
                     .dgx("h", "H100")
                     .dgx("a", "A100-80GB")
                     .quota("cv", "H100", 0, 0)
                     .quota("cv", "A100-80GB", 8, 0)
                     .pending(JobBuilder(1).tenant("cv").gpus(8).types({"H100", "A100-80GB"}))
                     .build();
  const Decisions d = decide_checked(s);
  ASSERT_NE(placement_of(d, 1), nullptr);
  EXPECT_EQ(placement_of(d, 1)->gpu_type.value, "A100-80GB");
}

TEST(Admit, DefaultQuotaAppliesToUnlistedTypes) {
  const auto s = four_dgx()
                     .default_quota("nlp", 0, 2)
                     .pending(JobBuilder(1).tenant("nlp").gpus(2).queued_at(1))
                     .pending(JobBuilder(2).tenant("nlp").gpus(1).queued_at(2))
                     .build();
  const Decisions d = decide_checked(s);
  ASSERT_NE(placement_of(d, 1), nullptr);
  EXPECT_TRUE(placement_of(d, 1)->borrowed);
  ASSERT_NE(pending_of(d, 2), nullptr);
  EXPECT_EQ(pending_of(d, 2)->kind, PendingKind::kQuota);
}

// Issue 38 item 9: any member could submit production work. A tenant's priority classes
// cap the GPUs its jobs of each may hold; a class it was not given holds none; an elastic
// job fits under its cap at a smaller size; other classes are not touched.
TEST(Admit, PriorityClassCapsHoldPerTenantAndTier) {
  const auto s = FleetBuilder()
                     .dgx("a")
                     .dgx("b")
                     .class_cap("nlp", 2, 8)
                     .class_cap("nlp", 1, core::kUnlimited)
                     .running(JobBuilder(9).tenant("nlp").tier(2).gpus(4),
                              {{"a", 0}, {"a", 1}, {"a", 2}, {"a", 3}})
                     .pending(JobBuilder(1).tenant("nlp").tier(2).gpus(8).queued_at(1))
                     .pending(JobBuilder(2).tenant("nlp").tier(2).elastic(2, 8, 2).queued_at(2))
                     .pending(JobBuilder(3).tenant("nlp").tier(0).gpus(1).queued_at(3))
                     .pending(JobBuilder(4).tenant("nlp").tier(1).gpus(4).queued_at(4))
                     .pending(JobBuilder(5).tenant("cv").tier(2).gpus(2).queued_at(5))
                     .build();
  const Decisions d = decide_checked(s);
  ASSERT_NE(pending_of(d, 1), nullptr);
  EXPECT_EQ(pending_of(d, 1)->kind, PendingKind::kQuota);
  EXPECT_EQ(pending_of(d, 1)->reason,
            "quota: tenant nlp's production jobs hold 4 of the 8 GPUs its "
            "priorityClasses.production.maxGpus allows; this one needs 8");
  ASSERT_NE(placement_of(d, 2), nullptr);
  EXPECT_EQ(placement_of(d, 2)->gpus.size(), 4u);
  ASSERT_NE(pending_of(d, 3), nullptr);
  EXPECT_EQ(pending_of(d, 3)->reason,
            "quota: tenant nlp may not use priority class preemptible (its priorityClasses)");
  EXPECT_NE(placement_of(d, 4), nullptr);
  EXPECT_NE(placement_of(d, 5), nullptr);  // another tenant's production work is uncapped
}

}  // namespace
}  // namespace corral::sched
