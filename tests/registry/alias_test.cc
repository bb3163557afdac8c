// How an alias moves: production and once-gated aliases stay gated, a move to where the
// alias is already is a retry, a gated move names every failed gate, and a rollback
// goes back once.
#include "registry/alias.h"

#include <gtest/gtest.h>

namespace corral::registry {
namespace {

TEST(AliasMove, ProductionIsAlwaysGatedAndAGatedAliasStaysGated) {
  const AliasMovePlan first = plan_alias_move("production", std::nullopt, {.version = "v1"});
  EXPECT_TRUE(first.next.gated);
  EXPECT_EQ(first.gate, (std::vector<std::string>{"v1"}));
  // Any other alias is gated only when asked ...
  EXPECT_FALSE(plan_alias_move("staging", std::nullopt, {.version = "v1"}).next.gated);
  const AliasMovePlan asked =
      plan_alias_move("staging", std::nullopt, {.version = "v1", .gated = true});
  EXPECT_TRUE(asked.next.gated);
  // ... and a later move cannot switch the gates off.
  const AliasMovePlan later = plan_alias_move("staging", asked.next, {.version = "v2"});
  EXPECT_TRUE(later.next.gated);
  EXPECT_EQ(later.gate, (std::vector<std::string>{"v2"}));
}

TEST(AliasMove, AGatedMoveGatesTheCanaryToo) {
  const AliasMovePlan plan = plan_alias_move(
      "production", std::nullopt, {.version = "v2", .canary = Canary{"v3", 0.1}, .endpoint = "x"});
  EXPECT_EQ(plan.gate, (std::vector<std::string>{"v2", "v3"}));
  EXPECT_EQ(plan.next.canary, (Canary{"v3", 0.1}));
  EXPECT_EQ(plan.next.endpoint, "x");
}

TEST(AliasMove, AMoveToWhereTheAliasIsIsARetryAndGatesNothing) {
  const AliasState at{.version = "v2", .canary = Canary{"v3", 0.1}, .gated = true};
  const AliasMovePlan again =
      plan_alias_move("production", at, {.version = "v2", .canary = Canary{"v3", 0.1}});
  EXPECT_TRUE(again.retry);
  EXPECT_TRUE(again.gate.empty());
  // Another canary share is a move.
  EXPECT_FALSE(
      plan_alias_move("production", at, {.version = "v2", .canary = Canary{"v3", 0.2}}).retry);
}

TEST(AliasMove, AGatedMoveFailsNamingEveryFailedGate) {
  EXPECT_TRUE(judge_move("llm", "production", {{"v2", {{"metric a >= 1", true, "a is 2"}}}}).ok());
  const core::Status s =
      judge_move("llm", "production",
                 {{"v2", {{"metric a >= 1", false, "a is 0.5"}, {"approval safety", true, ""}}},
                  {"v3", {{"approval safety", false, "not approved"}}}});
  EXPECT_EQ(s.code(), core::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "alias production of llm is gated: v2: metric a >= 1 failed (a is 0.5); v3: approval "
            "safety failed (not approved)");
}

TEST(AliasRollback, GoesBackToWhereTheLastMoveCameFromOnce) {
  const AliasState at{.version = "v3", .canary = Canary{"v4", 0.2}, .endpoint = "e", .gated = true};
  const auto back = plan_rollback("llm", "production", at, {{"move", ""}, {"move", "v2"}});
  ASSERT_TRUE(back.ok());
  ASSERT_TRUE(back->has_value());
  EXPECT_EQ(**back, (AliasState{.version = "v2", .endpoint = "e", .gated = true}));
  // Right after a rollback, another changes nothing.
  const auto again = plan_rollback("llm", "production", **back,
                                   {{"move", ""}, {"move", "v2"}, {"rollback", "v3"}});
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->has_value());
}

TEST(AliasRollback, AnAliasWithNoEarlierVersionCannotRollBack) {
  const AliasState at{.version = "v1"};
  for (const auto& moves : {std::vector<AliasMoveRecord>{}, {{"move", ""}}}) {
    const auto r = plan_rollback("llm", "staging", at, moves);
    EXPECT_EQ(r.status().code(), core::StatusCode::kFailedPrecondition);
    EXPECT_EQ(r.status().message(), "alias staging of llm has no earlier version");
  }
}

}  // namespace
}  // namespace corral::registry
