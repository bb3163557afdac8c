// The scheduler loop against a real store, one cycle at a time on a manual clock:
// elastic resizes applied by checkpoint and restart (or in place before launch), and
// fair-share usage that survives a restart. Agents do not exist here; the test plays
// their part by moving jobs through the phases an agent's reports would
// (launching -> running; preempting -> requeued -> pending with GPUs released).
#include "server/cycle/sched_loop.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/clock.h"
#include "core/job_spec_parse.h"
#include "server/base/metrics.h"
#include "server/base/model_json.h"
#include "server/reports/rack_power.h"
#include "testing/store_fixture.h"

namespace corral::testing {
namespace {

using core::JobId;
using core::JobPhase;

constexpr const char* kElastic = R"({"name": "elastic", "resources": {"gpus": 8,
  "gpuTypes": ["H100"]}, "elastic": {"minGpus": 2, "maxGpus": 8, "step": 2},
  "checkpoint": {"dir": "/ckpt/e", "intervalSeconds": 600}, "command": ["train"]})";

std::string fixed_job(int gpus, const std::string& tenant = "default") {
  return R"({"name": "fixed", "tenant": ")" + tenant + R"(", "resources": {"gpus": )" +
         std::to_string(gpus) + R"(, "gpuTypes": ["H100"]}, "command": ["run"]})";
}

template <typename Factory>
class SchedLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    open_or_skip(factory_, store_);
    if (this->IsSkipped() || this->HasFatalFailure()) return;
    clock_.set(core::time_from_ms(1'700'000'000'000));
    ok(store_->transact([&](store::Tx& tx) {
      for (const char* t : {"default", "other"}) {
        CORRAL_RETURN_IF_ERROR(tx.tenants().put_tenant(
            {.id = core::TenantId(t),
             .config_json =
                 server::tenant_config_to_json(server::default_tenant_config(core::TenantId(t))),
             .updated_at = clock_.now()}));
      }
      return tx.nodes().upsert_node(
          {.id = core::NodeId("n1"),
           .spec_json = R"({"id": "n1", "gpuType": "H100", "gpuCount": 8})",
           .created_at = clock_.now(),
           .updated_at = clock_.now()});
    }));
    loop_ = make_loop();
  }

  // An agent joins n1: from then on its jobs stop only when the agent confirms
  // (lifecycle.h), which the tests play through move(). Without one, nothing runs on
  // n1, so a stopped job is released at once.
  void agent_joins() {
    ok(store_->transact([&](store::Tx& tx) {
      return tx.agents().upsert_agent_session({.node = core::NodeId("n1"),
                                               .agent_url = "http://127.0.0.1:1",
                                               .joined_at = clock_.now(),
                                               .heartbeat_at = clock_.now()});
    }));
  }

  // A loop that holds the lease but whose thread has stopped: cycles run on the test's
  // thread through run_cycle(), one at a time.
  std::unique_ptr<server::SchedLoop> make_loop(const sched::SchedulerConfig& config = {}) {
    server::SchedLoopOptions options;
    options.usage_write_interval = core::Duration(1000);
    options.config = config;
    auto loop = std::make_unique<server::SchedLoop>(*store_, clock_, metrics_, options);
    ok(loop->start());
    loop->stop();
    return loop;
  }

  void ok(const core::Status& s) { ASSERT_TRUE(s.ok()) << s.to_string(); }

  void cycle() {
    clock_.advance(core::Duration(100));
    ok(loop_->run_cycle());
  }

  JobId submit(const std::string& spec_json, const std::string& tenant = "default") {
    const auto parsed = core::parse_job_spec(spec_json, core::SpecFormat::kJson);
    EXPECT_TRUE(parsed.ok());
    JobId id;
    ok(store_->transact([&](store::Tx& tx) {
      CORRAL_ASSIGN_OR_RETURN(
          auto row, tx.jobs().insert_job({.tenant = core::TenantId(tenant),
                                          .name = parsed.spec->name,
                                          .priority_class = parsed.spec->priority_class,
                                          .gpus = parsed.spec->resources.gpus,
                                          .spec_json = core::job_spec_to_json(*parsed.spec),
                                          .now = clock_.now()}));
      id = row.id;
      return core::Status();
    }));
    if (loop_) loop_->job_submitted(id);  // as the API does after the commit
    return id;
  }

  store::JobRow job(JobId id) {
    store::JobRow out;
    ok(store_->transact([&](store::Tx& tx) {
      CORRAL_ASSIGN_OR_RETURN(auto row, tx.jobs().get_job(id));
      if (!row) return core::not_found("job");
      out = *row;
      return core::Status();
    }));
    return out;
  }

  std::size_t active_gpus(JobId id) {
    std::vector<store::AllocationRow> rows;
    ok(store_->transact([&](store::Tx& tx) {
      CORRAL_ASSIGN_OR_RETURN(rows, tx.allocations().list_allocations(id));
      return core::Status();
    }));
    return static_cast<std::size_t>(
        std::count_if(rows.begin(), rows.end(), [](const auto& a) { return a.active; }));
  }

  // The kinds of the job's events, oldest first.
  std::vector<std::string> event_kinds(JobId id) {
    std::vector<std::string> out;
    ok(store_->transact([&](store::Tx& tx) {
      CORRAL_ASSIGN_OR_RETURN(const auto events, tx.records().list_job_events(id));
      out.clear();
      for (const auto& e : events) out.push_back(e.kind);
      return core::Status();
    }));
    return out;
  }

  std::vector<store::ElasticTargetRow> targets() {
    std::vector<store::ElasticTargetRow> rows;
    ok(store_->transact([&](store::Tx& tx) {
      CORRAL_ASSIGN_OR_RETURN(rows, tx.scheduler().list_elastic_targets());
      return core::Status();
    }));
    return rows;
  }

  // What an agent's reports would do: move the job along `phases` (each step a
  // compare-and-set from the previous), releasing its GPUs first when `release`.
  void move(JobId id, std::vector<JobPhase> phases, bool release = false) {
    ok(store_->transact([&](store::Tx& tx) {
      CORRAL_ASSIGN_OR_RETURN(auto row, tx.jobs().get_job(id));
      if (!row) return core::not_found("job");
      if (release)
        CORRAL_RETURN_IF_ERROR(tx.allocations().release_allocations(id, clock_.now()).status());
      for (const JobPhase to : phases) {
        store::JobRow next = *row;
        next.phase = to;
        next.updated_at = clock_.now();
        if (to == JobPhase::kPending) next.queued_at = clock_.now();
        CORRAL_ASSIGN_OR_RETURN(const bool won, tx.jobs().update_job(next, row->phase));
        if (!won) return core::raced("phase changed");
        row = next;
      }
      return core::Status();
    }));
    loop_->wake();  // as an agent's report does
  }

  Factory factory_;
  std::unique_ptr<store::Store> store_;
  core::ManualClock clock_;
  server::Metrics metrics_;
  std::unique_ptr<server::SchedLoop> loop_;
};

TYPED_TEST_SUITE(SchedLoopTest, Stores, StoreNames);

constexpr core::Duration kPastMinRuntime = core::seconds(11 * 60);

// Issue 38, item 6: a rack counts each GPU at the power limit its node's agent reports,
// not at the GPU type's catalog TDP. Four PCIe A100s whose agent reports 300 W take a
// 4-GPU job on a 1,500 W rack (at the catalog's 400 W it would need 1,600 W), and
// GET /v1/racks counts the same 1,200 W.
TYPED_TEST(SchedLoopTest, ARackCountsTheReportedPowerLimitNotTheCatalogTdp) {
  this->ok(this->store_->transact([&](store::Tx& tx) {
    const core::Time now = this->clock_.now();
    CORRAL_RETURN_IF_ERROR(tx.nodes().upsert_node(
        {.id = core::NodeId("pcie1"),
         .spec_json =
             R"({"id": "pcie1", "gpuType": "A100-80GB", "gpuCount": 4, "labels": {"rack": "p1"}})",
         .created_at = now,
         .updated_at = now}));
    core::ObservedInventory inventory{.source = "test"};
    for (int g = 0; g < 4; ++g) inventory.gpus.push_back({.index = g, .power_limit_w = 300});
    CORRAL_RETURN_IF_ERROR(tx.nodes().upsert_observed(
        {.node = core::NodeId("pcie1"), .inventory = inventory, .heartbeat_at = now}));
    return tx.rack_caps().put_rack_cap(
        {.rack = "p1", .declared_by = "config", .power_cap_watts = 1500, .updated_at = now});
  }));
  const JobId id = this->submit(R"({"name": "pcie", "resources": {"gpus": 4,
    "gpuTypes": ["A100-80GB"]}, "command": ["run"]})");
  this->cycle();
  EXPECT_EQ(this->active_gpus(id), 4u) << this->job(id).reason;

  std::vector<server::RackPower> racks;
  this->ok(this->store_->read([&](store::Tx& tx) {
    CORRAL_ASSIGN_OR_RETURN(racks, server::read_rack_power(tx));
    return core::Status();
  }));
  ASSERT_EQ(racks.size(), 1u);
  EXPECT_EQ(racks[0].name, "p1");
  EXPECT_EQ(racks[0].cap_watts, 1500);
  EXPECT_EQ(racks[0].used_watts, 4 * 300);
  EXPECT_EQ(racks[0].gpus_held, 4);
  EXPECT_EQ(racks[0].nodes, 1);
}

// A new job's reason and position are written in its first cycle, and so is a change
// of the reason's kind; when only the detail moves (the job ahead of it left), the row
// is refreshed on the position schedule, not every cycle. (With EASY backfill, so that
// the head of the queue is named in the reasons behind it.)
TYPED_TEST(SchedLoopTest, PendingReasonDetailIsRefreshedOnThePositionSchedule) {
  this->loop_ = this->make_loop(sched::SchedulerConfig{.backfill = true});
  const JobId holder = this->submit(fixed_job(8));
  this->cycle();
  ASSERT_EQ(this->job(holder).phase, JobPhase::kLaunching);
  const JobId first = this->submit(fixed_job(4));
  const JobId second = this->submit(fixed_job(4));
  const JobId third = this->submit(fixed_job(4));
  this->cycle();
  EXPECT_EQ(this->job(first).queue_position, 1);
  EXPECT_EQ(this->job(second).queue_position, 2);
  const store::JobRow queued = this->job(third);
  EXPECT_EQ(queued.queue_position, 3);
  EXPECT_EQ(queued.pending_kind, "capacity");
  const std::string behind_first = "behind job " + std::to_string(first.value);
  EXPECT_NE(queued.reason.find(behind_first), std::string::npos) << queued.reason;

  this->move(first, {JobPhase::kCancelled});
  this->cycle();
  // `second` heads the queue: its kind changed (capacity -> waiting), written at once.
  EXPECT_EQ(this->job(second).queue_position, 1);
  EXPECT_EQ(this->job(second).pending_kind, "waiting");
  // `third` moved up with the same kind: its row waits for the position schedule.
  EXPECT_EQ(this->job(third).queue_position, 3);
  EXPECT_EQ(this->job(third).reason, queued.reason);

  this->clock_.advance(server::SchedLoopOptions().position_write_interval);
  this->cycle();
  const store::JobRow moved = this->job(third);
  EXPECT_EQ(moved.queue_position, 2);
  EXPECT_EQ(moved.pending_kind, "capacity");
  EXPECT_EQ(moved.reason.find(behind_first), std::string::npos) << moved.reason;
}

// Issue 38 item 7: every job waiting for room has an expected start stored, not only the
// head of the queue: without backfill nobody is promised one, and each job behind the
// running one is expected after the job ahead of it (a forecast: no latest start).
TYPED_TEST(SchedLoopTest, EveryJobWaitingForRoomHasAnExpectedStart) {
  const JobId holder = this->submit(fixed_job(8));
  this->cycle();
  ASSERT_EQ(this->job(holder).phase, JobPhase::kLaunching);
  const JobId first = this->submit(fixed_job(8));
  const JobId second = this->submit(fixed_job(8));
  this->cycle();
  const store::JobRow a = this->job(first), b = this->job(second);
  EXPECT_GT(a.planned_start, this->clock_.now());
  EXPECT_GT(b.planned_start, a.planned_start);
  EXPECT_EQ(a.planned_latest, core::Time{});
  EXPECT_EQ(b.planned_latest, core::Time{});
}

// Issue 38 items 8 and 13: a job that can never run has no queue position, is not
// rewritten every cycle, and a reason whose figures move writes no new event.
TYPED_TEST(SchedLoopTest, AJobThatCanNeverRunIsNotInLineAndWritesOneEvent) {
  const JobId never = this->submit(fixed_job(64));
  const JobId fits = this->submit(fixed_job(4));
  this->cycle();
  const store::JobRow row = this->job(never);
  EXPECT_EQ(row.pending_kind, "unschedulable");
  EXPECT_EQ(row.queue_position, 0);
  const core::Time written = row.updated_at;
  EXPECT_EQ(this->job(fits).phase, JobPhase::kLaunching);
  for (int i = 0; i < 5; ++i) {
    this->clock_.advance(core::seconds(61));
    this->cycle();
  }
  EXPECT_EQ(this->job(never).updated_at, written);  // nothing new to write
  const auto kinds = this->event_kinds(never);
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "pending"), 1);
}

// Another corrald taking the shard's lease fences this loop: its cycle fails with the
// typed reason kStaleEpoch (what run() stops scheduling on; the message is free to
// change) and places nothing; the new holder schedules the job.
TYPED_TEST(SchedLoopTest, AnotherHolderFencesTheLoopWithAStaleEpoch) {
  const JobId id = this->submit(fixed_job(8));
  const auto newer = this->make_loop();  // acquires the next epoch of the shard
  this->clock_.advance(core::Duration(100));
  const core::Status fenced = this->loop_->run_cycle();
  EXPECT_EQ(fenced.code(), core::StatusCode::kAborted) << fenced.to_string();
  EXPECT_TRUE(store::is_stale_epoch(fenced)) << fenced.to_string();
  EXPECT_EQ(this->job(id).phase, JobPhase::kPending);
  EXPECT_EQ(this->active_gpus(id), 0u);
  this->ok(newer->run_cycle());
  EXPECT_EQ(this->job(id).phase, JobPhase::kLaunching);
}

TYPED_TEST(SchedLoopTest, RunningElasticJobGrowsByCheckpointAndRestart) {
  this->agent_joins();
  const JobId fixed = this->submit(fixed_job(4));
  const JobId elastic = this->submit(kElastic);
  this->cycle();
  ASSERT_EQ(this->active_gpus(fixed), 4u);
  ASSERT_EQ(this->active_gpus(elastic), 4u);  // the largest allowed size that fit
  this->move(fixed, {JobPhase::kRunning});
  this->move(elastic, {JobPhase::kRunning});
  // The fixed job finishes; past min_runtime the elastic one may grow into its GPUs.
  this->move(fixed, {JobPhase::kSucceeded}, /*release=*/true);
  this->clock_.advance(kPastMinRuntime);
  this->cycle();

  const auto asked = this->job(elastic);
  EXPECT_EQ(asked.phase, JobPhase::kPreempting) << asked.reason;
  EXPECT_NE(asked.reason.find("resizing from 4 to 8 GPUs"), std::string::npos) << asked.reason;
  // Issue 38 item 13: a resize wrote "preempted" (and "resized") events. One event says
  // what happens: it resizes, by checkpoint and restart.
  const auto kinds = this->event_kinds(elastic);
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "resizing"), 1);
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "preempted"), 0);
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "resized"), 0);
  // The scheduler's resize is an audit entry (as its preemptions and reclaims are).
  std::vector<store::AuditRow> audit;
  this->ok(this->store_->transact([&](store::Tx& tx) {
    CORRAL_ASSIGN_OR_RETURN(audit, tx.audit().list_audit(0, 100));
    return core::Status();
  }));
  ASSERT_EQ(audit.size(), 1u);
  EXPECT_EQ(audit[0].actor, "corrald/scheduler");
  EXPECT_EQ(audit[0].action, "job.resize");
  EXPECT_NE(audit[0].after.find(R"("fromGpus":4)"), std::string::npos) << audit[0].after;
  EXPECT_EQ(this->active_gpus(elastic), 4u);  // kept until its agent confirms the stop
  ASSERT_EQ(this->targets().size(), 1u);
  EXPECT_EQ(this->targets()[0].gpus, 8);

  // The agent confirms the checkpoint and stop; the job is requeued and restarts at 8.
  this->move(elastic, {JobPhase::kRequeued, JobPhase::kPending}, /*release=*/true);
  this->cycle();
  EXPECT_EQ(this->job(elastic).phase, JobPhase::kLaunching);
  EXPECT_EQ(this->active_gpus(elastic), 8u);
  EXPECT_TRUE(this->targets().empty());
}

TYPED_TEST(SchedLoopTest, RunningElasticJobShrinksForAnotherAndRestartsAtItsNewSize) {
  this->agent_joins();
  const JobId elastic = this->submit(kElastic);
  this->cycle();
  ASSERT_EQ(this->active_gpus(elastic), 8u);
  this->move(elastic, {JobPhase::kRunning});
  this->clock_.advance(kPastMinRuntime);
  const JobId waiting = this->submit(fixed_job(4));
  this->cycle();

  EXPECT_EQ(this->job(elastic).phase, JobPhase::kPreempting);
  EXPECT_EQ(this->job(waiting).phase, JobPhase::kPending);  // waits for the checkpoint
  // It gives up only the 4 GPUs the other job needs, not all but its minimum of 2.
  ASSERT_EQ(this->targets().size(), 1u);
  EXPECT_EQ(this->targets()[0].gpus, 4);

  this->move(elastic, {JobPhase::kRequeued, JobPhase::kPending}, /*release=*/true);
  this->cycle();
  EXPECT_EQ(this->job(waiting).phase, JobPhase::kLaunching);
  EXPECT_EQ(this->active_gpus(waiting), 4u);
  // The elastic job restarts at the size it was shrunk to.
  EXPECT_EQ(this->job(elastic).phase, JobPhase::kLaunching);
  EXPECT_EQ(this->active_gpus(elastic), 4u);
  EXPECT_TRUE(this->targets().empty());
}

TYPED_TEST(SchedLoopTest, LaunchingElasticJobShrinksInPlace) {
  const JobId elastic = this->submit(kElastic);
  this->cycle();
  ASSERT_EQ(this->active_gpus(elastic), 8u);
  this->clock_.advance(kPastMinRuntime);  // still launching: no agent has started it
  const JobId waiting = this->submit(fixed_job(4));
  this->cycle();

  // No workers to checkpoint: the allocation changes in the same transaction that
  // places the job it made room for.
  EXPECT_EQ(this->job(elastic).phase, JobPhase::kLaunching);
  EXPECT_EQ(this->active_gpus(elastic), 4u);  // gave up the 4 the other job needs
  EXPECT_EQ(this->job(waiting).phase, JobPhase::kLaunching);
  EXPECT_EQ(this->active_gpus(waiting), 4u);
  EXPECT_TRUE(this->targets().empty());
}

TYPED_TEST(SchedLoopTest, FairShareUsageSurvivesARestart) {
  const JobId a = this->submit(fixed_job(8));
  this->cycle();
  this->move(a, {JobPhase::kRunning});
  this->clock_.advance(core::seconds(3600));
  this->cycle();  // an hour of 8 GPUs accrues and is written
  std::vector<store::TenantUsageRow> before;
  this->ok(this->store_->transact([&](store::Tx& tx) {
    CORRAL_ASSIGN_OR_RETURN(before, tx.scheduler().list_tenant_usage());
    return core::Status();
  }));
  ASSERT_EQ(before.size(), 1u);
  EXPECT_EQ(before[0].tenant.value, "default");
  EXPECT_GT(before[0].gpu_seconds, 8 * 3600 * 0.99);

  // A new corrald: the job is gone, nothing accrues, yet the usage it writes is the
  // old one decayed, not zero.
  this->move(a, {JobPhase::kSucceeded}, /*release=*/true);
  this->loop_ = this->make_loop();
  this->clock_.advance(core::seconds(10));
  this->cycle();
  std::vector<store::TenantUsageRow> after;
  this->ok(this->store_->transact([&](store::Tx& tx) {
    CORRAL_ASSIGN_OR_RETURN(after, tx.scheduler().list_tenant_usage());
    return core::Status();
  }));
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].as_of, this->clock_.now());  // written by the new loop
  EXPECT_GT(after[0].gpu_seconds, before[0].gpu_seconds * 0.99);
  EXPECT_LT(after[0].gpu_seconds, before[0].gpu_seconds);  // and decayed
}

}  // namespace
}  // namespace corral::testing
