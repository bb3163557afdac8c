// One contract, two adapters: the same small cluster, built as store rows and read back by
// corrald's adapter (server/cycle/snapshot_from_store.h), and built as corral-sim's fleet model
// and read by its adapter (sim/snapshot_from_fleet.h), gives equal SnapshotInputs, field
// by field. The cluster holds what the scheduler's policy turns on: two racks with power
// caps, a reservation, an elastic job with a scaling curve, a job checkpointed 10 s ago and one an
// hour ago, a job preempted 3 times, decayed usage for two tenants, a run-time estimate from
// history and one from the spec, a borrowed job, an unhealthy GPU, a cordoned node, and
// shares of a GPU (a gang of two running, one pending).
//
// The field counts below fail to compile when a struct of the snapshot gains a field: fill
// it in both adapters, give it a value here that is not its default, and update the count.
#include <gtest/gtest.h>

#include "core/job_spec_parse.h"
#include "core/priority.h"
#include "cycle/field_count.h"
#include "server/base/model_json.h"
#include "server/controllers/lifecycle.h"
#include "server/cycle/snapshot_from_store.h"
#include "sim/snapshot_from_fleet.h"
#include "testing/store_fixture.h"

namespace corral::testing {
namespace {

using core::Duration;
using core::JobId;
using core::seconds;

static_assert(cycle::field_count<sched::SnapshotInput>() == 8,
              "SnapshotInput changed: fill the new field in both adapters and here");
static_assert(cycle::field_count<sched::RunningJob>() == 9,
              "RunningJob changed: fill the new field in both adapters and here");
static_assert(cycle::field_count<sched::PendingJob>() == 7,
              "PendingJob changed: fill the new field in both adapters and here");
static_assert(cycle::field_count<sched::JobRequest>() == 23,
              "JobRequest changed: fill the new field in both adapters and here");

constexpr std::int64_t kContractNowMs = 1'800'000'000'000;
core::Time at_s(std::int64_t offset_s) {
  return core::time_from_ms(kContractNowMs + offset_s * 1000);
}

// One job of the scenario, as both sides need it.
struct Job {
  std::int64_t id;
  std::string tenant;
  std::string name;
  std::string spec;  // JSON, as the API stores it
  std::string priority_class = "standard";
  bool array_task = false;  // the first task of an array (its spec's `array`)
  std::string user;         // who submitted it (jobs.submitted_by; a session's user)
};

std::string spec(const std::string& name, const std::string& tenant, int gpus,
                 const std::string& extra = "", const std::string& priority_class = "standard",
                 const std::string& resources_extra = "") {
  return R"({"name": ")" + name + R"(", "tenant": ")" + tenant + R"(", "priorityClass": ")" +
         priority_class + R"(", "resources": {"gpus": )" + std::to_string(gpus) +
         R"(, "gpuTypes": ["H100"])" + resources_extra + R"(}, "command": ["train"])" + extra + "}";
}

core::JobSpec parse(const std::string& text) {
  auto parsed = core::parse_job_spec(text, core::SpecFormat::kJson);
  EXPECT_TRUE(parsed.ok());
  return *parsed.spec;
}

// The pending queue as the scheduler loop keeps it: by id.
core::Result<std::map<std::int64_t, store::JobRow>> pending_queue(store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(auto rows, tx.jobs().list_jobs({.phases = {core::JobPhase::kPending}}));
  std::map<std::int64_t, store::JobRow> queue;
  for (auto& row : rows) queue.emplace(row.id.value, std::move(row));
  return queue;
}

template <typename Factory>
class SnapshotContractTest : public ::testing::Test {
 protected:
  void SetUp() override {
    open_or_skip(factory_, store_);
    if (this->IsSkipped() || this->HasFatalFailure()) return;
    build_fleet();
  }

  void ok(const core::Status& s) { ASSERT_TRUE(s.ok()) << s.to_string(); }

  // corral-sim's snapshot of `jobs` on this fleet, now.
  sched::SnapshotInput fleet_snapshot(const std::vector<sim::ModelJob>& jobs,
                                      const sched::RunHistory& history) const {
    std::vector<core::Tenant> tenants;
    for (const auto& cfg : tenant_configs_) tenants.push_back(cfg.tenant);
    const std::vector<core::GpuType> types(core::builtin_gpu_types().begin(),
                                           core::builtin_gpu_types().end());
    return sim::snapshot_from_fleet({.gpu_types = types,
                                     .nodes = nodes_,
                                     .racks = racks_,
                                     .tenants = tenants,
                                     .reservations = reservations_},
                                    usage_, jobs, {}, history, core::to_ms(at_s(0)));
  }

  core::Status put_tenants(store::Tx& tx) {
    for (const auto& cfg : tenant_configs_) {
      CORRAL_RETURN_IF_ERROR(
          tx.tenants().put_tenant({.id = cfg.tenant.id,
                                   .config_json = server::tenant_config_to_json(cfg),
                                   .updated_at = at_s(-86400)}));
    }
    return core::Status();
  }

  // Three 8-GPU H100 nodes in region eu-west: n1 and n2 in rack r1 (leaf l1), n3 in rack r2 (leaf
  // l2); n2 is cordoned and n3's GPU 7 is unhealthy. Two tenants, `a` with a guarantee, `b`
  // without; a reservation of 4 H100 for `b` open now.
  void build_fleet() {
    for (int i = 1; i <= 3; ++i) {
      const std::string id = "n" + std::to_string(i);
      const std::string spec =
          R"({"id": ")" + id + R"(", "gpuType": "H100", "gpuCount": 8, "cpus": 128,)" +
          R"( "memoryMib": 2097152, "labels": {"region": "eu-west", "spine": "s1", "leaf": "l)" +
          (i < 3 ? "1" : "2") + R"(", "rack": "r)" + (i < 3 ? "1" : "2") + R"("}})";
      auto node = server::node_from_json(spec);
      ASSERT_TRUE(node.ok()) << node.status().to_string();
      if (i == 2) node->admin = core::NodeAdminState::kCordoned;
      if (i == 3) node->gpus[7].healthy = false;
      nodes_.push_back(*node);
      specs_[id] = spec;
    }
    racks_ = {{.name = "r1", .power_cap_watts = 20'000}, {.name = "r2", .power_cap_watts = 6'000}};
    server::TenantConfig a = server::default_tenant_config(core::TenantId("a"));
    a.tenant.weight = 2;
    a.tenant.quotas[core::GpuTypeId("H100")] = core::Quota::gpus(12, 8);
    server::TenantConfig b = server::default_tenant_config(core::TenantId("b"));
    // A guarantee with a fraction: shares of a GPU fill it exactly.
    b.tenant.quotas[core::GpuTypeId("H100")] = {.guaranteed_milli = 2'500,
                                                .borrow_limit_milli = 24'000};
    tenant_configs_ = {a, b};
    reservations_ = {{.id = core::ReservationId("launch"),
                      .tenant = core::TenantId("b"),
                      .gpu_type = core::GpuTypeId("H100"),
                      .count = 4,
                      .start = at_s(-3600),
                      .end = at_s(3600)}};
    usage_ = {{core::TenantId("a"), 5000.5}, {core::TenantId("b"), 1234.25}};
  }

  Factory factory_;
  std::unique_ptr<store::Store> store_;
  std::vector<core::Node> nodes_;
  std::map<std::string, std::string> specs_;
  std::vector<core::Rack> racks_;
  std::vector<server::TenantConfig> tenant_configs_;
  std::vector<core::Reservation> reservations_;
  std::map<core::TenantId, double> usage_;
};

TYPED_TEST_SUITE(SnapshotContractTest, Stores, StoreNames);

// The jobs, each with what both sides must know of it.
struct Running {
  Job job;
  std::vector<sched::GpuRef> gpus;
  std::int64_t started_s;                    // offset from now
  std::int64_t interval_s;                   // checkpoint interval (0: none)
  std::optional<std::int64_t> checkpoint_s;  // the last checkpoint's offset
  std::int32_t preemptions = 0;
  std::int64_t earlier_gpu_s = 0;  // GPU-seconds of earlier attempts
  bool borrowed = false;
};

std::vector<sched::GpuRef> gpus(const std::string& node, int from, int count) {
  std::vector<sched::GpuRef> out;
  for (int i = from; i < from + count; ++i) out.push_back({core::NodeId(node), i});
  return out;
}

TYPED_TEST(SnapshotContractTest, StoreAndFleetAdaptersGiveTheSameInput) {
  // Running: c10 checkpointed 10 s ago (interval 600 s, started 610 s ago); c3600
  // checkpointed an hour ago (interval 4000 s, started 7600 s ago) and borrowed; an
  // elastic job on n2 that ran an earlier attempt; a `nightly` run whose estimate comes
  // from two earlier runs.
  const std::vector<Running> running = {
      {.job = {1, "a", "c10",
               spec("c10", "a", 8, R"(, "checkpoint": {"dir": "/c", "intervalSeconds": 600})")},
       .gpus = gpus("n1", 0, 8),
       .started_s = -610,
       .interval_s = 600,
       .checkpoint_s = -10},
      {.job = {2, "b", "c3600",
               spec("c3600", "b", 4, R"(, "checkpoint": {"dir": "/c", "intervalSeconds": 4000})",
                    "preemptible"),
               "preemptible"},
       .gpus = gpus("n3", 0, 4),
       .started_s = -7600,
       .interval_s = 4000,
       .checkpoint_s = -3600,
       .preemptions = 1,
       .borrowed = true},
      {.job =
           {3, "a", "elastic",
            spec(
                "elastic", "a", 4,
                R"(, "elastic": {"minGpus": 2, "maxGpus": 8, "step": 2, "scaling": )"
                R"([{"gpus": 2, "throughput": 10}, {"gpus": 8, "throughput": 28.5}]},)"
                R"( "checkpoint": {"dir": "/e", "intervalSeconds": 100000}, "preemptible": true)")},
       .gpus = gpus("n2", 0, 4),
       .started_s = -300,
       .interval_s = 100000,
       .earlier_gpu_s = 4 * 500},
      {.job = {4, "a", "nightly", spec("nightly", "a", 2)},
       .gpus = gpus("n2", 4, 2),
       .started_s = -60,
       .interval_s = 0},
      // A gang of two shares of a GPU, a quarter of each with 20 GiB.
      {.job = {5, "b", "eval",
               spec("eval", "b", 2, "", "standard", R"(, "gpuShare": 0.25, "gpuMemoryGiB": 20)")},
       .gpus = gpus("n3", 4, 2),
       .started_s = -100,
       .interval_s = 0},
  };
  // Pending: p3 preempted 3 times (three 100-s attempts on 4 GPUs), `estimated` with its
  // own expectedRuntime (and bound to region eu-west), `reserved` naming the reservation.
  struct Queued {
    Job job;
    std::int64_t queued_s;
    std::int32_t attempts = 0;
    std::int32_t preemptions = 0;
    std::int64_t earlier_gpu_s = 0;
  };
  const std::vector<Queued> pending = {
      {.job = {6, "b", "p3", spec("p3", "b", 4, "", "preemptible"), "preemptible"},
       .queued_s = -20,
       .attempts = 3,
       .preemptions = 3,
       .earlier_gpu_s = 3 * 4 * 100},
      {.job = {7, "a", "estimated",
               spec("estimated", "a", 8, R"(, "expectedRuntime": "2h")", "production",
                    R"(, "gpuSpeed": {"H100": 2.5}, "region": "eu-west")"),
               "production"},
       .queued_s = -5},
      {.job = {8, "b", "reserved", spec("reserved", "b", 4, R"(, "reservation": "launch")")},
       .queued_s = -1},
      // An array of one task at most one running, and a job waiting for `c10` (job 1,
      // running) to start and for the array to succeed.
      {.job = {9, "b", "shard",
               spec("shard", "b", 1, R"(, "array": {"count": 1, "maxRunning": 1})"), "standard",
               true},
       .queued_s = -2},
      {.job = {10, "a", "after",
               spec("after", "a", 1,
                    R"(, "dependsOn": [{"job": 1, "on": "start"}, {"job": 9, "on": "success"}])")},
       .queued_s = -3},
      // An interactive session: its user is the submitter's, for the per-user limit.
      {.job = {11, "a", "notebook", spec("notebook", "a", 1, "", "interactive"), "interactive",
               false, "alice"},
       .queued_s = -4},
      // Half a GPU, pending.
      {.job = {12, "a", "probe", spec("probe", "a", 1, "", "standard", R"(, "gpuShare": 0.5)")},
       .queued_s = -6},
  };
  const std::vector<core::Duration> nightly_runs = {seconds(3000), seconds(3600), seconds(4200)};

  // ---- corrald: the same facts as store rows ----------------------------------------
  this->ok(this->store_->transact([&](store::Tx& tx) {
    for (const auto& node : this->nodes_) {
      CORRAL_RETURN_IF_ERROR(tx.nodes().upsert_node({.id = node.id,
                                                     .spec_json = this->specs_.at(node.id.value),
                                                     .admin = node.admin,
                                                     .created_at = at_s(-86400),
                                                     .updated_at = at_s(-86400)}));
      // The agent's observation: n3 reports GPU 7 unhealthy.
      store::ObservedNode observed{.node = node.id, .heartbeat_at = at_s(-1)};
      for (const auto& g : node.gpus) {
        observed.gpus.push_back(
            {.index = g.index,
             .condition = g.healthy ? core::GpuCondition::kOk : core::GpuCondition::kUnhealthy,
             .problem = g.healthy ? "" : "XID 79 (fell off the bus)"});
      }
      CORRAL_RETURN_IF_ERROR(tx.nodes().upsert_observed(observed));
    }
    // r1's cap from the admin config (which wins over the agent's), r2's the smallest
    // its agents declared.
    CORRAL_RETURN_IF_ERROR(tx.rack_caps().put_rack_cap(
        {.rack = "r1", .declared_by = "config", .power_cap_watts = 20'000, .updated_at = at_s(0)}));
    CORRAL_RETURN_IF_ERROR(tx.rack_caps().put_rack_cap(
        {.rack = "r1", .declared_by = "node/n1", .power_cap_watts = 9'000, .updated_at = at_s(0)}));
    CORRAL_RETURN_IF_ERROR(tx.rack_caps().put_rack_cap(
        {.rack = "r2", .declared_by = "node/n3", .power_cap_watts = 6'000, .updated_at = at_s(0)}));
    CORRAL_RETURN_IF_ERROR(this->put_tenants(tx));
    for (const auto& r : this->reservations_) {
      CORRAL_RETURN_IF_ERROR(
          tx.tenants().insert_reservation({.id = r.id,
                                           .tenant = r.tenant,
                                           .spec_json = server::reservation_to_json(r),
                                           .created_at = at_s(-86400)}));
    }
    const auto insert = [&](const Job& j) -> core::Result<store::JobRow> {
      CORRAL_ASSIGN_OR_RETURN(
          auto row,
          tx.jobs().insert_job({.tenant = core::TenantId(j.tenant),
                                .name = j.name,
                                .priority_class = j.priority_class,
                                .tier = core::tier_of(j.priority_class),
                                .spec_json = j.spec,
                                .now = at_s(-9000),
                                .array_index = j.array_task ? std::optional(0) : std::nullopt,
                                .submitted_by = j.user}));
      EXPECT_EQ(row.id.value, j.id);
      return row;
    };
    // Earlier attempts: GPUs held and released, which the store adds to attained service.
    const auto earlier = [&](const Job& j, std::int64_t gpu_s, int attempts) -> core::Status {
      for (int a = 1; a <= attempts; ++a) {
        const std::int64_t per = gpu_s / attempts / 4;  // on 4 GPUs
        for (int g = 0; g < 4; ++g) {
          CORRAL_RETURN_IF_ERROR(
              tx.allocations().insert_allocation({.job = JobId(j.id),
                                                  .attempt = a,
                                                  .node = core::NodeId("n1"),
                                                  .gpu_index = g,
                                                  .gpu_type = core::GpuTypeId("H100"),
                                                  .created_at = at_s(-8000 + a * 1000)}));
        }
        CORRAL_RETURN_IF_ERROR(tx.allocations()
                                   .release_allocations(JobId(j.id), at_s(-8000 + a * 1000 + per))
                                   .status());
      }
      return core::Status();
    };
    // Every job and its earlier attempts first (their GPUs released), then the current
    // attempts.
    for (const auto& r : running) {
      CORRAL_RETURN_IF_ERROR(insert(r.job).status());
      if (r.earlier_gpu_s > 0) CORRAL_RETURN_IF_ERROR(earlier(r.job, r.earlier_gpu_s, 1));
    }
    for (const auto& p : pending) {
      CORRAL_RETURN_IF_ERROR(insert(p.job).status());
      if (p.earlier_gpu_s > 0) CORRAL_RETURN_IF_ERROR(earlier(p.job, p.earlier_gpu_s, p.attempts));
    }
    for (const auto& r : running) {
      const store::JobRow row{.id = JobId(r.job.id)};
      const int earlier_attempts = r.earlier_gpu_s > 0 ? 1 : 0;
      for (const auto& g : r.gpus) {
        CORRAL_RETURN_IF_ERROR(tx.allocations().insert_allocation(
            {.job = row.id,
             .attempt = earlier_attempts + 1,
             .node = g.node,
             .gpu_index = g.index,
             .gpu_type = core::GpuTypeId("H100"),
             .borrowed = r.borrowed,
             .created_at = at_s(r.started_s),
             .share_milli = parse(r.job.spec).resources.gpu_milli}));
      }
      if (r.checkpoint_s) {
        CORRAL_RETURN_IF_ERROR(tx.checkpoints().insert_checkpoint({.job = row.id,
                                                                   .attempt = earlier_attempts + 1,
                                                                   .step = 10,
                                                                   .uri = "/c/10",
                                                                   .time = at_s(*r.checkpoint_s)}));
      }
      CORRAL_ASSIGN_OR_RETURN(auto fresh, tx.jobs().get_job(row.id));
      store::JobRow next = *fresh;
      next.phase = core::JobPhase::kRunning;
      next.attempt = earlier_attempts + 1;
      next.first_started = at_s(r.started_s);  // as if its first attempt began then
      next.preemptions = r.preemptions;
      CORRAL_ASSIGN_OR_RETURN(const bool won, tx.jobs().update_job(next, core::JobPhase::kPending));
      EXPECT_TRUE(won);
    }
    for (const auto& p : pending) {
      CORRAL_ASSIGN_OR_RETURN(auto fresh, tx.jobs().get_job(JobId(p.job.id)));
      store::JobRow next = *fresh;
      next.attempt = p.attempts;
      next.preemptions = p.preemptions;
      next.queued_at = at_s(p.queued_s);
      CORRAL_ASSIGN_OR_RETURN(const bool won, tx.jobs().update_job(next, core::JobPhase::kPending));
      EXPECT_TRUE(won);
    }
    // `nightly` ran three times before, the latest first.
    for (auto it = nightly_runs.rbegin(); it != nightly_runs.rend(); ++it) {
      CORRAL_RETURN_IF_ERROR(tx.records().insert_run({.tenant = core::TenantId("a"),
                                                      .name = "nightly",
                                                      .job = JobId(100),
                                                      .run = *it,
                                                      .finished_at = at_s(-20000)},
                                                     server::kRunHistoryKept));
    }
    return core::Status();
  }));

  sched::SnapshotInput from_store;
  this->ok(this->store_->read([&](store::Tx& tx) {
    CORRAL_ASSIGN_OR_RETURN(auto view, server::read_store_view(tx, at_s(0)));
    CORRAL_ASSIGN_OR_RETURN(const auto queue, pending_queue(tx));
    CORRAL_ASSIGN_OR_RETURN(
        auto runs, tx.records().list_runs({"c10", "c3600", "elastic", "nightly", "p3", "estimated",
                                           "reserved", "shard", "after"}));
    const auto history = server::run_history_from(runs);
    server::SpecCache specs;
    server::RequestCache requests(specs);
    CORRAL_ASSIGN_OR_RETURN(view.dependencies,
                            server::read_dependency_facts(tx.jobs(), queue, requests));
    from_store = server::snapshot_from_store(
        view, {.pending = queue, .usage = this->usage_, .runs = history}, requests, at_s(0));
    return core::Status();
  }));

  // ---- corral-sim: the same facts as the fleet model ---------------------------------
  std::vector<sim::ModelJob> jobs;
  const auto request = [](const Job& j) {
    return sched::job_request_from_spec(JobId(j.id), parse(j.spec),
                                        core::tier_of(j.priority_class));
  };
  for (const auto& r : running) {
    sim::ModelJob m{
        .request = request(r.job), .name = r.job.name, .state = sim::JobState::kRunning};
    m.run_start_ms = core::to_ms(at_s(r.started_s));
    m.first_start_ms = core::to_ms(at_s(r.started_s));
    m.gpus = r.gpus;
    m.borrowed = r.borrowed;
    m.attempts = r.earlier_gpu_s > 0 ? 2 : 1;
    m.preemptions = r.preemptions;
    m.ended_gpu_ms = r.earlier_gpu_s * 1000;
    jobs.push_back(std::move(m));
  }
  for (const auto& p : pending) {
    sim::ModelJob m{
        .request = request(p.job), .name = p.job.name, .state = sim::JobState::kPending};
    const core::JobSpec parsed = parse(p.job.spec);
    if (p.job.array_task) {
      m.array_job = JobId(p.job.id);
      m.request.array = sched::ArrayLimit{JobId(p.job.id), parsed.array->max_running};
    }
    m.depends_on = parsed.depends_on;
    if (sched::is_session(m.request)) m.request.user = p.job.user;  // as Engine does
    m.queued_at_ms = core::to_ms(at_s(p.queued_s));
    m.attempts = p.attempts;
    m.preemptions = p.preemptions;
    m.ended_gpu_ms = p.earlier_gpu_s * 1000;
    jobs.push_back(std::move(m));
  }
  sched::RunHistory history;
  for (const auto run : nightly_runs) history.add_older(core::TenantId("a"), "nightly", run);
  const sched::SnapshotInput from_fleet = this->fleet_snapshot(jobs, history);

  // ---- field by field ----------------------------------------------------------------
  EXPECT_TRUE(from_store.gpu_types == from_fleet.gpu_types);
  EXPECT_TRUE(from_store.nodes == from_fleet.nodes);
  EXPECT_TRUE(from_store.racks == from_fleet.racks);
  EXPECT_TRUE(from_store.tenants == from_fleet.tenants);
  EXPECT_EQ(from_store.usage, from_fleet.usage);
  EXPECT_TRUE(from_store.reservations == from_fleet.reservations);
  ASSERT_EQ(from_store.running.size(), from_fleet.running.size());
  for (std::size_t i = 0; i < from_store.running.size(); ++i) {
    const sched::RunningJob& s = from_store.running[i];
    const sched::RunningJob& f = from_fleet.running[i];
    SCOPED_TRACE("running job " + std::to_string(s.request.id.value));
    EXPECT_TRUE(s.request == f.request);
    EXPECT_EQ(s.started_at, f.started_at);
    EXPECT_EQ(s.last_checkpoint_at, f.last_checkpoint_at);
    EXPECT_EQ(s.preemptions, f.preemptions);
    EXPECT_TRUE(s.gpus == f.gpus);
    EXPECT_EQ(s.borrowed, f.borrowed);
    EXPECT_EQ(s.stopping, f.stopping);
    EXPECT_DOUBLE_EQ(s.attained_gpu_seconds, f.attained_gpu_seconds);
    EXPECT_EQ(s.reservation, f.reservation);
    EXPECT_TRUE(s == f);
  }
  ASSERT_EQ(from_store.pending.size(), from_fleet.pending.size());
  for (std::size_t i = 0; i < from_store.pending.size(); ++i) {
    const sched::PendingJob& s = from_store.pending[i];
    const sched::PendingJob& f = from_fleet.pending[i];
    SCOPED_TRACE("pending job " + std::to_string(s.request.id.value));
    EXPECT_TRUE(s.request == f.request);
    EXPECT_EQ(s.queued_at, f.queued_at);
    EXPECT_EQ(s.attempt, f.attempt);
    EXPECT_EQ(s.preemptions, f.preemptions);
    EXPECT_DOUBLE_EQ(s.attained_gpu_seconds, f.attained_gpu_seconds);
    // None here: corral-sim restarts a resized job at once (Engine::resize), so only
    // corrald's requeued resizes have one (as only corrald has stopping jobs).
    EXPECT_EQ(s.resize_target, f.resize_target);
    EXPECT_TRUE(s.dependencies == f.dependencies);
  }
  EXPECT_TRUE(from_store == from_fleet);

  // ... and the facts the policy depends on are really there, not both left at defaults.
  ASSERT_EQ(from_store.running.size(), 5u);
  EXPECT_EQ(from_store.running[0].last_checkpoint_at, at_s(-10));
  EXPECT_EQ(from_store.running[1].last_checkpoint_at, at_s(-3600));
  EXPECT_EQ(from_store.running[1].preemptions, 1);
  EXPECT_TRUE(from_store.running[1].borrowed);
  EXPECT_DOUBLE_EQ(from_store.running[0].attained_gpu_seconds, 8 * 610.0);
  EXPECT_DOUBLE_EQ(from_store.running[2].attained_gpu_seconds, 4 * 500.0 + 4 * 300.0);
  ASSERT_TRUE(from_store.running[2].request.elastic.has_value());
  EXPECT_EQ(from_store.running[2].request.elastic->scaling,
            (std::vector<core::ScalingPoint>{{.gpus = 2, .throughput = 10.0},
                                             {.gpus = 8, .throughput = 28.5}}));
  EXPECT_EQ(from_store.running[3].request.estimate.basis, sched::EstimateBasis::kHistory);
  EXPECT_EQ(from_store.running[3].request.estimate.runs, 3);
  EXPECT_EQ(from_store.running[3].request.estimate.runtime, seconds(3600));
  // The gang of shares: a quarter of each GPU with 20 GiB, and its service a quarter of
  // the GPUs' time (2 x 100 s / 4).
  EXPECT_EQ(from_store.running[4].request.gpu_milli, 250);
  EXPECT_EQ(from_store.running[4].request.gpu_memory_mib, 20 * 1024);
  EXPECT_DOUBLE_EQ(from_store.running[4].attained_gpu_seconds, 50.0);
  ASSERT_EQ(from_store.pending.size(), 7u);
  EXPECT_EQ(from_store.pending[6].request.gpu_milli, 500);
  EXPECT_EQ(from_store.pending[5].request.tier, core::kInteractiveTier);
  EXPECT_EQ(from_store.pending[5].request.user, "alice");
  ASSERT_TRUE(from_store.pending[3].request.array.has_value());
  EXPECT_EQ(from_store.pending[3].request.array->array, JobId(9));
  EXPECT_EQ(from_store.pending[3].request.array->max_running, 1);
  ASSERT_EQ(from_store.pending[4].dependencies.size(), 2u);
  EXPECT_TRUE(from_store.pending[4].dependencies[0].started);  // job 1 runs
  EXPECT_EQ(from_store.pending[4].dependencies[0].started_at, at_s(running[0].started_s));
  EXPECT_FALSE(from_store.pending[4].dependencies[0].ended);
  EXPECT_EQ(from_store.pending[4].dependencies[1].job, JobId(9));  // the array, summed up
  EXPECT_FALSE(from_store.pending[4].dependencies[1].started);
  EXPECT_EQ(from_store.pending[4].dependencies[1].on, core::DependencyCondition::kSuccess);
  EXPECT_EQ(from_store.pending[0].preemptions, 3);
  EXPECT_EQ(from_store.pending[0].attempt, 3);
  EXPECT_EQ(from_store.pending[1].request.gpu_speed,
            (std::map<core::GpuTypeId, double>{{core::GpuTypeId("H100"), 2.5}}));
  EXPECT_DOUBLE_EQ(from_store.pending[0].attained_gpu_seconds, 1200.0);
  EXPECT_EQ(from_store.pending[1].request.estimate.basis, sched::EstimateBasis::kSpec);
  EXPECT_EQ(from_store.pending[1].request.region, "eu-west");
  EXPECT_EQ(from_store.nodes[0].labels.region, "eu-west");
  EXPECT_EQ(from_store.pending[1].request.tier, 2);
  EXPECT_EQ(from_store.pending[2].request.reservation, core::ReservationId("launch"));
  ASSERT_EQ(from_store.racks.size(), 2u);
  EXPECT_EQ(from_store.racks[0].power_cap_watts, 20'000);  // the config's, not the agent's
  EXPECT_EQ(from_store.racks[1].power_cap_watts, 6'000);
  EXPECT_EQ(from_store.usage.size(), 2u);
  EXPECT_EQ(from_store.reservations.size(), 1u);
  EXPECT_FALSE(from_store.nodes[2].gpus[7].healthy);
  EXPECT_EQ(from_store.nodes[1].admin, core::NodeAdminState::kCordoned);
  // The built input is one the scheduler accepts.
  EXPECT_TRUE(sched::build_snapshot(from_store).ok());
}

// What workers report corrects an elastic job's declared curve in the snapshot corrald
// builds (core::merge_scaling): the newest report at each size, on the type of the
// newest report; and each type's reports make that type's curve (scaling_by_type). The simulator
// has no workers: its curves come from the traces' profiles, so this half of the contract has no
// fleet side.
TYPED_TEST(SnapshotContractTest, ReportedThroughputCorrectsTheDeclaredCurve) {
  const Job elastic{3, "a", "elastic",
                    spec("elastic", "a", 4,
                         R"(, "elastic": {"minGpus": 2, "maxGpus": 8, "step": 2, "scaling": )"
                         R"([{"gpus": 2, "throughput": 10}, {"gpus": 8, "throughput": 28.5}]},)"
                         R"( "checkpoint": {"dir": "/e", "intervalSeconds": 100})")};
  this->ok(this->store_->transact([&](store::Tx& tx) -> core::Status {
    CORRAL_RETURN_IF_ERROR(this->put_tenants(tx));
    CORRAL_ASSIGN_OR_RETURN(auto row, tx.jobs().insert_job({.tenant = core::TenantId("a"),
                                                            .name = elastic.name,
                                                            .priority_class = "standard",
                                                            .tier = core::tier_of("standard"),
                                                            .spec_json = elastic.spec,
                                                            .now = at_s(-9000)}));
    for (int g = 0; g < 4; ++g) {
      CORRAL_RETURN_IF_ERROR(
          tx.allocations().insert_allocation({.job = row.id,
                                              .attempt = 1,
                                              .node = core::NodeId("n1"),
                                              .gpu_index = g,
                                              .gpu_type = core::GpuTypeId("H100"),
                                              .created_at = at_s(-600)}));
    }
    // On H100 at 4 GPUs: 20 samples/s, then 30 (the newer replaces it). An older figure on
    // another type (A100 at 2 GPUs) is left out of the job's curve (the newest report was
    // on H100) and makes the A100 curve.
    for (const auto& [throughput, t] : {std::pair{20.0, -300}, {30.0, -200}}) {
      CORRAL_RETURN_IF_ERROR(
          tx.checkpoints().record_throughput({.job = row.id,
                                              .gpu_type = core::GpuTypeId("H100"),
                                              .gpus = 4,
                                              .throughput = throughput,
                                              .time = at_s(t)}));
    }
    CORRAL_RETURN_IF_ERROR(
        tx.checkpoints().record_throughput({.job = row.id,
                                            .gpu_type = core::GpuTypeId("A100-80GB"),
                                            .gpus = 2,
                                            .throughput = 5,
                                            .time = at_s(-5000)}));
    store::JobRow next = row;
    next.phase = core::JobPhase::kRunning;
    next.attempt = 1;
    CORRAL_ASSIGN_OR_RETURN(const bool won, tx.jobs().update_job(next, core::JobPhase::kPending));
    EXPECT_TRUE(won);
    return core::Status();
  }));
  sched::SnapshotInput in;
  this->ok(this->store_->read([&](store::Tx& tx) {
    CORRAL_ASSIGN_OR_RETURN(auto view, server::read_store_view(tx, at_s(0)));
    server::SpecCache specs;
    server::RequestCache requests(specs);
    const std::map<std::int64_t, store::JobRow> queue;
    const sched::RunHistory history;
    in = server::snapshot_from_store(
        view, {.pending = queue, .usage = this->usage_, .runs = history}, requests, at_s(0));
    return core::Status();
  }));
  ASSERT_EQ(in.running.size(), 1u);
  ASSERT_TRUE(in.running[0].request.elastic.has_value());
  // Declared at 4: 10 + 2/6 x 18.5 = 16.17; measured 30, so the declared points scale by
  // 30 / 16.17 = 1.856 and the measurement stands at 4.
  const auto& curve = in.running[0].request.elastic->scaling;
  ASSERT_EQ(curve.size(), 3u);
  EXPECT_EQ(curve[0].gpus, 2);
  EXPECT_NEAR(curve[0].throughput, 10 * 30 / (10 + 18.5 / 3), 1e-9);
  EXPECT_EQ(curve[1].gpus, 4);
  EXPECT_DOUBLE_EQ(curve[1].throughput, 30);
  EXPECT_EQ(curve[2].gpus, 8);
  EXPECT_NEAR(curve[2].throughput, 28.5 * 30 / (10 + 18.5 / 3), 1e-9);
  // Per type: on H100 the same curve; on A100 the declared one scaled by 5 / 10, with the
  // measurement at 2.
  const auto& by_type = in.running[0].request.scaling_by_type;
  ASSERT_EQ(by_type.size(), 2u);
  EXPECT_EQ(by_type.at(core::GpuTypeId("H100")), curve);
  const std::vector<core::ScalingPoint> a100 = {{2, 5.0}, {8, 28.5 * 0.5}};
  EXPECT_EQ(by_type.at(core::GpuTypeId("A100-80GB")), a100);
}

// A sweep is one workload to fair share (docs/scheduling.md, 9): its pending trial's
// attained service is the whole sweep's (an ended trial's 400 GPU-s, a running trial's 100
// so far, its own earlier 50), in both adapters; a plain pending job of the tenant keeps
// its own (none).
TYPED_TEST(SnapshotContractTest, ASweepsPendingTrialCarriesTheWholeSweepsService) {
  const std::string sweep_spec = spec(
      "lr-sweep", "a", 1,
      R"(, "sweep": {"trials": 3, "parameters": {"lr": {"values": [1, 2]}}, "metric": {"name": "loss"}})");
  const std::int64_t earlier_s[] = {400, 0, 50};  // GPU-seconds of ended attempts, by trial
  this->ok(this->store_->transact([&](store::Tx& tx) -> core::Status {
    CORRAL_RETURN_IF_ERROR(this->put_tenants(tx));
    for (int i = 0; i < 3; ++i) {
      CORRAL_ASSIGN_OR_RETURN(auto row, tx.jobs().insert_job({.tenant = core::TenantId("a"),
                                                              .name = "lr-sweep",
                                                              .priority_class = "standard",
                                                              .tier = core::tier_of("standard"),
                                                              .spec_json = sweep_spec,
                                                              .now = at_s(-9000),
                                                              .array_index = i,
                                                              .array_job = JobId(i == 0 ? 0 : 1)}));
      EXPECT_EQ(row.id.value, i + 1);
      if (earlier_s[i] > 0) {  // one GPU for that long, released
        CORRAL_RETURN_IF_ERROR(
            tx.allocations().insert_allocation({.job = row.id,
                                                .attempt = 1,
                                                .node = core::NodeId("n1"),
                                                .gpu_index = 0,
                                                .gpu_type = core::GpuTypeId("H100"),
                                                .created_at = at_s(-5000)}));
        CORRAL_RETURN_IF_ERROR(
            tx.allocations().release_allocations(row.id, at_s(-5000 + earlier_s[i])).status());
      }
    }
    CORRAL_RETURN_IF_ERROR(tx.jobs()
                               .insert_job({.tenant = core::TenantId("a"),
                                            .name = "plain",
                                            .priority_class = "standard",
                                            .tier = core::tier_of("standard"),
                                            .spec_json = spec("plain", "a", 1),
                                            .now = at_s(-9000)})
                               .status());
    // Trial 0 ended; trial 1 runs on n3 since 100 s ago; trial 2 and `plain` wait.
    CORRAL_ASSIGN_OR_RETURN(auto first, tx.jobs().get_job(JobId(1)));
    store::JobRow ended = *first;
    ended.phase = core::JobPhase::kSucceeded;
    CORRAL_ASSIGN_OR_RETURN(bool won, tx.jobs().update_job(ended, core::JobPhase::kPending));
    EXPECT_TRUE(won);
    CORRAL_RETURN_IF_ERROR(tx.allocations().insert_allocation({.job = JobId(2),
                                                               .attempt = 1,
                                                               .node = core::NodeId("n3"),
                                                               .gpu_index = 4,
                                                               .gpu_type = core::GpuTypeId("H100"),
                                                               .created_at = at_s(-100)}));
    CORRAL_ASSIGN_OR_RETURN(auto second, tx.jobs().get_job(JobId(2)));
    store::JobRow running = *second;
    running.phase = core::JobPhase::kRunning;
    running.attempt = 1;
    CORRAL_ASSIGN_OR_RETURN(won, tx.jobs().update_job(running, core::JobPhase::kPending));
    EXPECT_TRUE(won);
    return core::Status();
  }));
  sched::SnapshotInput from_store;
  this->ok(this->store_->read([&](store::Tx& tx) {
    CORRAL_ASSIGN_OR_RETURN(auto view, server::read_store_view(tx, at_s(0)));
    CORRAL_ASSIGN_OR_RETURN(const auto queue, pending_queue(tx));
    server::SpecCache specs;
    server::RequestCache requests(specs);
    CORRAL_ASSIGN_OR_RETURN(view.sweep_service,
                            server::read_sweep_service(tx.jobs(), queue, requests));
    const sched::RunHistory history;
    from_store = server::snapshot_from_store(
        view, {.pending = queue, .usage = this->usage_, .runs = history}, requests, at_s(0));
    return core::Status();
  }));

  // corral-sim: the same four jobs as the fleet model.
  std::vector<sim::ModelJob> jobs;
  for (int i = 0; i < 4; ++i) {
    const std::string text = i < 3 ? sweep_spec : spec("plain", "a", 1);
    sim::ModelJob m{.request = sched::job_request_from_spec(JobId(i + 1), parse(text), 1),
                    .name = i < 3 ? "lr-sweep" : "plain",
                    .state = i == 0   ? sim::JobState::kDone
                             : i == 1 ? sim::JobState::kRunning
                                      : sim::JobState::kPending};
    if (i < 3) {
      m.array_job = JobId(1);
      m.array_index = i;
      m.sweep_trial = true;
      m.ended_gpu_ms = earlier_s[i] * 1000;
    }
    if (i == 1) {
      m.run_start_ms = core::to_ms(at_s(-100));
      m.gpus = {{core::NodeId("n3"), 4}};
    }
    m.queued_at_ms = core::to_ms(at_s(-9000));
    jobs.push_back(std::move(m));
  }
  const sched::SnapshotInput from_fleet = this->fleet_snapshot(jobs, {});

  for (const sched::SnapshotInput* in :
       std::vector<const sched::SnapshotInput*>{&from_store, &from_fleet}) {
    ASSERT_EQ(in->pending.size(), 2u);
    EXPECT_EQ(in->pending[0].request.id, JobId(3));
    EXPECT_DOUBLE_EQ(in->pending[0].attained_gpu_seconds, 400 + 100 + 50);
    EXPECT_EQ(in->pending[1].request.id, JobId(4));
    EXPECT_DOUBLE_EQ(in->pending[1].attained_gpu_seconds, 0);
  }
}

}  // namespace
}  // namespace corral::testing
