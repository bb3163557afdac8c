#include "core/status.h"

#include <string>

#include <gtest/gtest.h>

#include "core/result.h"

namespace corral::core {
namespace {

Result<int> parse_positive(int v) {
  if (v <= 0) return invalid_argument("value", "must be positive, got " + std::to_string(v));
  return v;
}

Result<int> doubled(int v) {
  CORRAL_ASSIGN_OR_RETURN(const int x, parse_positive(v));
  return 2 * x;
}

Status check_positive(int v) {
  CORRAL_RETURN_IF_ERROR(parse_positive(v).status());
  return ok_status();
}

TEST(Status, OkByDefault) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.to_string(), "ok");
}

TEST(Status, ToStringPrefixesTheField) {
  EXPECT_EQ(invalid_argument("resources.gpus", "must be between 1 and 16384, got 0").to_string(),
            "resources.gpus: must be between 1 and 16384, got 0");
  EXPECT_EQ(not_found("no such job").to_string(), "no such job");
}

TEST(Result, HoldsAValueOrAStatus) {
  EXPECT_EQ(*doubled(4), 8);
  const Result<int> bad = doubled(-1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().field(), "value");
}

TEST(Result, ReturnIfErrorPropagates) {
  EXPECT_TRUE(check_positive(3).ok());
  EXPECT_EQ(check_positive(0).code(), StatusCode::kInvalidArgument);
}

TEST(Result, ValueOfAnErrorIsABug) {
  const Result<int> bad = parse_positive(0);
  EXPECT_DEATH((void)bad.value(), "CHECK failed");
}

TEST(StatusCode, NamesAreStable) {
  EXPECT_EQ(to_string(StatusCode::kResourceExhausted), "resource_exhausted");
  EXPECT_EQ(to_string(StatusCode::kFailedPrecondition), "failed_precondition");
}

}  // namespace
}  // namespace corral::core
