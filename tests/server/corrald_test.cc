// corrald as a whole (server::Corrald, server.h) inside the test process, on a
// core::ManualClock: the timeouts that govern nodes and jobs (heartbeat silence, restart
// backoff, stop grace) are crossed by advancing the clock, never by sleeping through
// them. Scripted agents (fake_agent.h) speak the agent protocol over real HTTP.
#include <chrono>
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "testing/fake_agent.h"
#include "testing/in_process_corrald.h"
#include "testing/store_fixture.h"

namespace corral::testing {
namespace {

using namespace std::chrono_literals;

// corrald's defaults for agents (30 s of silence loses a node, 10 s first backoff, 30 s
// stop grace): the test crosses each by moving the clock.
constexpr const char* kCorraldConfig =
    "scheduler:\n  tickMs: 20\n  batchWindowMs: 2\n  minRuntimeMs: 0\n";

class CorraldTest : public ::testing::Test, public ClusterCalls {
 protected:
  void SetUp() override {
    auto started = InProcessCorrald::start(dir_.path(), clock_, kCorraldConfig);
    ASSERT_TRUE(started.ok()) << started.status().to_string();
    corrald_ = std::move(*started);
    connect(*corrald_);
  }

  TempDir dir_;
  core::ManualClock clock_{core::time_from_ms(1'780'000'000'000)};
  std::unique_ptr<InProcessCorrald> corrald_;
};

TEST_F(CorraldTest, ThirtySecondsOfSilenceOnTheClockLoseTheNodeAndFenceItsAgent) {
  FakeAgent n1 = agent("n1"), n2 = agent("n2");
  const auto id = submit({{"resources", {{"gpus", 16}}}, {"maxRestarts", 2}});
  ASSERT_TRUE(wait_phase(id, "launching"));
  n1.round();
  n2.round();
  ASSERT_EQ(phase(id), "running");
  // 29 s on: n2 reports, n1 does not; neither is past the 30 s limit yet.
  clock_.advance(29s);
  n2.round();
  wait_cycles(3);
  EXPECT_EQ(body(admin().get("/v1/nodes/n1"))["agent"]["lost"], false);
  // 2 s more: n1 has been silent 31 s, n2 only 2 s.
  clock_.advance(2s);
  n2.round();
  ASSERT_TRUE(
      eventually([&] { return body(admin().get("/v1/nodes/n1"))["agent"]["lost"] == true; }, 10s));
  EXPECT_EQ(body(admin().get("/v1/nodes/n2"))["agent"]["lost"], false);
  EXPECT_EQ(body(admin().get("/v1/nodes/n1"))["agent"]["epoch"], 2);
  EXPECT_EQ(phase(id), "preempting");
  auto fenced = n1.heartbeat();
  EXPECT_EQ(fenced.status, 409);
  EXPECT_EQ(body(fenced)["error"]["code"], "fenced");
}

TEST_F(CorraldTest, AFailedRankWaitsOutItsBackoffOnTheClock) {
  FakeAgent n1 = agent("n1");
  const auto id = submit({{"resources", {{"gpus", 8}}}, {"maxRestarts", 2}});
  ASSERT_TRUE(wait_phase(id, "launching"));
  n1.round();
  ASSERT_EQ(phase(id), "running");
  n1.exit_all(id, 1);
  n1.heartbeat();
  ASSERT_TRUE(wait_phase(id, "pending"));
  EXPECT_EQ(held_by(id), 0u);
  // The first backoff is 10 s: however many cycles run, the job waits while the clock
  // stands still...
  wait_cycles(5);
  EXPECT_EQ(phase(id), "pending");
  EXPECT_NE(job(id).value("reason", "").find("restart backoff until"), std::string::npos)
      << job(id).dump();
  clock_.advance(9s);
  wait_cycles(5);
  EXPECT_EQ(phase(id), "pending");
  // ... and is placed again once the clock passes it.
  clock_.advance(2s);
  ASSERT_TRUE(wait_phase(id, "launching"));
  EXPECT_EQ(job(id)["attempt"], 2);
  EXPECT_EQ(held_by(id), 8u);
}

TEST_F(CorraldTest, NoTimerFreesTheGpusOfACancelledJobWhoseRanksNeverExit) {
  FakeAgent n1 = agent("n1");
  const auto id = submit({{"resources", {{"gpus", 8}}}});
  ASSERT_TRUE(wait_phase(id, "launching"));
  n1.round();
  ASSERT_EQ(phase(id), "running");
  ASSERT_EQ(admin().post("/v1/jobs/" + std::to_string(id) + "/cancel", "").status, 200);
  // The agent keeps reporting its rank as running (it never obeys the stop) while the
  // clock runs 10 times past the stop grace (30 s) and the backoff cap (300 s): the GPUs
  // are held all along, as only a confirmed exit frees them.
  for (int step = 0; step < 300; ++step) {
    clock_.advance(10s);
    n1.round();
  }
  wait_cycles(3);
  EXPECT_EQ(phase(id), "cancelled");
  EXPECT_EQ(held_by(id), 8u);
  EXPECT_EQ(body(admin().get("/v1/nodes/n1"))["agent"]["lost"], false);
  // The rank exits: now they are freed.
  n1.obey_stops();
  n1.heartbeat();
  EXPECT_TRUE(eventually([&] { return held_by(id) == 0; }, 10s));
}

}  // namespace
}  // namespace corral::testing
