#include "core/status.h"

#include <string>
#include <vector>

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

TEST(Status, ReasonFactoriesPairEachReasonWithItsCode) {
  struct ReasonCase {
    const char* name;
    Status status;
    ErrorReason reason;
  };
  const std::vector<ReasonCase> cases = {
      {"stale epoch", stale_epoch("scheduler epoch 3 of shard default is stale"),
       ErrorReason::kStaleEpoch},
      {"fenced", fenced("node n1 has not joined; join again"), ErrorReason::kFenced},
      {"stale attempt", stale_attempt("attempt 1 of job 7 is not its current attempt (2)"),
       ErrorReason::kStaleAttempt},
      {"raced", raced("job changed meanwhile"), ErrorReason::kRaced},
  };
  for (const ReasonCase& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.status.code(), StatusCode::kAborted);
    EXPECT_EQ(c.status.reason(), c.reason);
    EXPECT_TRUE(c.status.is(c.reason));
    for (const ReasonCase& other : cases) {
      if (other.reason != c.reason) {
        EXPECT_FALSE(c.status.is(other.reason)) << other.name;
      }
    }
  }
}

// The reason, not the wording, decides: a message that mentions another reason's words
// (the old substring tests looked for "epoch", "fenced: ", "stale: ") changes nothing.
TEST(Status, ReasonDoesNotDependOnTheMessage) {
  const Status worded(StatusCode::kAborted, "fenced: epoch 3 is stale");
  EXPECT_EQ(worded.reason(), ErrorReason::kNone);
  EXPECT_FALSE(worded.is(ErrorReason::kFenced));
  EXPECT_FALSE(worded.is(ErrorReason::kStaleEpoch));
  EXPECT_TRUE(fenced("").is(ErrorReason::kFenced));
  EXPECT_TRUE(raced("scheduler epoch moved").is(ErrorReason::kRaced));
  EXPECT_FALSE(raced("scheduler epoch moved").is(ErrorReason::kStaleEpoch));
}

TEST(Status, OkAndPlainFailuresHaveNoReason) {
  EXPECT_EQ(Status().reason(), ErrorReason::kNone);
  EXPECT_FALSE(Status().is(ErrorReason::kNone));  // OK is no failure of any kind
  EXPECT_TRUE(not_found("no such job").is(ErrorReason::kNone));
  EXPECT_EQ(invalid_argument("name", "is required").reason(), ErrorReason::kNone);
}

TEST(Status, ReasonSurvivesResultAndReturnMacros) {
  const auto fails = []() -> Result<int> { return stale_attempt("attempt 1 is not current"); };
  const auto forwards = [&]() -> Status {
    CORRAL_ASSIGN_OR_RETURN(const int v, fails());
    (void)v;
    return Status();
  };
  const auto returns = [&]() -> Status {
    CORRAL_RETURN_IF_ERROR(forwards());
    return Status();
  };
  EXPECT_EQ(returns(), stale_attempt("attempt 1 is not current"));
  EXPECT_TRUE(returns().is(ErrorReason::kStaleAttempt));
}

TEST(Status, EqualityComparesTheReason) {
  EXPECT_NE(fenced("x"), stale_attempt("x"));
  EXPECT_NE(raced("x"), Status(StatusCode::kAborted, "x"));
  EXPECT_EQ(raced("x"), raced("x"));
}

TEST(Status, InvalidFieldsCarriesEveryError) {
  const Status s =
      invalid_fields({{.path = "resources.gpus", .reason = "must be at least 1, got 0"},
                      {.path = "name", .reason = "is required"},
                      {.path = "", .reason = "unknown field \"colour\""}});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.reason(), ErrorReason::kNone);
  EXPECT_EQ(s.field(), "resources.gpus");
  EXPECT_EQ(
      s.message(),
      "resources.gpus: must be at least 1, got 0; name: is required; unknown field \"colour\"");
  const std::vector<FieldError> want = {
      {.path = "resources.gpus", .reason = "must be at least 1, got 0"},
      {.path = "name", .reason = "is required"},
      {.path = "", .reason = "unknown field \"colour\""}};
  EXPECT_EQ(s.errors(), want);
  EXPECT_NE(s, invalid_fields({want[0]}));  // the details take part in equality
}

TEST(Status, ErrorsOfASingleFailureIsThatFailure) {
  const std::vector<FieldError> one = {{.path = "count", .reason = "1 to 10000"}};
  EXPECT_EQ(invalid_argument("count", "1 to 10000").errors(), one);
  EXPECT_EQ(invalid_fields(one).errors(), one);
  EXPECT_EQ(invalid_fields(one).to_string(), "count: 1 to 10000");  // the field named once
  const std::vector<FieldError> whole = {{.path = "", .reason = "no such job"}};
  EXPECT_EQ(not_found("no such job").errors(), whole);
  EXPECT_TRUE(Status().errors().empty());
}

TEST(Status, InvalidFieldsOfNothingIsABug) {
  EXPECT_DEATH((void)invalid_fields({}), "CHECK failed");
}

TEST(Status, ResourceExhaustedCarriesItsWait) {
  const Status s = resource_exhausted("tenant a is over its submit rate of 1/s", seconds(7));
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(s.retry_after(), seconds(7));
  EXPECT_EQ(s.message(), "tenant a is over its submit rate of 1/s");
  EXPECT_EQ(not_found("x").retry_after(), Duration(0));
  EXPECT_NE(s, resource_exhausted("tenant a is over its submit rate of 1/s", seconds(8)));
}

TEST(ErrorReason, NamesAreStable) {
  EXPECT_EQ(to_string(ErrorReason::kNone), "none");
  EXPECT_EQ(to_string(ErrorReason::kStaleEpoch), "stale_epoch");
  EXPECT_EQ(to_string(ErrorReason::kFenced), "fenced");
  EXPECT_EQ(to_string(ErrorReason::kStaleAttempt), "stale_attempt");
  EXPECT_EQ(to_string(ErrorReason::kRaced), "raced");
}

TEST(StatusCode, NamesAreStable) {
  EXPECT_EQ(to_string(StatusCode::kResourceExhausted), "resource_exhausted");
  EXPECT_EQ(to_string(StatusCode::kFailedPrecondition), "failed_precondition");
}

}  // namespace
}  // namespace corral::core
