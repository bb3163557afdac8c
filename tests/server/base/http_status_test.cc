// The error body and its codes: the one place both API surfaces format a failure.
#include "server/base/http_status.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace corral::server {
namespace {

using nlohmann::json;

TEST(HttpStatus, ErrorCodeComesFromTheReasonThenTheCode) {
  struct Case {
    const char* name;
    core::Status status;
    const char* code;
    int http;
  };
  const std::vector<Case> cases = {
      {"fenced", core::fenced("epoch 1 of node n1 is stale (current 2)"), "fenced", 409},
      {"stale attempt", core::stale_attempt("attempt 1 of job 7 is not its current attempt (2)"),
       "stale", 409},
      // The protocol's codes come from the reason alone: these messages changed nothing.
      {"worded like fenced", core::Status(core::StatusCode::kAborted, "fenced: epoch 1"), "aborted",
       409},
      {"worded like stale", core::failed_precondition("stale: attempt 1"), "failed_precondition",
       409},
      {"raced", core::raced("job changed while cancelling"), "aborted", 409},
      {"stale epoch", core::stale_epoch("scheduler epoch 1 of shard default is stale"), "aborted",
       409},
      {"not found", core::not_found("job 9 not found"), "not_found", 404},
      {"over rate", core::resource_exhausted("over its submit rate", core::seconds(3)),
       "resource_exhausted", 429},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(error_code(c.status), c.code);
    EXPECT_EQ(http_status(c.status.code()), c.http);
    const json body = json::parse(error_json(c.status));
    EXPECT_EQ(body["error"]["code"], c.code);
    EXPECT_EQ(body["error"]["message"], c.status.message());
  }
}

TEST(HttpStatus, ErrorBodyListsEveryFieldError) {
  const core::Status s =
      core::invalid_fields({{.path = "resources.gpus", .reason = "must be at least 1, got 0"},
                            {.path = "name", .reason = "is required"}});
  const json want = {{"error",
                      {{"code", "invalid_argument"},
                       {"message", "resources.gpus: must be at least 1, got 0; name: is required"},
                       {"field", "resources.gpus"},
                       {"details",
                        {{{"field", "resources.gpus"}, {"reason", "must be at least 1, got 0"}},
                         {{"field", "name"}, {"reason", "is required"}}}}}}};
  EXPECT_EQ(json::parse(error_json(s)), want);
}

TEST(HttpStatus, ErrorBodyOfOneErrorListsThatError) {
  const json want = {{"error",
                      {{"code", "invalid_argument"},
                       {"message", "limit: 1 to 10000"},
                       {"field", "limit"},
                       {"details", {{{"field", "limit"}, {"reason", "1 to 10000"}}}}}}};
  EXPECT_EQ(json::parse(error_json(core::invalid_argument("limit", "1 to 10000"))), want);
  const json fenced = json::parse(error_json(core::fenced("node n1 has not joined; join again")));
  EXPECT_EQ(fenced["error"]["details"],
            json({{{"field", ""}, {"reason", "node n1 has not joined; join again"}}}));
}

TEST(HttpStatus, RetryAfterIsWholeSecondsRoundedUp) {
  const auto wait = [](core::Duration d) {
    return retry_after_s(core::resource_exhausted("busy", d));
  };
  EXPECT_EQ(wait(core::seconds(7)), 7);
  EXPECT_EQ(wait(core::Duration(1500)), 2);
  EXPECT_EQ(wait(core::Duration(1)), 1);
  EXPECT_EQ(wait(core::Duration(0)), 1);  // a 429 always asks for some wait
  EXPECT_EQ(retry_after_s(core::Status(core::StatusCode::kResourceExhausted, "busy")), 1);
}

}  // namespace
}  // namespace corral::server
