// The whole Agent against a stand-in corrald (an httplib server in the test, at the
// HTTP boundary): join, long-polled assignments, heartbeats with worker states and
// injected faults, checkpoint forwarding from a real corral-trainer, the local server's
// endpoints, and fencing. Real end-to-end tests against corrald come with the merge.
#include "agent/agent.h"

#include <condition_variable>
#include <filesystem>
#include <httplib.h>
#include <mutex>
#include <optional>

#include "agent_test_util.h"
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/agent_protocol.h"

namespace corral::agent {
namespace {

using nlohmann::json;
using testing::eventually;
using testing::TempDir;

// The corrald side of the protocol, reduced to what the agent sees; it speaks through the
// protocol's one codec (core/agent_protocol.h), as corrald does.
class FakeCorrald {
 public:
  FakeCorrald() {
    http_.Post("/v1/agents/join", [this](const httplib::Request& req, httplib::Response& res) {
      if (req.get_header_value("Authorization") != "Bearer jt") {
        res.status = 401;
        res.set_content(R"({"error":{"code":"unauthenticated","message":"bad join token"}})",
                        "application/json");
        return;
      }
      std::lock_guard lock(mu_);
      // The node's body belongs to corrald's nodes API: kept as JSON for the test to read.
      auto join = core::decode_join_request(req.body, [this](std::string_view node) {
        join_node_ = json::parse(node);
        return core::Node{.id = core::NodeId(join_node_.value("id", ""))};
      });
      if (!join.ok()) {
        res.status = 400;
        res.set_content(R"({"error":{"code":"invalid_argument","message":"bad join"}})",
                        "application/json");
        return;
      }
      join_ = std::move(*join);
      ++joins_;
      if (fenced_) {
        fenced_ = false;
        ++epoch_;
      }
      token_ = "agent-token-" + std::to_string(joins_);
      res.set_content(core::encode_join_answer({.node = "n1",
                                                .token = token_,
                                                .epoch = epoch_,
                                                .log_key = "lk",
                                                .cluster_id = cluster_id_}),
                      "application/json");
    });
    http_.Get(
        "/v1/agents/n1/assignments", [this](const httplib::Request& req, httplib::Response& res) {
          std::unique_lock lock(mu_);
          if (!authorized(req, res)) return;
          const std::int64_t since = std::stoll(req.get_param_value("since"));
          cv_.wait_for(lock, std::chrono::milliseconds(300), [&] { return since != version_; });
          if (!authorized(req, res)) return;  // the token may have been forgotten meanwhile
          res.set_content(
              core::encode_assignments(
                  {.node = "n1", .epoch = epoch_, .version = version_, .workers = workers_}),
              "application/json");
        });
    http_.Post(
        "/v1/agents/n1/heartbeat", [this](const httplib::Request& req, httplib::Response& res) {
          std::lock_guard lock(mu_);
          if (!authorized(req, res)) return;
          auto body = core::decode_heartbeat(req.body);
          if (!body.ok()) {
            res.status = 400;
            res.set_content(R"({"error":{"code":"invalid_argument","message":"bad heartbeat"}})",
                            "application/json");
            return;
          }
          if (fenced_ || body->epoch != epoch_) {
            res.status = 409;
            res.set_content(R"({"error":{"code":"fenced","message":"node was lost"}})",
                            "application/json");
            return;
          }
          last_heartbeat_ = std::move(*body);
          ++heartbeats_;
          for (const auto& w : last_heartbeat_->workers) ever_reported_.push_back(w);
          res.set_content(core::encode_heartbeat_answer({.epoch = epoch_, .version = version_}),
                          "application/json");
        });
    http_.Post("/v1/agents/n1/checkpoints",
               [this](const httplib::Request& req, httplib::Response& res) {
                 std::lock_guard lock(mu_);
                 if (!authorized(req, res)) return;
                 auto checkpoint = core::decode_worker_checkpoint(req.body);
                 if (!checkpoint.ok()) {
                   res.status = 400;
                   return;
                 }
                 checkpoints_.push_back(std::move(*checkpoint));
                 res.status = 201;
                 res.set_content("{}", "application/json");
               });
    http_.Post("/v1/agents/n1/telemetry",
               [this](const httplib::Request& req, httplib::Response& res) {
                 {
                   // Waits outside mu_: a hanging telemetry call holds nothing else.
                   std::unique_lock gate(gate_mu_);
                   ++telemetry_waiting_;
                   gate_cv_.wait(gate, [&] { return gate_open_; });
                   --telemetry_waiting_;
                 }
                 std::lock_guard lock(mu_);
                 if (!authorized(req, res)) return;
                 auto batch = core::decode_telemetry_batch(req.body);
                 if (!batch.ok()) {
                   res.status = 400;
                   return;
                 }
                 telemetry_.push_back(std::move(*batch));
                 res.status = 202;
                 res.set_content(R"({"accepted":0,"dropped":0})", "application/json");
               });
    // A worker's lookup: recorded; a set named missing@... answers 404, any other an
    // answer that echoes the rows it was asked.
    http_.Post("/v1/agents/n1/features/lookup",
               [this](const httplib::Request& req, httplib::Response& res) {
                 std::lock_guard lock(mu_);
                 if (!authorized(req, res)) return;
                 auto lookup = core::decode_worker_feature_lookup(req.body);
                 if (!lookup.ok()) {
                   res.status = 400;
                   return;
                 }
                 lookups_.push_back(*lookup);
                 if (lookup->request.set.rfind("missing@", 0) == 0) {
                   res.status = 404;
                   res.set_content(R"({"error":{"code":"not_found","message":"no such set"}})",
                                   "application/json");
                   return;
                 }
                 res.set_content(json{{"results", json::parse(lookup->request.lookup)["rows"]},
                                      {"watermarks", json::object()}}
                                     .dump(),
                                 "application/json");
               });
    port_ = http_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { http_.listen_after_bind(); });
  }
  ~FakeCorrald() { stop(); }
  // Gone: every later call of the agent finds nobody listening.
  void stop() {
    set_telemetry_gate(true);
    http_.stop();
    if (thread_.joinable()) thread_.join();
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  void set_workers(std::vector<core::DesiredWorker> workers) {
    std::lock_guard lock(mu_);
    workers_ = std::move(workers);
    ++version_;
    cv_.notify_all();
  }
  void fence() {
    std::lock_guard lock(mu_);
    fenced_ = true;
  }
  // What a fresh corrald with another store at the same address looks like: it knows no
  // agent token, answers joins with another cluster id, and wants `workers`.
  void become_cluster(const std::string& cluster_id, std::vector<core::DesiredWorker> workers) {
    std::lock_guard lock(mu_);
    cluster_id_ = cluster_id;
    token_ = "unknown-to-the-agent";
    workers_ = std::move(workers);
    ++version_;
    cv_.notify_all();
  }
  // Closed: telemetry calls hang until it opens.
  void set_telemetry_gate(bool open) {
    std::lock_guard gate(gate_mu_);
    gate_open_ = open;
    gate_cv_.notify_all();
  }
  int telemetry_waiting() {
    std::lock_guard gate(gate_mu_);
    return telemetry_waiting_;
  }
  template <typename F>
  auto with(F f) {
    std::lock_guard lock(mu_);
    return f(*this);
  }

  int joins_ = 0, heartbeats_ = 0;
  std::int64_t epoch_ = 3, version_ = 0;
  std::string cluster_id_ = "c0ffee";
  core::JoinRequest join_;
  json join_node_;
  std::optional<core::Heartbeat> last_heartbeat_;
  std::vector<core::DesiredWorker> workers_;
  std::vector<core::WorkerStatus> ever_reported_;  // every worker of every accepted heartbeat
  std::vector<core::WorkerCheckpoint> checkpoints_;
  std::vector<core::TelemetryBatch> telemetry_;
  std::vector<core::WorkerFeatureLookup> lookups_;

 private:
  bool authorized(const httplib::Request& req, httplib::Response& res) {
    if (req.get_header_value("Authorization") == "Bearer " + token_) return true;
    res.status = 401;
    res.set_content(R"({"error":{"code":"unauthenticated","message":"no"}})", "application/json");
    return false;
  }

  std::mutex mu_;
  std::condition_variable_any cv_;
  bool fenced_ = false;
  std::string token_;
  std::mutex gate_mu_;
  std::condition_variable gate_cv_;
  bool gate_open_ = true;
  int telemetry_waiting_ = 0;
  httplib::Server http_;
  int port_ = 0;
  std::thread thread_;
};

core::DesiredWorker worker(std::int64_t job, std::int32_t rank, std::vector<std::string> command,
                           const std::string& ckpt_dir = "") {
  return {.spec = {.key = {.job = job, .attempt = 1, .rank = rank},
                   .local_rank = rank,
                   .world_size = 1,
                   .gpus = {rank},
                   .visible_devices = std::to_string(rank),
                   .command = std::move(command),
                   .env = {{"SECRET", "s3cret"}},
                   .master_addr = "127.0.0.1",
                   .master_port = 29510,
                   .checkpoint_dir = ckpt_dir,
                   .grace_ms = 2000}};
}

// The last heartbeat's report of (job, rank), if it has one.
std::optional<core::WorkerStatus> reported(FakeCorrald& corrald, std::int64_t job,
                                           std::int32_t rank) {
  return corrald.with([&](FakeCorrald& c) -> std::optional<core::WorkerStatus> {
    if (!c.last_heartbeat_) return std::nullopt;  // none yet
    for (const auto& w : c.last_heartbeat_->workers) {
      if (w.key.job == job && w.key.rank == rank) return w;
    }
    return std::nullopt;
  });
}

bool reported_in(FakeCorrald& corrald, std::int64_t job, std::int32_t rank,
                 core::WorkerStatus::State state) {
  const auto w = reported(corrald, job, rank);
  return w && w->state == state;
}
constexpr auto kRunning = core::WorkerStatus::State::kRunning;
constexpr auto kExited = core::WorkerStatus::State::kExited;

TEST(Agent, RunsWorkersForwardsCheckpointsServesLogsAndRejoinsWhenFenced) {
  TempDir dir;
  FakeCorrald corrald;
  auto inventory = open_preset_inventory("dgx-h100", "n1");
  ASSERT_TRUE(inventory.ok());
  core::SystemClock clock;
  AgentOptions options{.server_url = corrald.url(),
                       .join_token = "jt",
                       .node = "n1",
                       .labels = {.region = "local", .rack = "r1"},
                       .state_dir = dir.path() + "/state",
                       .heartbeat_ms = 100,
                       .supervisor_exe = CORRAL_AGENT_PATH};
  Agent agent(options, std::move(*inventory), clock);
  core::Status run_status;
  std::thread runner([&] { run_status = agent.run(); });

  ASSERT_TRUE(
      eventually([&] { return corrald.with([](FakeCorrald& c) { return c.heartbeats_ > 0; }); }));
  const core::JoinRequest join = corrald.with([](FakeCorrald& c) { return c.join_; });
  const json join_node = corrald.with([](FakeCorrald& c) { return c.join_node_; });
  EXPECT_EQ(join.node.id.value, "n1");
  EXPECT_EQ(join_node["labels"]["rack"], "r1");
  EXPECT_EQ(join_node["gpus"].size(), 8u);
  EXPECT_EQ(join.inventory.source, "simulated:dgx-h100");
  EXPECT_EQ(join.inventory.gpus.size(), 8u);
  const std::string agent_url = join.agent_url;
  EXPECT_EQ(agent_url, agent.agent_url());

  // 1. A real trainer: it runs, checkpoints every 10 steps, reports to the local agent,
  //    which forwards to corrald; it exits 0 and the heartbeat says so.
  const std::string ckpt = dir.path() + "/ckpt";
  corrald.set_workers(
      {worker(1, 0, {CORRAL_TRAINER_PATH, "--steps", "30", "--checkpoint-every", "10"}, ckpt)});
  ASSERT_TRUE(eventually([&] { return reported_in(corrald, 1, 0, kExited); }));
  const core::WorkerStatus done = *reported(corrald, 1, 0);
  EXPECT_EQ(done.exit_code, 0);
  EXPECT_GT(done.pid, 0);
  ASSERT_TRUE(eventually(
      [&] { return corrald.with([](FakeCorrald& c) { return c.checkpoints_.size() == 2; }); }));
  const core::WorkerCheckpoint first =
      corrald.with([](FakeCorrald& c) { return c.checkpoints_[0]; });
  EXPECT_EQ(first.epoch, 3);
  EXPECT_EQ(first.key, (core::WorkerKey{.job = 1, .attempt = 1, .rank = 0}));
  EXPECT_EQ(first.report.step, 10);
  EXPECT_EQ(first.report.path, ckpt + "/step-000000010-attempt-1");
  EXPECT_EQ(first.report.checksum.rfind("sha256:", 0), 0u);

  // 2. The local server: logs with the log key only; checkpoints with a worker token only.
  httplib::Client local(agent_url);
  auto log = local.Get("/local/logs/1/1/0", {{"Authorization", "Bearer lk"}});
  ASSERT_TRUE(log);
  EXPECT_EQ(log->status, 200);
  EXPECT_NE(log->body.find("final="), std::string::npos);
  auto tail = local.Get("/local/logs/1/1/0?tailBytes=5", {{"Authorization", "Bearer lk"}});
  ASSERT_TRUE(tail);
  EXPECT_EQ(tail->body.size(), 5u);
  EXPECT_EQ(local.Get("/local/logs/1/1/0", {{"Authorization", "Bearer nope"}})->status, 401);
  EXPECT_EQ(local.Get("/local/logs/1/1/9", {{"Authorization", "Bearer lk"}})->status, 404);
  auto forged = local.Post("/local/checkpoint", {{"Authorization", "Bearer forged"}},
                           R"({"step": 1, "path": "/x"})", "application/json");
  ASSERT_TRUE(forged);
  EXPECT_EQ(forged->status, 401);
  auto anonymous =
      local.Post("/local/checkpoint", R"({"step": 1, "path": "/x"})", "application/json");
  EXPECT_EQ(anonymous->status, 401);

  // 3. Injected faults show up in the next heartbeat.
  std::ofstream(dir.path() + "/state/faults.json") << R"({"gpus": {"3": {"xid": 79}}})";
  ASSERT_TRUE(eventually([&] {
    return corrald.with([](FakeCorrald& c) {
      return c.last_heartbeat_->gpus && c.last_heartbeat_->gpus->size() > 3 &&
             (*c.last_heartbeat_->gpus)[3].xid_errors == std::vector<std::int32_t>{79};
    });
  }));

  // 4. Fenced: every worker is stopped and the agent joins again with the new epoch.
  corrald.set_workers({worker(2, 0, {"/bin/sh", "-c", "sleep 1000"})});
  ASSERT_TRUE(eventually([&] { return reported_in(corrald, 2, 0, kRunning); }));
  corrald.fence();
  ASSERT_TRUE(
      eventually([&] { return corrald.with([](FakeCorrald& c) { return c.joins_ == 2; }); }));
  corrald.set_workers({});
  ASSERT_TRUE(eventually([&] {
    return reported_in(corrald, 2, 0, kExited) &&
           corrald.with([](FakeCorrald& c) { return c.last_heartbeat_->epoch == 4; });
  }));
  const int sig = reported(corrald, 2, 0)->signal;
  EXPECT_TRUE(sig == SIGTERM || sig == SIGKILL) << sig;  // no grace when fenced

  agent.shutdown();
  runner.join();
  EXPECT_TRUE(run_status.ok()) << run_status.to_string();
}

// Issue #19. Job 1 of one cluster is not job 1 of another: the agent adopts only the
// workers recorded under the cluster id it joined. Workers of any other cluster (here one
// left under STATE_DIR/clusters/old, one in the layout from before cluster ids, both
// ignoring SIGTERM with a minute's grace recorded) are killed with no grace, never
// reported, and their records deleted; this cluster's job 1 gets a worker of its own. A
// corrald with another store at the same address later makes the agent do it again.
TEST(Agent, WorkersOfAnotherClusterAreStoppedAndForgottenNotAdopted) {
  TempDir dir;
  const std::string state = dir.path() + "/state";
  core::SystemClock clock;
  const auto stubborn = [](std::int64_t job) {
    return core::WorkerSpec{
        .key = {.job = job, .attempt = 1, .rank = 0},
        .command = {"/bin/sh", "-c", "trap '' TERM; while :; do sleep 0.05; done"},
        .grace_ms = 60000};
  };
  std::vector<std::int64_t> old_pids;
  for (const std::string& old_dir : {state + "/clusters/old", state}) {
    Launcher launcher(Launcher::Options{
        .state_dir = old_dir, .supervisor_exe = CORRAL_AGENT_PATH, .clock = &clock});
    auto live = launcher.start(stubborn(1));
    ASSERT_TRUE(live.ok()) << live.status().to_string();
    auto done = launcher.start(core::WorkerSpec{.key = {.job = 2, .attempt = 1, .rank = 0},
                                                .command = {"/bin/sh", "-c", "exit 3"}});
    ASSERT_TRUE(done.ok());
    core::WorkerStatus st;
    ASSERT_TRUE(eventually([&] {
      st = launcher.observe(*live);
      return st.pid > 0 && launcher.observe(*done).state == core::WorkerStatus::State::kExited;
    }));
    old_pids.push_back(st.pid);
  }  // the old agents are gone; their workers are not

  FakeCorrald corrald;
  corrald.set_workers({worker(1, 0, {"/bin/sh", "-c", "echo fresh; sleep 1000"})});
  auto inventory = open_preset_inventory("dgx-h100", "n1");
  ASSERT_TRUE(inventory.ok());
  Agent agent(AgentOptions{.server_url = corrald.url(),
                           .join_token = "jt",
                           .node = "n1",
                           .state_dir = state,
                           .heartbeat_ms = 100,
                           .supervisor_exe = CORRAL_AGENT_PATH},
              std::move(*inventory), clock);
  core::Status run_status;
  std::thread runner([&] { run_status = agent.run(); });
  struct Stop {  // also when an ASSERT returns early
    Agent& agent;
    std::thread& runner;
    ~Stop() {
      agent.shutdown();
      if (runner.joinable()) runner.join();
    }
  } stop{agent, runner};

  ASSERT_TRUE(eventually([&] { return reported_in(corrald, 1, 0, kRunning); }));
  const core::WorkerStatus fresh = *reported(corrald, 1, 0);
  for (const std::int64_t pid : old_pids) {
    EXPECT_NE(fresh.pid, pid);
    EXPECT_TRUE(eventually([&] { return !testing::process_alive(static_cast<pid_t>(pid)); }, 3000))
        << "pid " << pid << " of another cluster outlived the grace of 0";
  }
  EXPECT_TRUE(eventually([&] {
    return !std::filesystem::exists(state + "/clusters/old/run") &&
           !std::filesystem::exists(state + "/run");
  })) << "the other clusters' run records were not deleted";
  EXPECT_EQ(testing::slurp(state + "/cluster-id"), "c0ffee\n");
  ASSERT_TRUE(eventually([&] {
    return testing::slurp(state + "/clusters/c0ffee/logs/1/attempt-1/rank-0.log") == "fresh\n";
  }));
  httplib::Client local(agent.agent_url());
  auto log = local.Get("/local/logs/1/1/0", {{"Authorization", "Bearer lk"}});
  ASSERT_TRUE(log);
  EXPECT_EQ(log->body, "fresh\n");
  // Nothing of the other clusters ever reached this one.
  corrald.with([&](FakeCorrald& c) {
    for (const core::WorkerStatus& w : c.ever_reported_) {
      EXPECT_EQ(w.key.job, 1) << w.key.name();
      for (const std::int64_t pid : old_pids) EXPECT_NE(w.pid, pid) << w.key.name();
    }
    return 0;
  });

  // 2. Another store behind the same address: the agent's token is refused, it joins
  //    again, learns another cluster id, kills c0ffee's job 1 and starts beef's.
  const std::int64_t c0ffee_pid = fresh.pid;
  corrald.become_cluster("beef", {worker(1, 0, {"/bin/sh", "-c", "echo beef; sleep 1000"})});
  ASSERT_TRUE(eventually([&] {
    const auto beef = reported(corrald, 1, 0);
    return beef && beef->state == kRunning && beef->pid != c0ffee_pid;
  }));
  EXPECT_TRUE(
      eventually([&] { return !testing::process_alive(static_cast<pid_t>(c0ffee_pid)); }, 3000));
  // The agent records the new cluster once it has acted on the join; the test may see
  // beef's worker report before that write lands.
  EXPECT_TRUE(eventually([&] { return testing::slurp(state + "/cluster-id") == "beef\n"; }))
      << testing::slurp(state + "/cluster-id");
  EXPECT_TRUE(eventually([&] { return !std::filesystem::exists(state + "/clusters/c0ffee/run"); }));
  EXPECT_EQ(corrald.with([](FakeCorrald& c) { return c.joins_; }), 2);

  corrald.set_workers({});
  // A liveness wait: under a loaded full run the stop and its report took over 10 s once.
  EXPECT_TRUE(eventually([&] { return reported_in(corrald, 1, 0, kExited); }, 30000));
  agent.shutdown();
  runner.join();
  EXPECT_TRUE(run_status.ok()) << run_status.to_string();
}

// Runs an agent for node n1 (an 8-GPU PCIe preset) against `corrald` until it stops: for
// refusals at join, which end the agent's run.
core::Status run_until_refused(FakeCorrald& corrald, const TempDir& dir, std::string join_token) {
  auto inventory = open_preset_inventory("pcie-8gpu", "n1");
  if (!inventory.ok()) return inventory.status();
  core::SystemClock clock;
  Agent agent(AgentOptions{.server_url = corrald.url(),
                           .join_token = std::move(join_token),
                           .node = "n1",
                           .state_dir = dir.path(),
                           .supervisor_exe = CORRAL_AGENT_PATH},
              std::move(*inventory), clock);
  return agent.run();
}

// Telemetry: the sampler reads the GPUs every interval (a GPU running a worker busy, the
// others idle) and the sender posts batches on a connection of its own: while corrald's
// telemetry route hangs, heartbeats keep arriving, and the samples buffered meanwhile are
// sent once it answers again.
TEST(Agent, SendsTelemetryApartFromTheHeartbeat) {
  TempDir dir;
  FakeCorrald corrald;
  auto inventory = open_preset_inventory("dgx-h100", "n1");
  ASSERT_TRUE(inventory.ok());
  core::SystemClock clock;
  AgentOptions options{.server_url = corrald.url(),
                       .join_token = "jt",
                       .node = "n1",
                       .state_dir = dir.path() + "/state",
                       .heartbeat_ms = 50,
                       .telemetry = {.interval_ms = 20, .flush_ms = 50},
                       .supervisor_exe = CORRAL_AGENT_PATH};
  Agent agent(options, std::move(*inventory), clock);
  std::thread runner([&] { (void)agent.run(); });
  corrald.set_workers({worker(1, 3, {"/bin/sleep", "60"})});
  ASSERT_TRUE(eventually([&] { return reported_in(corrald, 1, 3, kRunning); }));
  // A batch sampled while the worker ran: GPU 3 busy, the others idle.
  const auto busy_batch = [&](std::size_t from) {
    return corrald.with([&](FakeCorrald& c) {
      for (std::size_t b = from; b < c.telemetry_.size(); ++b) {
        for (const auto& s : c.telemetry_[b].samples) {
          if (s.gpu == 3 && s.utilization >= 0.85) return true;
        }
      }
      return false;
    });
  };
  ASSERT_TRUE(eventually([&] { return busy_batch(0); }));
  corrald.with([](FakeCorrald& c) {
    for (const auto& batch : c.telemetry_) {
      for (const auto& s : batch.samples) {
        EXPECT_GE(s.gpu, 0);
        EXPECT_LT(s.gpu, 8);
        if (s.gpu == 0) {
          EXPECT_LT(s.utilization, 0.01);
        }
      }
    }
  });

  // The telemetry route hangs: heartbeats go on.
  corrald.set_telemetry_gate(false);
  ASSERT_TRUE(eventually([&] { return corrald.telemetry_waiting() > 0; }));
  const std::size_t batches = corrald.with([](FakeCorrald& c) { return c.telemetry_.size(); });
  const int beats = corrald.with([](FakeCorrald& c) { return c.heartbeats_; });
  ASSERT_TRUE(eventually(
      [&] { return corrald.with([&](FakeCorrald& c) { return c.heartbeats_ >= beats + 5; }); }));
  EXPECT_EQ(corrald.with([](FakeCorrald& c) { return c.telemetry_.size(); }), batches);
  corrald.set_telemetry_gate(true);
  ASSERT_TRUE(eventually([&] { return busy_batch(batches + 1); }));
  corrald.set_workers({});  // the worker stops before the agent does
  EXPECT_TRUE(eventually([&] { return reported_in(corrald, 1, 3, kExited); }));
  agent.shutdown();
  runner.join();
}

// A worker's feature lookup is answered at once, with corrald's answer: the agent adds its
// epoch and the worker's (job, attempt, rank) from the worker's token, passes the rows as
// they came, hands back corrald's status and body (a 404 too), and answers 503 when
// corrald cannot be reached.
TEST(Agent, ForwardsAWorkersFeatureLookupAndAnswersWithCorraldsAnswer) {
  TempDir dir;
  FakeCorrald corrald;
  auto inventory = open_preset_inventory("dgx-h100", "n1");
  ASSERT_TRUE(inventory.ok());
  core::SystemClock clock;
  AgentOptions options{.server_url = corrald.url(),
                       .join_token = "jt",
                       .node = "n1",
                       .state_dir = dir.path() + "/state",
                       .heartbeat_ms = 50,
                       .supervisor_exe = CORRAL_AGENT_PATH};
  Agent agent(options, std::move(*inventory), clock);
  std::thread runner([&] { (void)agent.run(); });
  // The worker leaves its token where the test can read it (written whole, then renamed).
  const std::string token_file = dir.path() + "/worker.token";
  corrald.set_workers(
      {worker(7, 0,
              {"/bin/sh", "-c",
               "printf %s \"$CORRAL_WORKER_TOKEN\" > " + token_file + ".tmp && mv " + token_file +
                   ".tmp " + token_file + " && exec sleep 60"})});
  ASSERT_TRUE(eventually([&] { return !testing::slurp(token_file).empty(); }));
  const std::string token = testing::slurp(token_file);
  httplib::Client local(agent.agent_url());
  const auto post = [&](const std::string& bearer, const json& body) {
    return local.Post("/local/features/lookup", {{"Authorization", "Bearer " + bearer}},
                      body.dump(), "application/json");
  };
  const json rows = json::array({{{"entity", "u1"}, {"atMs", 5}}});

  auto r = post(token, {{"set", "user-stats@v1"}, {"rows", rows}, {"ttlMs", 10}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(json::parse(r->body)["results"], rows);
  const auto asked = corrald.with([](FakeCorrald& c) { return c.lookups_; });
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0].epoch, 3);
  EXPECT_EQ(asked[0].key, (core::WorkerKey{.job = 7, .attempt = 1, .rank = 0}));
  EXPECT_EQ(asked[0].request.set, "user-stats@v1");
  EXPECT_EQ(json::parse(asked[0].request.lookup), (json{{"rows", rows}, {"ttlMs", 10}}));
  // corrald's refusal is the worker's answer.
  r = post(token, {{"set", "missing@v1"}, {"rows", rows}, {"ttlMs", 10}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404) << r->body;
  EXPECT_EQ(json::parse(r->body)["error"]["code"], "not_found");
  // Refused here, never forwarded: another token, and a body without its set.
  r = post("forged", {{"set", "user-stats@v1"}, {"rows", rows}, {"ttlMs", 10}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  r = post(token, {{"rows", rows}, {"ttlMs", 10}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(json::parse(r->body)["error"]["field"], "set");
  EXPECT_EQ(corrald.with([](FakeCorrald& c) { return c.lookups_.size(); }), 2u);

  // corrald is gone: 503, for the worker to retry.
  // Running is reported as soon as the supervisor holds its lock, before it has written the
  // worker's pid (0 until then): wait for the report that carries it.
  ASSERT_TRUE(eventually([&] {
    const auto w = reported(corrald, 7, 0);
    return w && w->state == kRunning && w->pid > 0;
  }));
  const auto pid = reported(corrald, 7, 0)->pid;
  corrald.stop();
  r = post(token, {{"set", "user-stats@v1"}, {"rows", rows}, {"ttlMs", 10}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503) << r->body;
  EXPECT_EQ(json::parse(r->body)["error"]["code"], "unavailable");
  // No corrald can stop the worker now: the test does.
  ASSERT_GT(pid, 0);
  kill(-pid, SIGKILL);
  agent.shutdown();
  runner.join();
}

TEST(Agent, AClusterIdThatIsNoPathComponentIsRefused) {
  TempDir dir;
  FakeCorrald corrald;
  corrald.with([](FakeCorrald& c) { return c.cluster_id_ = "../../etc"; });
  const core::Status s = run_until_refused(corrald, dir, "jt");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.field(), "clusterId");
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/clusters"));
}

TEST(Agent, ABadJoinTokenIsAFinalError) {
  TempDir dir;
  FakeCorrald corrald;
  const core::Status s = run_until_refused(corrald, dir, "wrong");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), core::StatusCode::kUnauthenticated);
  EXPECT_NE(s.message().find("bad join token"), std::string::npos);
}

TEST(Labels, ParseAndRejectWithTheEntry) {
  core::TopologyLabels labels;
  std::int64_t cap = 0;
  ASSERT_TRUE(parse_labels("rack=r1,leaf=l1,spine=s1,region=eu,cluster=c1,nvlinkRack=nv1,"
                           "rackPowerCapW=40000",
                           labels, cap)
                  .ok());
  EXPECT_EQ(labels.rack, "r1");
  EXPECT_EQ(labels.nvlink_rack, "nv1");
  EXPECT_EQ(cap, 40000);
  EXPECT_NE(parse_labels("rack", labels, cap).message().find("KEY=VALUE"), std::string::npos);
  EXPECT_NE(parse_labels("rackPowerCapW=-1", labels, cap).message().find("non-negative"),
            std::string::npos);
  EXPECT_EQ(parse_labels("colour=red", labels, cap).field(), "--labels");
}

}  // namespace
}  // namespace corral::agent
