// Idle interactive sessions (server/controllers/idle_sessions.h) on both stores and a
// manual clock: a session whose GPUs report no utilization is warned after its idle
// timeout and reclaimed (cancelled, its GPUs released) after the grace; one whose GPU
// is busy is left alone, and so is one whose telemetry stopped. The clock is advanced;
// nothing sleeps.
#include "server/controllers/idle_sessions.h"

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/clock.h"
#include "core/job_spec_parse.h"
#include "core/priority.h"
#include "server/base/model_json.h"
#include "testing/placed_job.h"
#include "testing/store_fixture.h"

namespace corral::testing {
namespace {

using core::JobId;
using core::JobPhase;
using core::NodeId;

constexpr std::int64_t kStartMs = 1'700'000'040'000;  // a whole minute: rollups align to it
constexpr std::int64_t kMinuteMs = 60'000;

struct NoSignals : server::SchedulerSignals {
  void job_submitted(JobId) override {}
  void capacity_changed() override {}
  void wake() override {}
};

template <typename Factory>
class IdleSessionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    open_or_skip(factory_, store_);
    if (this->IsSkipped() || this->HasFatalFailure()) return;
    clock_.set(core::time_from_ms(kStartMs));
    settings_ = {.idle_timeout_ms = 30 * kMinuteMs, .grace_ms = 10 * kMinuteMs, .idle_below = 0.05};
    ok(store_->transact([&](store::Tx& tx) {
      return tx.tenants().put_tenant({.id = core::TenantId("default"),
                                      .config_json = server::tenant_config_to_json(
                                          server::default_tenant_config(core::TenantId("default"))),
                                      .updated_at = clock_.now()});
    }));
  }

  void ok(const core::Status& s) { ASSERT_TRUE(s.ok()) << s.to_string(); }

  // A running session of 2 GPUs on `node` (GPUs 0 and 1), allocated now. `session`: its
  // spec's session mapping as JSON ("": none, corrald's timeout).
  JobId start_session(const std::string& node, const std::string& session = "") {
    const std::string text =
        R"({"name": "nb", "priorityClass": "interactive", "resources": {"gpus": 2},
            "command": ["jupyter", "lab"])" +
        (session.empty() ? "" : R"(, "session": )" + session) + "}";
    const auto parsed = core::parse_job_spec(text, core::SpecFormat::kJson);
    EXPECT_TRUE(parsed.ok());
    JobId id;
    ok(store_->transact([&](store::Tx& tx) {
      CORRAL_ASSIGN_OR_RETURN(const auto row,
                              insert_placed_job(tx,
                                                {.tenant = core::TenantId("default"),
                                                 .name = "nb",
                                                 .priority_class = "interactive",
                                                 .tier = core::kInteractiveTier,
                                                 .gpus = 2,
                                                 .spec_json = core::job_spec_to_json(*parsed.spec),
                                                 .now = clock_.now(),
                                                 .submitted_by = "alice"},
                                                JobPhase::kRunning, {{node, 0}, {node, 1}}));
      id = row.id;
      return core::Status();
    }));
    return id;
  }

  // `node`'s GPU 0 reports `util_0` and GPU 1 `util_1` now (as the telemetry sink writes).
  void sample(const std::string& node, double util_0, double util_1 = 0) {
    ok(store_->transact([&](store::Tx& tx) {
      return tx.records().insert_telemetry_batch(
          {{.node = NodeId(node), .gpu_index = 0, .time = clock_.now(), .utilization = util_0},
           {.node = NodeId(node), .gpu_index = 1, .time = clock_.now(), .utilization = util_1}});
    }));
  }

  // Advances the clock minute by minute for `minutes`, `node` sampling each minute, and
  // judges the sessions after each.
  void idle_minutes(const std::string& node, int minutes, double util = 0.01) {
    for (int m = 0; m < minutes; ++m) {
      clock_.advance(core::Duration(kMinuteMs));
      sample(node, util);
      check();
    }
  }

  int check() {
    server::IdleSessions sessions(*store_, clock_, board_, specs_, signals_, agents_, settings_);
    const auto reclaimed = sessions.check_once();
    EXPECT_TRUE(reclaimed.ok()) << reclaimed.status().to_string();
    return reclaimed.ok() ? *reclaimed : -1;
  }

  store::JobRow job(JobId id) {
    auto row = read_job(*store_, id);
    EXPECT_TRUE(row.ok()) << row.status().to_string();
    return row.ok() ? *row : store::JobRow{};
  }

  // The job's events of `kind`, their messages.
  std::vector<std::string> events(JobId id, const std::string& kind) {
    std::vector<std::string> out;
    ok(store_->read([&](store::Tx& tx) {
      CORRAL_ASSIGN_OR_RETURN(auto rows, tx.records().list_job_events(id));
      for (const auto& e : rows) {
        if (e.kind == kind) out.push_back(e.message);
      }
      return core::Status();
    }));
    return out;
  }

  Factory factory_;
  std::unique_ptr<store::Store> store_;
  core::ManualClock clock_;
  server::SessionSettings settings_;
  server::AgentSettings agents_;
  server::AssignmentBoard board_{1};
  server::SpecCache specs_;
  NoSignals signals_;
};

TYPED_TEST_SUITE(IdleSessionsTest, Stores, StoreNames);

// Idle (1% on each GPU) for the 30-minute timeout: warned, once; still idle 10 minutes
// later: cancelled with the reason, its GPUs released (no agent runs it here).
TYPED_TEST(IdleSessionsTest, AnIdleSessionIsWarnedThenReclaimed) {
  const JobId id = this->start_session("n1");
  this->idle_minutes("n1", 29);
  EXPECT_TRUE(this->events(id, "session_idle_warning").empty());
  this->idle_minutes("n1", 1);
  const auto warnings = this->events(id, "session_idle_warning");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(
      warnings[0],
      "idle session: no GPU of it reached 5% utilization since 1700000040000 (ms since epoch) "
      "(30m); it is reclaimed at 1700002440000 (ms since epoch) unless its GPUs are used");
  this->idle_minutes("n1", 9);
  EXPECT_EQ(this->job(id).phase, JobPhase::kRunning);
  EXPECT_EQ(this->events(id, "session_idle_warning").size(), 1u);  // warned once
  EXPECT_EQ(this->check(), 0);
  this->clock_.advance(core::Duration(kMinuteMs));
  this->sample("n1", 0.0);
  EXPECT_EQ(this->check(), 1);
  const store::JobRow after = this->job(id);
  EXPECT_EQ(after.phase, JobPhase::kCancelled);
  EXPECT_EQ(after.reason,
            "reclaimed: idle session: no GPU of it reached 5% utilization since 1700000040000 (ms "
            "since epoch) (40m); warned at 1700001840000 (ms since epoch)");
  EXPECT_EQ(this->events(id, "cancelled"), std::vector<std::string>{after.reason});
}

// One GPU of two busy (40%) every minute: never warned. A busy minute after the warning
// voids it: the grace passes without a reclaim, and a new warning needs a new idle period.
TYPED_TEST(IdleSessionsTest, ABusySessionIsNotReclaimed) {
  const JobId busy = this->start_session("n1");
  for (int m = 0; m < 60; ++m) {
    this->clock_.advance(core::Duration(kMinuteMs));
    this->sample("n1", 0.0, 0.40);
    EXPECT_EQ(this->check(), 0);
  }
  EXPECT_TRUE(this->events(busy, "session_idle_warning").empty());
  EXPECT_EQ(this->job(busy).phase, JobPhase::kRunning);

  const JobId woken = this->start_session("n2", R"({"idleTimeout": "20m"})");
  this->idle_minutes("n2", 20);  // its own timeout
  ASSERT_EQ(this->events(woken, "session_idle_warning").size(), 1u);
  this->idle_minutes("n2", 1, 0.9);  // used again
  this->idle_minutes("n2", 15);      // past the grace, idle again but not for 20m
  EXPECT_EQ(this->job(woken).phase, JobPhase::kRunning);
  EXPECT_EQ(this->events(woken, "session_idle_warning").size(), 1u);
  // Idle 20 minutes since the end of the minute it was used in: warned again.
  this->idle_minutes("n2", 5);
  EXPECT_EQ(this->events(woken, "session_idle_warning").size(), 1u);
  this->idle_minutes("n2", 1);
  EXPECT_EQ(this->events(woken, "session_idle_warning").size(), 2u);
}

// Telemetry stopped (an agent down, samples dropped): nobody knows whether the session is
// idle, so it is neither warned nor reclaimed, however long it runs.
TYPED_TEST(IdleSessionsTest, ASessionWithoutTelemetryIsLeftAlone) {
  const JobId id = this->start_session("n1");
  this->idle_minutes("n1", 5);
  this->clock_.advance(core::Duration(120 * kMinuteMs));
  EXPECT_EQ(this->check(), 0);
  EXPECT_TRUE(this->events(id, "session_idle_warning").empty());
  EXPECT_EQ(this->job(id).phase, JobPhase::kRunning);
}

TEST(JudgeIdle, WarnsAtTheTimeoutAndReclaimsAfterTheGrace) {
  const server::SessionSettings settings{.idle_timeout_ms = 60 * kMinuteMs,
                                         .grace_ms = 15 * kMinuteMs};
  const core::Time t0 = core::time_from_ms(kStartMs);
  const auto at = [&](int minutes) { return t0 + core::Duration(minutes * kMinuteMs); };
  server::IdleFacts facts{.started_at = t0, .idle_timeout = core::Duration(60 * kMinuteMs)};
  facts.last_sample = at(59);
  EXPECT_EQ(server::judge_idle(facts, settings, at(59)).action, server::IdleAction::kNone);
  facts.last_sample = at(60);
  EXPECT_EQ(server::judge_idle(facts, settings, at(60)).action, server::IdleAction::kWarn);
  facts.warned_at = at(60);
  facts.last_sample = at(74);
  EXPECT_EQ(server::judge_idle(facts, settings, at(74)).action, server::IdleAction::kNone);
  facts.last_sample = at(75);
  EXPECT_EQ(server::judge_idle(facts, settings, at(75)).action, server::IdleAction::kReclaim);
  // Busy after the warning: the warning no longer counts.
  facts.last_busy = at(70);
  EXPECT_EQ(server::judge_idle(facts, settings, at(75)).action, server::IdleAction::kNone);
  EXPECT_EQ(server::judge_idle(facts, settings, at(75)).idle_since, at(70));
  // No sample for more than 5 minutes: unknown.
  facts.last_busy.reset();
  EXPECT_EQ(server::judge_idle(facts, settings, at(80)).action, server::IdleAction::kReclaim);
  EXPECT_EQ(server::judge_idle(facts, settings, at(81)).action, server::IdleAction::kNone);
}

}  // namespace
}  // namespace corral::testing
