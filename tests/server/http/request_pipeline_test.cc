// The RequestPipeline on its own (request_pipeline.h): a small route table of test
// handlers served over real HTTP on loopback, against a real SQLite store. What every
// route of both surfaces relies on: declared roles and node scope are checked before a
// handler runs, a keyed write runs once however often it is retried, a refusal carries
// its status and Retry-After, and Effects apply only after a commit.
#include "server/http/request_pipeline.h"

#include <atomic>
#include <httplib.h>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "server/base/crypto.h"
#include "testing/corrald_process.h"
#include "testing/store_fixture.h"

namespace corral::testing {
namespace {

using nlohmann::json;

struct CountingSignals : server::SchedulerSignals {
  std::atomic<int> submitted{0}, capacity{0}, full{0};
  void job_submitted(core::JobId) override { ++submitted; }
  void capacity_changed() override { ++capacity; }
  void wake() override { ++full; }
};

class RequestPipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    open_or_skip(factory_, store_);
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_TRUE(store_
                    ->transact([&](store::Tx& tx) {
                      for (const auto& [token, role, node] :
                           std::vector<std::tuple<std::string, std::string, std::string>>{
                               {"t-admin", "admin", ""},
                               {"t-member", "member", ""},
                               {"t-agent", "agent", "n1"},
                               {"t-join", "join", ""}}) {
                        CORRAL_RETURN_IF_ERROR(
                            tx.security().insert_token({.hash = server::sha256_hex(token),
                                                        .role = role,
                                                        .tenant = role == "member" ? "default" : "",
                                                        .node = node,
                                                        .created_at = clock_.now()}));
                      }
                      return core::Status();
                    })
                    .ok());
    auth_ = std::make_unique<server::TokenAuth>(*store_, clock_);
    pipeline_ = std::make_unique<server::RequestPipeline>(*store_, clock_, metrics_, *auth_, board_,
                                                          signals_, keys_);
    using server::Call;
    using server::Reply;
    pipeline_->install(
        http_, {server::read_route("GET", "/admins", server::kAdmins,
                                   [this](const Call&, store::Tx&) -> core::Result<Reply> {
                                     ++runs_;
                                     return server::json_reply({{"ok", true}});
                                   }),
                server::write_route("POST", "/count", server::kUsers,
                                    [this](const Call& c, store::Tx&) -> core::Result<Reply> {
                                      ++runs_;
                                      Reply r = server::json_reply({{"run", runs_.load()}}, 201);
                                      r.effects.bump.insert("n1");
                                      r.wake_scheduler = c.body() == "wake";
                                      return r;
                                    }),
                server::write_route("POST", "/fails", server::kUsers,
                                    [this](const Call&, store::Tx&) -> core::Result<Reply> {
                                      ++runs_;
                                      return core::resource_exhausted("busy", core::seconds(7));
                                    }),
                [this] {
                  auto r =
                      server::call_route("POST", R"(/nodes/([^/]+)/report)", {server::Role::kAgent},
                                         [this](const Call& c) -> core::Result<Reply> {
                                           ++runs_;
                                           return server::json_reply({{"node", c.path_param(1)}});
                                         });
                  r.node_scoped = true;
                  return r;
                }()});
    pipeline_->install_fallbacks(http_);
    port_ = http_.bind_to_any_port("127.0.0.1");
    ASSERT_GT(port_, 0);
    serving_ = std::thread([this] { http_.listen_after_bind(); });
  }
  void TearDown() override {
    if (serving_.joinable()) {
      http_.stop();
      serving_.join();
    }
  }

  TestClient as(const std::string& token) {
    return TestClient("127.0.0.1:" + std::to_string(port_), token);
  }
  static json error_of(const HttpReply& r) {
    return json::parse(r.body, nullptr, false).value("error", json::object());
  }

  SqliteFactory factory_;
  std::unique_ptr<store::Store> store_;
  core::ManualClock clock_{core::time_from_ms(1'780'000'000'000)};
  server::Metrics metrics_;
  server::AssignmentBoard board_{100};
  CountingSignals signals_;
  std::unique_ptr<server::TokenAuth> auth_;
  const server::KeyRing keys_ = server::KeyRing::ephemeral();
  std::unique_ptr<server::RequestPipeline> pipeline_;
  httplib::Server http_;
  int port_ = 0;
  std::thread serving_;
  std::atomic<int> runs_{0};
};

TEST_F(RequestPipelineTest, DeclaredRolesAreCheckedBeforeTheHandlerRuns) {
  EXPECT_EQ(as("t-admin").get("/admins").status, 200);
  EXPECT_EQ(runs_, 1);
  const auto member = as("t-member").get("/admins");
  EXPECT_EQ(member.status, 403);
  EXPECT_EQ(error_of(member)["message"], "role member may not do this");
  const auto join = as("t-join").get("/admins");
  EXPECT_EQ(join.status, 403);
  EXPECT_EQ(error_of(join)["message"], "a join token may only call POST /v1/agents/join");
  const auto nobody = as("not-a-token").get("/admins");
  EXPECT_EQ(nobody.status, 401);
  EXPECT_EQ(runs_, 1);  // no refused call reached the handler
  EXPECT_FALSE(member.headers.at("X-Request-Id").empty());
  EXPECT_NE(member.headers.at("X-Request-Id"), join.headers.at("X-Request-Id"));
}

TEST_F(RequestPipelineTest, AnAgentActsOnlyForItsOwnNode) {
  const auto own = as("t-agent").post("/nodes/n1/report", "");
  EXPECT_EQ(own.status, 200);
  EXPECT_EQ(json::parse(own.body)["node"], "n1");
  const auto other = as("t-agent").post("/nodes/n2/report", "");
  EXPECT_EQ(other.status, 403);
  EXPECT_EQ(error_of(other)["message"], "an agent of node n1 may not act for node n2");
  EXPECT_EQ(as("t-admin").post("/nodes/n1/report", "").status, 403);
  EXPECT_EQ(runs_, 1);
}

TEST_F(RequestPipelineTest, AKeyedWriteRunsOnceAndItsRetryGetsTheFirstAnswer) {
  const std::int64_t v0 = board_.version("n1");
  const auto first = as("t-member").post("/count", "", {{"Idempotency-Key", "k1"}});
  ASSERT_EQ(first.status, 201);
  const std::int64_t v1 = board_.version("n1");
  EXPECT_GT(v1, v0);  // the Effects applied after the commit
  const auto again = as("t-member").post("/count", "", {{"Idempotency-Key", "k1"}});
  EXPECT_EQ(again.status, 201);
  EXPECT_EQ(again.body, first.body);
  EXPECT_EQ(again.headers.count("Idempotent-Replayed"), 1u);
  EXPECT_EQ(runs_, 1);
  EXPECT_EQ(board_.version("n1"), v1);  // a replay applies nothing again
  // The same key for another request is refused, naming the header.
  const auto reused = as("t-member").post("/count", "other", {{"Idempotency-Key", "k1"}});
  EXPECT_EQ(reused.status, 400);
  EXPECT_EQ(error_of(reused)["field"], "Idempotency-Key");
  // A key of bytes that are not printable ASCII is refused before any transaction.
  const auto bad = as("t-member").post("/count", "", {{"Idempotency-Key", "k\x7f"}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(error_of(bad)["field"], "Idempotency-Key");
  EXPECT_EQ(runs_, 1);
}

TEST_F(RequestPipelineTest, AWriteSignalsTheLoopAsItsReplyAsks) {
  ASSERT_EQ(as("t-member").post("/count", "").status, 201);
  EXPECT_EQ(signals_.full, 0);  // no wake asked, no wake in its Effects
  ASSERT_EQ(as("t-member").post("/count", "wake").status, 201);
  EXPECT_EQ(signals_.full, 1);
}

TEST_F(RequestPipelineTest, AFailedWriteAppliesNothingAndSaysWhenToRetry) {
  const std::int64_t v0 = board_.version("n1");
  const auto r = as("t-member").post("/fails", "");
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(r.headers.at("Retry-After"), "7");
  EXPECT_EQ(error_of(r)["message"], "busy");
  EXPECT_EQ(board_.version("n1"), v0);
  EXPECT_EQ(signals_.full + signals_.capacity + signals_.submitted, 0);
}

TEST_F(RequestPipelineTest, UnknownRoutesAnswerInTheErrorFormat) {
  const auto r = as("t-admin").get("/nowhere");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(error_of(r)["message"], "no such endpoint");
  EXPECT_FALSE(r.headers.at("X-Request-Id").empty());
}

}  // namespace
}  // namespace corral::testing
