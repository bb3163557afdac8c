// The lifecycle controller (server/controllers/lifecycle.h) against a real SQLite store on a manual
// clock: each public function's transitions, its refusals (the code, the reason and a
// message naming the job), that a refusal leaves the store as it was, and that GPUs go
// back to the pool only when every rank is confirmed gone, never on a timer.
//
// The test plays the agent's part by writing worker rows and agent sessions directly,
// as the heartbeat handler would.
#include "server/controllers/lifecycle.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/clock.h"
#include "core/job_spec_parse.h"
#include "server/base/model_json.h"
#include "server/controllers/node_health.h"
#include "server/controllers/retry_policy.h"
#include "testing/placed_job.h"
#include "testing/store_fixture.h"

namespace corral::testing {
namespace {

using core::JobId;
using core::JobPhase;
using core::NodeId;

constexpr std::int64_t kLifecycleStartMs = 1'700'000'000'000;

// `retry`: the spec's retry policy as JSON ("": none).
std::string spec(int gpus, int max_restarts, const std::string& retry = "") {
  return R"({"name": "train", "resources": {"gpus": )" + std::to_string(gpus) +
         R"(, "gpuTypes": ["H100"]}, "maxRestarts": )" + std::to_string(max_restarts) +
         (retry.empty() ? "" : R"(, "retry": )" + retry) + R"(, "command": ["run"]})";
}

// Records what the controller asks of the scheduler loop.
struct RecordingSignals : server::SchedulerSignals {
  std::vector<std::int64_t> submitted;
  int capacity = 0;
  int full = 0;  // wake(): a re-read of the whole queue
  void job_submitted(JobId id) override { submitted.push_back(id.value); }
  void capacity_changed() override { ++capacity; }
  void wake() override { ++full; }
};

class LifecycleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    open_or_skip(factory_, store_);
    if (IsSkipped() || HasFatalFailure()) return;
    clock_.set(core::time_from_ms(kLifecycleStartMs));
    settings_.stop_grace_ms = 30'000;
    settings_.restart_backoff_ms = 1'000;
    settings_.restart_backoff_max_ms = 8'000;
    settings_.node_lost_after_ms = 60'000;
    ok(store_->transact([&](store::Tx& tx) {
      CORRAL_RETURN_IF_ERROR(
          tx.tenants().put_tenant({.id = core::TenantId("default"),
                                   .config_json = server::tenant_config_to_json(
                                       server::default_tenant_config(core::TenantId("default"))),
                                   .updated_at = clock_.now()}));
      for (const char* n : {"n1", "n2"}) {
        CORRAL_RETURN_IF_ERROR(
            tx.nodes().upsert_node({.id = NodeId(n),
                                    .spec_json = std::string(R"({"id": ")") + n +
                                                 R"(", "gpuType": "H100", "gpuCount": 8})",
                                    .created_at = clock_.now(),
                                    .updated_at = clock_.now()}));
      }
      return core::Status();
    }));
  }

  void ok(const core::Status& s) { ASSERT_TRUE(s.ok()) << s.to_string(); }

  // A job of `gpus` GPUs in `phase`, attempt 1, holding GPUs first_gpu.. of each node in
  // `nodes` (gpus split evenly, in order, so rank r runs on nodes[r / per_node]).
  JobId place(int gpus, int max_restarts, JobPhase phase, const std::vector<std::string>& nodes,
              int first_gpu = 0, const std::string& retry = "") {
    const auto parsed =
        core::parse_job_spec(spec(gpus, max_restarts, retry), core::SpecFormat::kJson);
    EXPECT_TRUE(parsed.ok());
    std::vector<std::pair<std::string, std::int32_t>> held;
    const int per_node = gpus / static_cast<int>(nodes.size());
    for (const auto& n : nodes) {
      for (int g = first_gpu; g < first_gpu + per_node; ++g) held.emplace_back(n, g);
    }
    JobId id;
    ok(store_->transact([&](store::Tx& tx) {
      CORRAL_ASSIGN_OR_RETURN(const auto row,
                              insert_placed_job(tx,
                                                {.tenant = core::TenantId("default"),
                                                 .name = parsed.spec->name,
                                                 .priority_class = "",
                                                 .gpus = gpus,
                                                 .spec_json = core::job_spec_to_json(*parsed.spec),
                                                 .now = clock_.now()},
                                                phase, held));
      id = row.id;
      return core::Status();
    }));
    return id;
  }

  // An agent joins `node` (or heartbeats again): its session's heartbeat is now.
  void agent_on(const std::string& node, bool lost = false) {
    ok(store_->transact([&](store::Tx& tx) {
      return tx.agents().upsert_agent_session({.node = NodeId(node),
                                               .agent_url = "http://127.0.0.1:1",
                                               .joined_at = core::time_from_ms(kLifecycleStartMs),
                                               .heartbeat_at = clock_.now(),
                                               .lost = lost});
    }));
  }

  // The agent on `node` reports rank `rank` of attempt 1 of `job` "running" or "exited".
  void report(JobId job, int rank, const std::string& node, const std::string& state,
              int exit_code = 0, int signal = 0) {
    ok(store_->transact([&](store::Tx& tx) {
      return tx.agents().upsert_worker({.job = job,
                                        .attempt = 1,
                                        .rank = rank,
                                        .node = NodeId(node),
                                        .pid = 1000 + rank,
                                        .state = state == "exited"
                                                     ? core::WorkerStatus::State::kExited
                                                     : core::WorkerStatus::State::kRunning,
                                        .exit_code = exit_code,
                                        .signal = signal,
                                        .started_at = clock_.now(),
                                        .exited_at = clock_.now()});
    }));
  }

  // Runs `fn` in one transaction with a fresh Effects (a retried attempt starts over).
  core::Status run(
      const std::function<core::Status(store::Tx&, const server::LifecycleContext&)>& fn) {
    return store_->transact([&](store::Tx& tx) {
      fx_ = server::Effects();
      const server::LifecycleContext ctx{board_, settings_, clock_.now(), fx_, specs_};
      return fn(tx, ctx);
    });
  }

  core::Status reconcile(JobId id) {
    const auto s = run([&](store::Tx& tx, const server::LifecycleContext& ctx) {
      return server::reconcile_job(tx, ctx, id);
    });
    if (s.ok()) server::apply_effects(fx_, board_);  // as the callers do after the commit
    return s;
  }

  store::JobRow job(JobId id) {
    auto row = read_job(*store_, id);
    EXPECT_TRUE(row.ok()) << row.status().to_string();
    return row.ok() ? *row : store::JobRow{};
  }

  std::size_t held(JobId id) {
    std::vector<store::AllocationRow> rows;
    ok(store_->read([&](store::Tx& tx) {
      CORRAL_ASSIGN_OR_RETURN(rows, tx.allocations().list_allocations(id));
      return core::Status();
    }));
    return static_cast<std::size_t>(
        std::count_if(rows.begin(), rows.end(), [](const auto& a) { return a.active; }));
  }

  std::vector<std::string> events(JobId id) {
    std::vector<std::string> out;
    ok(store_->read([&](store::Tx& tx) {
      CORRAL_ASSIGN_OR_RETURN(auto rows, tx.records().list_job_events(id));
      for (const auto& e : rows) out.push_back(e.kind + ": " + e.message);
      return core::Status();
    }));
    return out;
  }

  SqliteFactory factory_;
  std::unique_ptr<store::Store> store_;
  core::ManualClock clock_;
  server::AgentSettings settings_;
  server::AssignmentBoard board_{1};
  server::SpecCache specs_;
  server::Effects fx_;
};

using Stop = std::pair<std::int64_t, std::string>;

TEST(RestartBackoff, DoublesFromTheBaseUpToTheCap) {
  const server::AgentSettings s{.restart_backoff_ms = 1000, .restart_backoff_max_ms = 5000};
  EXPECT_EQ(server::restart_backoff(s, 0), core::Duration(1000));
  EXPECT_EQ(server::restart_backoff(s, 1), core::Duration(1000));
  EXPECT_EQ(server::restart_backoff(s, 2), core::Duration(2000));
  EXPECT_EQ(server::restart_backoff(s, 3), core::Duration(4000));
  EXPECT_EQ(server::restart_backoff(s, 4), core::Duration(5000));
  EXPECT_EQ(server::restart_backoff(s, 60), core::Duration(5000));  // no overflow past the cap
  const server::AgentSettings capped{.restart_backoff_ms = 9000, .restart_backoff_max_ms = 5000};
  EXPECT_EQ(server::restart_backoff(capped, 1), core::Duration(5000));
}

TEST(Effects, MergeIsAUnionAndASum) {
  server::Effects a{.bump = {"n1"}, .stops = {{1, "n1"}}, .released = {1}, .succeeded = 1};
  const server::Effects b{.bump = {"n2"},
                          .stops = {{2, "n2"}},
                          .requeued = {2},
                          .wake_scheduler = true,
                          .succeeded = 2,
                          .failed = 1};
  a.merge(b);
  EXPECT_EQ(a.bump, (std::set<std::string>{"n1", "n2"}));
  EXPECT_EQ(a.stops, (std::set<Stop>{{1, "n1"}, {2, "n2"}}));
  EXPECT_EQ(a.released, std::set<std::int64_t>{1});
  EXPECT_EQ(a.requeued, std::set<std::int64_t>{2});
  EXPECT_TRUE(a.wake_scheduler);
  EXPECT_EQ(a.succeeded, 3);
  EXPECT_EQ(a.failed, 1);
}

// A stop is marked (and its node bumped) unless the job's GPUs were released in the same
// transaction: then the job is forgotten instead.
TEST(ApplyEffects, MarksStopsExceptForReleasedJobs) {
  server::AssignmentBoard board(100);
  const std::int64_t n3_before = board.version("n3");
  server::apply_effects({.bump = {"n3"}, .stops = {{1, "n1"}, {2, "n2"}}, .released = {2}}, board);
  ASSERT_TRUE(board.stop_version(1, "n1").has_value());
  EXPECT_EQ(*board.stop_version(1, "n1"), board.version("n1"));
  EXPECT_FALSE(board.stop_version(2, "n2").has_value());
  EXPECT_NE(board.version("n3"), n3_before);
}

TEST(WakeLoop, SignalsRequeuedJobsAndCapacityOnlyWhenAsked) {
  RecordingSignals loop;
  server::wake_loop({.requeued = {7}, .wake_scheduler = false}, loop);
  EXPECT_TRUE(loop.submitted.empty());
  EXPECT_EQ(loop.capacity, 0);
  server::wake_loop({.requeued = {7, 9}, .wake_scheduler = true}, loop);
  EXPECT_EQ(loop.submitted, (std::vector<std::int64_t>{7, 9}));
  EXPECT_EQ(loop.full, 0);  // requeued jobs are read one by one, never the whole queue
  EXPECT_EQ(loop.capacity, 1);
}

TEST_F(LifecycleTest, IsManagedWhenAnyNodeOfTheJobHasAnAgent) {
  const JobId id = place(16, 0, JobPhase::kLaunching, {"n1", "n2"});
  auto managed = [&] {
    bool out = false;
    ok(store_->read([&](store::Tx& tx) {
      CORRAL_ASSIGN_OR_RETURN(auto allocs, tx.allocations().list_allocations(id));
      CORRAL_ASSIGN_OR_RETURN(out, server::is_managed(tx.agents(), allocs));
      return core::Status();
    }));
    return out;
  };
  EXPECT_FALSE(managed());
  agent_on("n2");
  EXPECT_TRUE(managed());
}

// launching -> running once every rank reports, not before; then running -> succeeded
// once every rank exited 0, and the GPUs go back with the run kept for estimates.
TEST_F(LifecycleTest, ReconcileStartsThenSucceedsAGang) {
  agent_on("n1");
  agent_on("n2");
  const JobId id = place(4, 0, JobPhase::kLaunching, {"n1", "n2"});
  report(id, 0, "n1", "running");
  report(id, 1, "n1", "running");
  ok(reconcile(id));
  EXPECT_EQ(job(id).phase, JobPhase::kLaunching) << "half the ranks are not enough";
  report(id, 2, "n2", "running");
  report(id, 3, "n2", "running");
  ok(reconcile(id));
  EXPECT_EQ(job(id).phase, JobPhase::kRunning);
  EXPECT_EQ(job(id).reason, "every rank of attempt 1 started");
  EXPECT_EQ(events(id).back(), "started: every rank of attempt 1 started");
  ok(reconcile(id));  // idempotent
  EXPECT_EQ(job(id).phase, JobPhase::kRunning);

  clock_.advance(core::Duration(90'000));
  for (int r = 0; r < 3; ++r) report(id, r, r < 2 ? "n1" : "n2", "exited");
  ok(reconcile(id));
  EXPECT_EQ(job(id).phase, JobPhase::kRunning) << "rank 3 still runs";
  EXPECT_EQ(held(id), 4u);
  report(id, 3, "n2", "exited");
  ok(reconcile(id));
  const store::JobRow done = job(id);
  EXPECT_EQ(done.phase, JobPhase::kSucceeded);
  EXPECT_EQ(done.reason, "every rank of attempt 1 exited 0");
  EXPECT_EQ(held(id), 0u);
  EXPECT_EQ(fx_.succeeded, 1);
  EXPECT_EQ(fx_.released, std::set<std::int64_t>{id.value});
  EXPECT_EQ(fx_.bump, (std::set<std::string>{"n1", "n2"}));
  EXPECT_TRUE(fx_.wake_scheduler);
  const auto ev = events(id);
  ASSERT_GE(ev.size(), 2u);
  EXPECT_EQ(ev[ev.size() - 2], "finished: succeeded: every rank of attempt 1 exited 0");
  EXPECT_EQ(ev.back(), "released: every rank of attempt 1 confirmed stopped; GPUs released");
  std::vector<store::RunRow> runs;
  ok(store_->read([&](store::Tx& tx) {
    CORRAL_ASSIGN_OR_RETURN(runs, tx.records().list_runs({"train"}));
    return core::Status();
  }));
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].job, id);
  EXPECT_EQ(runs[0].run, core::Duration(90'000));
}

// A failed rank with restarts left ends the attempt: preempting with the restart counted
// and its backoff set, every node asked to stop, the GPUs held until the others exit;
// then requeued behind the backoff.
TEST_F(LifecycleTest, RankFailureWithRestartsLeftStopsTheGangThenRequeues) {
  agent_on("n1");
  const JobId id = place(2, 1, JobPhase::kRunning, {"n1"});
  report(id, 0, "n1", "running");
  report(id, 1, "n1", "exited", 3);
  ok(reconcile(id));
  const store::JobRow stopping = job(id);
  EXPECT_EQ(stopping.phase, JobPhase::kPreempting);
  EXPECT_EQ(stopping.restarts, 1);
  EXPECT_EQ(stopping.not_before, clock_.now() + core::Duration(1'000));
  EXPECT_EQ(stopping.reason,
            "rank 1 exited with code 3 in attempt 1; restart 1 of 1 once every rank has stopped");
  EXPECT_EQ(fx_.stops, (std::set<Stop>{{id.value, "n1"}}));
  EXPECT_EQ(held(id), 2u) << "rank 0 still runs";
  const auto ev = events(id);
  ASSERT_GE(ev.size(), 2u);
  EXPECT_EQ(ev[ev.size() - 2], "rank failed: " + stopping.reason);
  EXPECT_EQ(ev.back(), "retry: exit: rank 1 exited with code 3 in attempt 1; restart 1 of 1");

  report(id, 0, "n1", "exited", 0, 15);
  ok(reconcile(id));
  const store::JobRow requeued = job(id);
  EXPECT_EQ(requeued.phase, JobPhase::kPending);
  EXPECT_EQ(requeued.reason, "restart backoff until " +
                                 std::to_string(core::to_ms(stopping.not_before)) +
                                 " (ms since epoch)");
  EXPECT_EQ(requeued.queued_at, clock_.now());
  EXPECT_EQ(held(id), 0u);
  EXPECT_EQ(fx_.requeued, std::set<std::int64_t>{id.value});
  EXPECT_EQ(fx_.released, std::set<std::int64_t>{id.value});
  EXPECT_EQ(events(id).back(), "requeued: attempt 1 confirmed stopped; " + requeued.reason);
}

// Out of restarts the job fails; its GPUs stay held until the other rank is gone.
TEST_F(LifecycleTest, RankKilledOutOfRestartsFailsAndHoldsGpusUntilConfirmed) {
  agent_on("n1");
  const JobId id = place(2, 0, JobPhase::kRunning, {"n1"});
  report(id, 0, "n1", "exited", 0, 9);
  report(id, 1, "n1", "running");
  ok(reconcile(id));
  const store::JobRow failed = job(id);
  EXPECT_EQ(failed.phase, JobPhase::kFailed);
  EXPECT_EQ(failed.reason,
            "rank 0 killed by signal 9 in attempt 1; out of restarts (maxRestarts 0)");
  EXPECT_EQ(failed.restarts, 0);
  EXPECT_EQ(fx_.failed, 1);
  EXPECT_EQ(fx_.stops, (std::set<Stop>{{id.value, "n1"}}));
  EXPECT_EQ(held(id), 2u);
  report(id, 1, "n1", "exited", 0, 15);
  ok(reconcile(id));
  EXPECT_EQ(held(id), 0u);
  EXPECT_EQ(job(id).phase, JobPhase::kFailed);
}

// A job is stopped at its maxRuntime (72 h by default), whatever restarts it has left: at
// the first reconcile past it, it fails and every rank is asked to stop; its GPUs stay
// held until the agent confirms the ranks are gone.
TEST_F(LifecycleTest, AJobPastItsMaxRuntimeFailsAndItsRanksAreStopped) {
  agent_on("n1");
  const JobId id = place(2, 3, JobPhase::kRunning, {"n1"});
  report(id, 0, "n1", "running");
  report(id, 1, "n1", "running");
  clock_.advance(core::Duration(72 * 3'600'000 - 1));
  ok(reconcile(id));
  EXPECT_EQ(job(id).phase, JobPhase::kRunning) << "1 ms inside its limit";
  clock_.advance(core::Duration(1));
  ok(reconcile(id));
  const store::JobRow failed = job(id);
  EXPECT_EQ(failed.phase, JobPhase::kFailed);
  EXPECT_EQ(failed.reason, "ran past its maxRuntime of 3d in attempt 1");
  EXPECT_EQ(failed.restarts, 0);
  EXPECT_EQ(events(id).back(), "finished: failed: " + failed.reason);
  EXPECT_EQ(fx_.failed, 1);
  EXPECT_EQ(fx_.stops, (std::set<Stop>{{id.value, "n1"}}));
  EXPECT_EQ(held(id), 2u);
  report(id, 0, "n1", "exited", 0, 15);
  report(id, 1, "n1", "exited", 0, 15);
  ok(reconcile(id));
  EXPECT_EQ(held(id), 0u);
  EXPECT_EQ(job(id).phase, JobPhase::kFailed);
}

// A rank the agent never listed counts as gone only once the agent applied the stop's
// version (or a later one); an older applied version proves nothing.
TEST_F(LifecycleTest, NeverStartedRankIsConfirmedByTheAppliedStopVersion) {
  agent_on("n1");
  const JobId id = place(2, 0, JobPhase::kCancelled, {"n1"});
  const std::int64_t before = board_.version("n1");
  board_.set_applied("n1", before);
  ok(reconcile(id));
  EXPECT_EQ(fx_.stops, (std::set<Stop>{{id.value, "n1"}}));
  EXPECT_EQ(held(id), 2u);
  const auto stop = board_.stop_version(id.value, "n1");
  ASSERT_TRUE(stop.has_value());
  EXPECT_GT(*stop, before);
  ok(reconcile(id));
  EXPECT_EQ(held(id), 2u) << "the agent has not applied the stop yet";
  EXPECT_TRUE(fx_.stops.empty()) << "the stop is marked once";
  board_.set_applied("n1", *stop);
  ok(reconcile(id));
  EXPECT_EQ(held(id), 0u);
  EXPECT_EQ(job(id).phase, JobPhase::kCancelled);
  EXPECT_EQ(fx_.released, std::set<std::int64_t>{id.value});
}

// A fenced (lost) node's ranks are confirmed by the fence; the others by their exits.
TEST_F(LifecycleTest, FencedNodeConfirmsItsRanks) {
  agent_on("n1");
  agent_on("n2", /*lost=*/true);
  const JobId id = place(4, 0, JobPhase::kCancelled, {"n1", "n2"});
  report(id, 0, "n1", "running");
  report(id, 1, "n1", "running");
  report(id, 2, "n2", "running");  // a late report from before the fence
  ok(reconcile(id));
  EXPECT_EQ(held(id), 4u);
  EXPECT_EQ(fx_.stops, (std::set<Stop>{{id.value, "n1"}})) << "no stop is sent to a fenced node";
  report(id, 0, "n1", "exited", 0, 15);
  report(id, 1, "n1", "exited", 0, 15);
  ok(reconcile(id));
  EXPECT_EQ(held(id), 0u);
}

// With no agent on any of its nodes nothing runs and nothing reports: reconcile leaves
// the job alone.
TEST_F(LifecycleTest, ReconcileLeavesAgentLessJobsAlone) {
  const JobId id = place(2, 0, JobPhase::kLaunching, {"n1"});
  const auto before = events(id);
  ok(reconcile(id));
  EXPECT_EQ(job(id).phase, JobPhase::kLaunching);
  EXPECT_EQ(held(id), 2u);
  EXPECT_EQ(events(id), before);
  ok(reconcile(JobId(999)));  // an unknown job is no error either
}

TEST_F(LifecycleTest, PreemptManagedJobAsksEveryNodeToStopAndKeepsGpus) {
  agent_on("n1");
  const JobId id = place(16, 0, JobPhase::kRunning, {"n1", "n2"});
  const store::JobRow row = job(id);
  ok(run([&](store::Tx& tx, const server::LifecycleContext& ctx) {
    return server::preempt_job(tx, ctx, row,
                               {.reason = "preempted for job 9",
                                .grace = core::Duration(120'000),
                                .counts_as_preemption = true});
  }));
  const store::JobRow after = job(id);
  EXPECT_EQ(after.phase, JobPhase::kPreempting);
  EXPECT_EQ(after.reason, "preempted for job 9");
  EXPECT_EQ(after.stop_grace_ms, 120'000);
  EXPECT_EQ(after.preemptions, 1);
  EXPECT_EQ(after.updated_at, clock_.now());
  EXPECT_EQ(held(id), 16u);
  EXPECT_EQ(fx_.stops, (std::set<Stop>{{id.value, "n1"}, {id.value, "n2"}}));
  EXPECT_EQ(fx_.bump, (std::set<std::string>{"n1", "n2"}));
  EXPECT_TRUE(fx_.released.empty());
  const auto ev = events(id);
  ASSERT_GE(ev.size(), 2u);
  EXPECT_EQ(ev[ev.size() - 2], "preempted: preempted for job 9");
  // Without a retry policy a preempted job always goes back: a retry of category preemption.
  EXPECT_EQ(ev.back(),
            "retry: preemption: preempted for job 9; requeued (retry.onPreemption always)");
}

// retry.onPreemption 1: the first preemption requeues the job (a retry event, category
// preemption, on its own budget: maxRestarts 0 is untouched); the second ends it.
TEST_F(LifecycleTest, OnPreemptionRequeuesItsBudgetThenEndsTheJob) {
  const JobId id = place(8, 0, JobPhase::kLaunching, {"n1"}, 0, R"({"onPreemption": 1})");
  const auto preempt = [&](const std::string& reason) {
    const store::JobRow row = job(id);
    ok(run([&](store::Tx& tx, const server::LifecycleContext& ctx) {
      return server::preempt_job(tx, ctx, row, {.reason = reason, .counts_as_preemption = true});
    }));
  };
  preempt("preempted for job 9");
  store::JobRow after = job(id);
  EXPECT_EQ(after.phase, JobPhase::kPending);  // agent-less: requeued at once
  EXPECT_EQ(after.preemptions, 1);
  EXPECT_EQ(after.restarts, 0);
  EXPECT_TRUE(after.retry_category.empty());
  const auto ev = events(id);
  EXPECT_NE(std::find(ev.begin(), ev.end(),
                      "retry: preemption: preempted for job 9; requeue 1 of 1 "
                      "(retry.onPreemption)"),
            ev.end());
  // Placed again (as the scheduler would), then preempted once more.
  const store::JobRow requeued = job(id);
  ok(store_->transact([&](store::Tx& tx) {
    store::JobRow next = requeued;
    next.phase = JobPhase::kLaunching;
    next.attempt = 2;
    CORRAL_ASSIGN_OR_RETURN(const bool won, tx.jobs().update_job(next, JobPhase::kPending));
    if (!won) return core::raced("place");
    return tx.allocations().insert_allocation({.job = id,
                                               .attempt = 2,
                                               .node = NodeId("n1"),
                                               .gpu_index = 0,
                                               .gpu_type = core::GpuTypeId("H100"),
                                               .epoch = 1,
                                               .created_at = clock_.now()});
  }));
  preempt("preempted for job 10");
  after = job(id);
  EXPECT_EQ(after.phase, JobPhase::kFailed);
  EXPECT_EQ(after.reason,
            "preempted (preempted for job 10); out of requeues after preemption "
            "(retry.onPreemption 1)");
  EXPECT_EQ(held(id), 0u);
  EXPECT_EQ(events(id).back(), "finished: failed: " + after.reason);
}

// retry.onPreemption never, on a job agents run: it is asked to stop like any preempted
// job (its GPUs held until its ranks are gone), then ends instead of going back.
TEST_F(LifecycleTest, OnPreemptionNeverEndsTheJobOnceItsRanksAreGone) {
  agent_on("n1");
  const JobId id = place(2, 3, JobPhase::kRunning, {"n1"}, 0, R"({"onPreemption": "never"})");
  report(id, 0, "n1", "running");
  report(id, 1, "n1", "running");
  const store::JobRow row = job(id);
  ok(run([&](store::Tx& tx, const server::LifecycleContext& ctx) {
    return server::preempt_job(tx, ctx, row,
                               {.reason = "preempted for job 9", .counts_as_preemption = true});
  }));
  EXPECT_EQ(job(id).phase, JobPhase::kPreempting);
  EXPECT_EQ(events(id).back(),
            "preempted: preempted for job 9; not retried after a preemption (retry.onPreemption "
            "never)");
  EXPECT_EQ(held(id), 2u);
  report(id, 0, "n1", "exited", 143, 15);
  report(id, 1, "n1", "exited", 143, 15);
  ok(reconcile(id));
  const store::JobRow after = job(id);
  EXPECT_EQ(after.phase, JobPhase::kFailed);
  EXPECT_EQ(after.reason,
            "preempted (preempted for job 9); not retried after a preemption (retry.onPreemption "
            "never)");
  EXPECT_EQ(held(id), 0u);
}

// No agent runs it: the GPUs go back at once and the job is requeued (the pre-agent
// behaviour), and a drain's stop does not count against the preemption cap.
TEST_F(LifecycleTest, PreemptAgentLessJobReleasesAndRequeuesAtOnce) {
  const JobId id = place(8, 0, JobPhase::kLaunching, {"n1"});
  const store::JobRow row = job(id);
  ok(run([&](store::Tx& tx, const server::LifecycleContext& ctx) {
    return server::preempt_job(tx, ctx, row, {.reason = "drain"});
  }));
  const store::JobRow after = job(id);
  EXPECT_EQ(after.phase, JobPhase::kPending);
  EXPECT_EQ(after.reason, "requeued after attempt 1 stopped");
  EXPECT_EQ(after.preemptions, 0);
  EXPECT_EQ(held(id), 0u);
  EXPECT_TRUE(fx_.stops.empty());
  EXPECT_EQ(fx_.released, std::set<std::int64_t>{id.value});
  EXPECT_EQ(fx_.requeued, std::set<std::int64_t>{id.value});
  EXPECT_TRUE(fx_.wake_scheduler);
  const auto ev = events(id);
  ASSERT_GE(ev.size(), 2u);
  EXPECT_EQ(ev[ev.size() - 2], "preempted: drain");
  EXPECT_EQ(ev.back(), "requeued: attempt 1 confirmed stopped; requeued after attempt 1 stopped");
}

// A job that is not launching or running cannot be preempted: FailedPrecondition naming
// its phase and the event, and nothing changes (row, GPUs, events, effects).
TEST_F(LifecycleTest, PreemptRefusesAJobThatIsNotRunning) {
  agent_on("n1");
  int first_gpu = 0;
  for (const JobPhase phase : {JobPhase::kPending, JobPhase::kPreempting, JobPhase::kSucceeded}) {
    SCOPED_TRACE(std::string(core::to_string(phase)));
    const JobId id = place(2, 0, phase, {"n1"}, first_gpu);
    first_gpu += 2;
    const store::JobRow before = job(id);
    const auto events_before = events(id);
    const core::Status s = run([&](store::Tx& tx, const server::LifecycleContext& ctx) {
      return server::preempt_job(tx, ctx, before, {.reason = "r"});
    });
    EXPECT_EQ(s.code(), core::StatusCode::kFailedPrecondition);
    EXPECT_EQ(s.message(), "job " + std::to_string(id.value) + " in phase " +
                               std::string(core::to_string(phase)) + " cannot be preempted");
    EXPECT_EQ(job(id).phase, phase);
    EXPECT_EQ(job(id).updated_at, before.updated_at);
    EXPECT_EQ(held(id), 2u);
    EXPECT_EQ(events(id), events_before);
    EXPECT_TRUE(fx_.stops.empty());
    EXPECT_TRUE(fx_.bump.empty());
  }
}

// A caller's row that is out of date (the job moved meanwhile) loses the compare-and-set:
// Aborted with reason kRaced, and the stored job is untouched.
TEST_F(LifecycleTest, PreemptWithAStaleRowIsRacedAndChangesNothing) {
  agent_on("n1");
  const JobId id = place(2, 0, JobPhase::kLaunching, {"n1"});
  store::JobRow stale = job(id);
  stale.phase = JobPhase::kRunning;  // what the caller believes; the store says launching
  const core::Status s = run([&](store::Tx& tx, const server::LifecycleContext& ctx) {
    return server::preempt_job(tx, ctx, stale, {.reason = "r"});
  });
  EXPECT_EQ(s.code(), core::StatusCode::kAborted);
  EXPECT_TRUE(s.is(core::ErrorReason::kRaced));
  EXPECT_EQ(s.message(), "job changed meanwhile");
  EXPECT_EQ(job(id).phase, JobPhase::kLaunching);
  EXPECT_EQ(job(id).preemptions, 0);
  EXPECT_EQ(held(id), 2u);
}

// Drain preempts exactly the launching and running jobs with GPUs on the node.
TEST_F(LifecycleTest, DrainPreemptsOnlyTheNodesLiveJobs) {
  agent_on("n1");
  agent_on("n2");
  const JobId running = place(2, 0, JobPhase::kRunning, {"n1"});
  const JobId launching = place(2, 0, JobPhase::kLaunching, {"n1"}, 2);
  const JobId stopping = place(2, 0, JobPhase::kPreempting, {"n1"}, 4);
  const JobId elsewhere = place(2, 0, JobPhase::kRunning, {"n2"});
  const std::string stopping_reason = job(stopping).reason;
  ok(run([&](store::Tx& tx, const server::LifecycleContext& ctx) {
    return server::drain_jobs_on(tx, ctx, NodeId("n1"), "gpu 3: XID 79").status();
  }));
  for (const JobId id : {running, launching}) {
    EXPECT_EQ(job(id).phase, JobPhase::kPreempting);
    EXPECT_EQ(job(id).reason, "node n1 draining: gpu 3: XID 79");
    EXPECT_EQ(job(id).preemptions, 0) << "a drain is not a scheduler preemption";
  }
  EXPECT_EQ(job(stopping).phase, JobPhase::kPreempting);
  EXPECT_EQ(job(stopping).reason, stopping_reason) << "already stopping: left as it was";
  EXPECT_EQ(job(elsewhere).phase, JobPhase::kRunning);
  EXPECT_EQ(fx_.stops, (std::set<Stop>{{running.value, "n1"}, {launching.value, "n1"}}));
}

// Note for posterity: this was a 500 ms sleep against a real corrald, which proved
// nothing about timeouts of 30 s and more. Here the clock runs past every timeout the
// controllers know (stop grace, restart backoff cap, node-lost silence) while the
// agent keeps heartbeating and reporting its rank running: the GPUs of the cancelled
// job stay held throughout, and go back only when the agent reports the exit.
// Retry policies by category (retry_policy.h): an exit code not in onExitCodes ends the
// job at once however many restarts are left; one in it is retried on maxRestarts.
TEST_F(LifecycleTest, AnExitCodeOutsideOnExitCodesFailsAtOnce) {
  agent_on("n1");
  const JobId bug = place(1, 5, JobPhase::kRunning, {"n1"}, 0, R"({"onExitCodes": [75]})");
  report(bug, 0, "n1", "exited", 1);
  ok(reconcile(bug));
  EXPECT_EQ(job(bug).phase, JobPhase::kFailed);
  EXPECT_EQ(
      job(bug).reason,
      "rank 0 exited with code 1 in attempt 1; exit code 1 is not retried (retry.onExitCodes)");
  const JobId flaky = place(1, 5, JobPhase::kRunning, {"n1"}, 1, R"({"onExitCodes": [75]})");
  report(flaky, 0, "n1", "exited", 75);
  ok(reconcile(flaky));  // its only rank is gone: requeued at once, behind its backoff
  EXPECT_EQ(job(flaky).phase, JobPhase::kPending);
  EXPECT_EQ(job(flaky).restarts, 1);
  const auto ev = events(flaky);
  EXPECT_NE(std::find(ev.begin(), ev.end(),
                      "retry: exit: rank 0 exited with code 75 in attempt 1; restart 1 of 5"),
            ev.end());
}

// Two ranks fail at once: the OOM kill is the cause (the other died of its peer), so the
// attempt is retried on the OOM budget although rank 0's code is not in onExitCodes.
TEST_F(LifecycleTest, AnOomKillIsTheCauseWhateverItsRank) {
  agent_on("n1");
  const JobId id =
      place(2, 0, JobPhase::kRunning, {"n1"}, 0, R"({"onExitCodes": [75], "onOutOfMemory": 2})");
  report(id, 0, "n1", "exited", 1);
  report(id, 1, "n1", "exited", 0, 9);
  ok(reconcile(id));
  EXPECT_EQ(job(id).phase, JobPhase::kPending);
  EXPECT_EQ(job(id).oom_restarts, 1);
}

// An OOM kill (SIGKILL Corral did not send) on its own budget: retried there, with the
// spec's own backoff, while maxRestarts stays untouched; past it the job fails.
TEST_F(LifecycleTest, OutOfMemoryKillsHaveTheirOwnBudgetAndBackoff) {
  agent_on("n1");
  const JobId id = place(1, 0, JobPhase::kRunning, {"n1"}, 0,
                         R"({"onOutOfMemory": 1, "backoff": {"initialSeconds": 30}})");
  report(id, 0, "n1", "exited", 0, 9);
  ok(reconcile(id));
  const store::JobRow once = job(id);  // requeued at once: its only rank is gone
  EXPECT_EQ(once.phase, JobPhase::kPending);
  EXPECT_EQ(once.restarts, 1);
  EXPECT_EQ(once.oom_restarts, 1);
  EXPECT_EQ(once.not_before, clock_.now() + core::seconds(30));
  const auto ev = events(id);
  EXPECT_NE(std::find(ev.begin(), ev.end(),
                      "rank failed: rank 0 killed by signal 9 in attempt 1; restart 1 of 1 "
                      "(retry.onOutOfMemory) once every rank has stopped"),
            ev.end());
  EXPECT_NE(std::find(ev.begin(), ev.end(),
                      "retry: oom: rank 0 killed by signal 9 in attempt 1; restart 1 of 1 "
                      "(retry.onOutOfMemory)"),
            ev.end());
  // The decision alone, a second time: the budget is spent.
  store::JobRow next = once;
  const auto parsed =
      core::parse_job_spec(spec(1, 0, R"({"onOutOfMemory": 1})"), core::SpecFormat::kJson);
  const auto verdict = server::decide_retry(
      *parsed.spec, next, server::FailureCategory::kOutOfMemory, 137, settings_, clock_.now());
  EXPECT_FALSE(verdict.retry);
  EXPECT_EQ(verdict.reason, "out of restarts (retry.onOutOfMemory 1)");
}

// A node failure on its own budget, and an expedited requeue: the job keeps its place.
TEST_F(LifecycleTest, ANodeFailureOnItsOwnBudgetKeepsTheJobsPlace) {
  const auto parsed =
      core::parse_job_spec(spec(1, 0, R"({"onNodeFailure": 2})"), core::SpecFormat::kJson);
  ASSERT_TRUE(parsed.ok());
  store::JobRow row{.restarts = 0};
  for (int i = 1; i <= 2; ++i) {
    const auto v = server::decide_retry(*parsed.spec, row, server::FailureCategory::kNodeFailure, 0,
                                        settings_, clock_.now());
    EXPECT_TRUE(v.retry) << i;
    EXPECT_EQ(v.reason, "restart " + std::to_string(i) + " of 2 (retry.onNodeFailure)");
  }
  EXPECT_EQ(row.not_before, core::Time{}) << "no backoff after a node failure";
  EXPECT_FALSE(server::decide_retry(*parsed.spec, row, server::FailureCategory::kNodeFailure, 0,
                                    settings_, clock_.now())
                   .retry);
  // maxRestarts (0) is not touched by node failures: an exit is still judged on it.
  EXPECT_EQ(server::decide_retry(*parsed.spec, row, server::FailureCategory::kExit, 1, settings_,
                                 clock_.now())
                .reason,
            "out of restarts (maxRestarts 0)");
  EXPECT_TRUE(server::keeps_place(*parsed.spec, "node"));
  EXPECT_FALSE(server::keeps_place(*parsed.spec, "exit"));
  const auto plain = core::parse_job_spec(spec(1, 0), core::SpecFormat::kJson);
  EXPECT_FALSE(server::keeps_place(*plain.spec, "node")) << "without retry: as before";

  // Through the lifecycle: a drained node's job goes back to the queue at its old place.
  agent_on("n1");
  const JobId id = place(1, 0, JobPhase::kRunning, {"n1"}, 0, R"({"onNodeFailure": 2})");
  const core::Time queued = job(id).queued_at;
  clock_.advance(core::seconds(600));
  ok(run([&](store::Tx& tx, const server::LifecycleContext& ctx) {
    return server::drain_jobs_on(tx, ctx, NodeId("n1"), "XID 79").status();
  }));
  report(id, 0, "n1", "exited", 0, 15);
  ok(reconcile(id));
  EXPECT_EQ(job(id).phase, JobPhase::kPending);
  EXPECT_EQ(job(id).queued_at, queued);
  EXPECT_EQ(job(id).retry_category, "");
}

TEST_F(LifecycleTest, NoTimerFreesTheGpusOfACancelledJob) {
  agent_on("n1");
  const JobId id = place(4, 0, JobPhase::kCancelled, {"n1"});
  for (int r = 0; r < 4; ++r) report(id, r, "n1", "running");
  RecordingSignals loop;
  server::NodeHealth health(*store_, clock_, board_, specs_, loop, settings_);
  const std::int64_t longest = std::max(
      {settings_.stop_grace_ms, settings_.restart_backoff_max_ms, settings_.node_lost_after_ms});
  const core::Duration step(settings_.node_lost_after_ms / 2);  // heartbeats in time
  const core::Time until = clock_.now() + core::Duration(10 * longest);
  int rounds = 0;
  while (clock_.now() < until) {
    clock_.advance(step);
    agent_on("n1");  // the heartbeat
    board_.set_applied("n1", board_.version("n1"));
    ok(health.check_once());
    ok(reconcile(id));
    ASSERT_EQ(held(id), 4u) << "at +" << core::to_ms(clock_.now()) - kLifecycleStartMs << " ms";
    ++rounds;
  }
  EXPECT_GE(rounds, 20);
  EXPECT_EQ(loop.capacity, 0) << "nothing was freed";
  for (int r = 0; r < 4; ++r) report(id, r, "n1", "exited", 0, 15);
  ok(reconcile(id));
  EXPECT_EQ(held(id), 0u);
}

}  // namespace
}  // namespace corral::testing
