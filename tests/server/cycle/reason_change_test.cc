// A pending job's events: one per change of substance in its reason, never one per minute
// of a countdown (issue 38 item 13).
#include "server/cycle/reason_change.h"

#include <gtest/gtest.h>

namespace corral::server {
namespace {

TEST(ReasonChange, FiguresThatMoveAreNotNews) {
  EXPECT_FALSE(reason_changed_in_substance("waiting: planned start 2026-12-06 04:02 UTC (in 9m)",
                                           "waiting: planned start 2026-12-06 04:02 UTC (in 8m)"));
  EXPECT_FALSE(
      reason_changed_in_substance("capacity: 0 of 8 H100 free", "capacity: 3 of 8 H100 free"));
  EXPECT_FALSE(reason_changed_in_substance("restart backoff until 15:06:30 (in 1m 30s)",
                                           "restart backoff until 15:06:30 (in 59s)"));
  EXPECT_FALSE(reason_changed_in_substance("needs 1,024 GPUs", "needs 2,048 GPUs"));
  EXPECT_FALSE(reason_changed_in_substance("same", "same"));
}

TEST(ReasonChange, OtherWordsAreNews) {
  EXPECT_TRUE(reason_changed_in_substance("capacity: 0 of 8 H100 free",
                                          "quota: tenant nlp holds 8/8 guaranteed H100"));
  EXPECT_TRUE(
      reason_changed_in_substance("capacity: 0 of 8 H100 free", "capacity: 0 of 8 A100 free"));
  EXPECT_TRUE(reason_changed_in_substance("waits for job 13 (in 9m)", "waits for jobs 13, 14"));
  EXPECT_TRUE(reason_changed_in_substance("", "capacity: 0 of 8 H100 free"));
  EXPECT_TRUE(reason_changed_in_substance("waits 5m for 8 GPUs", "waits 5m for 8 nodes"));
}

}  // namespace
}  // namespace corral::server
