// Launcher and Reconciler with real processes: the built corral-agent is the supervisor,
// /bin/sh scripts are the workers.
#include "agent/launcher.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <set>
#include <signal.h>

#include "agent_test_util.h"
#include <gtest/gtest.h>

#include "agent/cluster_scope.h"
#include "agent/reconciler.h"

namespace corral::agent {
namespace {

using testing::eventually;
using testing::process_alive;
using testing::slurp;
using testing::TempDir;

class LauncherTest : public ::testing::Test {
 protected:
  std::unique_ptr<Launcher> make_launcher() {
    return std::make_unique<Launcher>(Launcher::Options{.state_dir = dir_.path() + "/state",
                                                        .supervisor_exe = CORRAL_AGENT_PATH,
                                                        .agent_url = "http://127.0.0.1:9",
                                                        .clock = &clock_,
                                                        .on_change = [this] { ++changes_; }});
  }
  core::WorkerSpec spec(std::int64_t job, std::int32_t rank, const std::string& script) {
    return core::WorkerSpec{.key = {.job = job, .attempt = 1, .rank = rank},
                            .local_rank = rank,
                            .node_rank = 0,
                            .world_size = 2,
                            .gpus = {rank},
                            .visible_devices = std::to_string(rank),
                            .command = {"/bin/sh", "-c", script},
                            .env = {{"USER_VAR", "hello"}, {"RANK", "spoofed"}},
                            .master_addr = "127.0.0.1",
                            .master_port = 29517,
                            .checkpoint_dir = "/tmp/ckpt-x",
                            .restore_from = "/tmp/ckpt-x/step-1",
                            .grace_ms = 5000};
  }
  std::string work_dir(std::int64_t job, std::int32_t rank) const {
    return dir_.path() + "/state/work/" + std::to_string(job) + "/attempt-1/rank-" +
           std::to_string(rank);
  }
  core::WorkerStatus wait_exited(Launcher& launcher, const LaunchRecord& record) {
    core::WorkerStatus status;
    EXPECT_TRUE(eventually([&] {
      status = launcher.observe(record);
      return status.state == core::WorkerStatus::State::kExited;
    }));
    return status;
  }

  TempDir dir_;
  core::SystemClock clock_;
  std::atomic<int> changes_{0};
};

TEST_F(LauncherTest, SetsTheWorkerEnvironmentLogsAndReportsTheExitCode) {
  auto launcher = make_launcher();
  auto record =
      launcher->start(spec(42, 1, "env > env.txt; echo out-line; echo err-line >&2; exit 7"));
  ASSERT_TRUE(record.ok()) << record.status().to_string();
  const core::WorkerStatus status = wait_exited(*launcher, *record);
  EXPECT_EQ(status.exit_code, 7);
  EXPECT_EQ(status.signal, 0);
  EXPECT_GT(status.pid, 0);
  EXPECT_GE(status.exited_at_ms, status.started_at_ms);

  const std::string env = "\n" + slurp(work_dir(42, 1) + "/env.txt");
  for (const char* line :
       {"CUDA_VISIBLE_DEVICES=1", "WORLD_SIZE=2", "RANK=1", "LOCAL_RANK=1", "NODE_RANK=0",
        "MASTER_ADDR=127.0.0.1", "MASTER_PORT=29517", "CORRAL_JOB_ID=42", "CORRAL_ATTEMPT=1",
        "CORRAL_CHECKPOINT_DIR=/tmp/ckpt-x", "CORRAL_RESTORE_FROM=/tmp/ckpt-x/step-1",
        "CORRAL_AGENT_URL=http://127.0.0.1:9", "USER_VAR=hello"}) {
    EXPECT_NE(env.find("\n" + std::string(line) + "\n"), std::string::npos) << line;
  }
  EXPECT_NE(env.find("CORRAL_WORKER_TOKEN=" + record->token), std::string::npos);
  EXPECT_EQ(record->token.size(), 48u);
  const std::string log = slurp(dir_.path() + "/state/logs/42/attempt-1/rank-1.log");
  EXPECT_NE(log.find("out-line"), std::string::npos);
  EXPECT_NE(log.find("err-line"), std::string::npos);
  EXPECT_TRUE(eventually([&] { return changes_ >= 2; }));  // start and exit
}

// A share of a GPU runs as an NVIDIA MPS client of the daemon at the agent's
// --mps-pipe-dir, within its share's limits; whole GPUs stay out of MPS.
TEST_F(LauncherTest, AShareWorkerGetsMpsLimitsAndTheAgentsPipeDirectory) {
  Launcher launcher(Launcher::Options{.state_dir = dir_.path() + "/state",
                                      .supervisor_exe = CORRAL_AGENT_PATH,
                                      .agent_url = "http://127.0.0.1:9",
                                      .mps_pipe_dir = "/run/corral-mps",
                                      .clock = &clock_});
  core::WorkerSpec share = spec(43, 0, "env > env.txt");
  share.gpu_share_milli = 250;
  share.gpu_memory_mib = 20480;
  auto record = launcher.start(share);
  ASSERT_TRUE(record.ok()) << record.status().to_string();
  EXPECT_EQ(wait_exited(launcher, *record).exit_code, 0);
  const std::string env = "\n" + slurp(work_dir(43, 0) + "/env.txt");
  for (const char* line :
       {"CUDA_MPS_PIPE_DIRECTORY=/run/corral-mps", "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25",
        "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=20480M", "CORRAL_GPU_SHARE=0.25"}) {
    EXPECT_NE(env.find("\n" + std::string(line) + "\n"), std::string::npos) << line;
  }

  auto whole = launcher.start(spec(44, 0, "env > env.txt"));
  ASSERT_TRUE(whole.ok()) << whole.status().to_string();
  EXPECT_EQ(wait_exited(launcher, *whole).exit_code, 0);
  EXPECT_EQ(slurp(work_dir(44, 0) + "/env.txt").find("CUDA_MPS_PIPE_DIRECTORY"), std::string::npos);
}

TEST_F(LauncherTest, NeverStartsTheSameRankTwice) {
  auto launcher = make_launcher();
  ASSERT_TRUE(launcher->start(spec(1, 0, "sleep 30")).ok());
  auto again = launcher->start(spec(1, 0, "sleep 30"));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), core::StatusCode::kAlreadyExists);
  auto quick = launcher->start(spec(2, 0, "exit 0"));
  ASSERT_TRUE(quick.ok());
  wait_exited(*launcher, *quick);
  EXPECT_EQ(launcher->start(spec(2, 0, "exit 0")).status().code(),
            core::StatusCode::kAlreadyExists);
  for (const auto& r : launcher->recorded())
    ASSERT_TRUE(eventually([&] { return launcher->stop(r.key, 0).ok(); }));
}

TEST_F(LauncherTest, StopKillsTheWholeGroupIncludingGrandchildren) {
  auto launcher = make_launcher();
  auto record = launcher->start(spec(5, 0, "sleep 1000 & echo $! > child.pid; wait"));
  ASSERT_TRUE(record.ok());
  pid_t child = 0;
  ASSERT_TRUE(eventually([&] {
    child = static_cast<pid_t>(std::atoi(slurp(work_dir(5, 0) + "/child.pid").c_str()));
    return child > 0;
  }));
  ASSERT_TRUE(process_alive(child));
  EXPECT_EQ(launcher->observe(*record).state, core::WorkerStatus::State::kRunning);
  ASSERT_TRUE(eventually([&] { return launcher->stop(record->key, 5000).ok(); }));
  const core::WorkerStatus status = wait_exited(*launcher, *record);
  EXPECT_EQ(status.signal, SIGTERM);
  EXPECT_EQ(status.exit_code, 128 + SIGTERM);
  EXPECT_TRUE(eventually([&] { return !process_alive(child); })) << "grandchild survived";
}

TEST_F(LauncherTest, AWorkerThatIgnoresSigtermIsKilledAfterTheGrace) {
  auto launcher = make_launcher();
  // The trap records each SIGTERM and carries on (the group's `sleep` dies of it, so the
  // trap runs at once).
  auto record = launcher->start(spec(
      6, 0, "trap 'echo term >> term' TERM; echo ready > ready; while :; do sleep 0.05; done"));
  ASSERT_TRUE(record.ok());
  ASSERT_TRUE(eventually([&] { return !slurp(work_dir(6, 0) + "/ready").empty(); }));
  const auto t0 = std::chrono::steady_clock::now();
  // The grace is the supervisor's (a real process on the real clock): long enough that
  // the check below happens inside it.
  ASSERT_TRUE(eventually([&] { return launcher->stop(record->key, 1000).ok(); }));
  // Still running after the SIGTERM arrived: it ignored it (waits on the trap's file,
  // not a fixed sleep).
  ASSERT_TRUE(eventually([&] { return !slurp(work_dir(6, 0) + "/term").empty(); }));
  EXPECT_EQ(launcher->observe(*record).state, core::WorkerStatus::State::kRunning);
  const core::WorkerStatus status = wait_exited(*launcher, *record);
  const auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(status.signal, SIGKILL);
  EXPECT_GE(waited, std::chrono::milliseconds(1000));
}

TEST_F(LauncherTest, ACommandThatCannotRunExits127) {
  auto launcher = make_launcher();
  core::WorkerSpec s = spec(7, 0, "");
  s.command = {"/nonexistent/trainer"};
  auto record = launcher->start(s);
  ASSERT_TRUE(record.ok());
  EXPECT_EQ(wait_exited(*launcher, *record).exit_code, 127);
  EXPECT_NE(slurp(dir_.path() + "/state/logs/7/attempt-1/rank-0.log").find("/nonexistent/trainer"),
            std::string::npos);
}

TEST_F(LauncherTest, ReconcilerIsIdempotentAndStopsWorkersNoLongerWanted) {
  auto launcher = make_launcher();
  Reconciler reconciler(*launcher);
  reconciler.adopt();
  const std::string starts = dir_.path() + "/starts";
  std::vector<core::DesiredWorker> desired;
  for (std::int32_t rank = 0; rank < 3; ++rank) {
    desired.push_back({.spec = spec(9, rank, "echo $$ >> " + starts + "; sleep 1000")});
  }
  reconciler.apply(desired);
  reconciler.apply(desired);
  reconciler.reapply();
  ASSERT_TRUE(eventually([&] {
    const std::string s = slurp(starts);
    return std::count(s.begin(), s.end(), '\n') >= 3;
  }));
  // A start is synchronous (Launcher::start spawns and calls on_change before it
  // returns) and none of these workers exits, so a start here would show in changes_ at
  // once; no sleep is needed to give it time.
  const int changes_before = changes_;
  reconciler.apply(desired);
  EXPECT_EQ(changes_, changes_before) << "a rank was started twice";
  EXPECT_EQ(launcher->recorded().size(), 3u);
  const std::string s = slurp(starts);
  EXPECT_EQ(std::count(s.begin(), s.end(), '\n'), 3) << "a rank was started twice";
  // A worker can write its line before its supervisor has recorded the worker's pid
  // (reported as 0 until then).
  std::vector<core::WorkerStatus> statuses;
  ASSERT_TRUE(eventually([&] {
    statuses = reconciler.observe();
    return std::all_of(statuses.begin(), statuses.end(),
                       [](const core::WorkerStatus& st) { return st.pid > 0; });
  }));
  ASSERT_EQ(statuses.size(), 3u);
  std::set<std::int64_t> pids;
  for (const auto& st : statuses) {
    EXPECT_EQ(st.state, core::WorkerStatus::State::kRunning);
    pids.insert(st.pid);
  }
  EXPECT_EQ(pids.size(), 3u);

  // Rank 1 marked stop, rank 2 no longer listed: both stop; rank 0 keeps running.
  desired[1].run = false;
  desired.pop_back();
  reconciler.apply(desired);
  ASSERT_TRUE(eventually([&] {
    reconciler.reapply();
    auto st = reconciler.observe();
    return st.size() == 3 && st[1].state == core::WorkerStatus::State::kExited &&
           st[2].state == core::WorkerStatus::State::kExited;
  }));
  auto now = reconciler.observe();
  EXPECT_EQ(now[0].state, core::WorkerStatus::State::kRunning);
  // Once their exits were reported, the unlisted one is forgotten; the listed one stays.
  reconciler.mark_reported(now);
  reconciler.reapply();
  EXPECT_EQ(reconciler.observe().size(), 2u);
  EXPECT_FALSE(reconciler.worker_for_token("nope"));
  reconciler.stop_all(0);
  ASSERT_TRUE(eventually([&] {
    reconciler.reapply();
    for (const auto& st : reconciler.observe()) {
      if (st.state != core::WorkerStatus::State::kExited) return false;
    }
    return true;
  }));
}

// A worker whose supervisor cannot even be spawned is reported as exited 127 once, is
// never retried, and is forgotten like any other exited worker.
TEST_F(LauncherTest, AWorkerThatCannotBeStartedIsReportedNotRetried) {
  Launcher launcher(Launcher::Options{.state_dir = dir_.path() + "/state",
                                      .supervisor_exe = dir_.path() + "/no-such-supervisor",
                                      .clock = &clock_});
  std::vector<std::string> failures;
  Reconciler reconciler(launcher, [&](const core::WorkerKey& key, const core::Status& why) {
    EXPECT_FALSE(why.ok());
    failures.push_back(key.name());
  });
  reconciler.adopt();
  const std::vector<core::DesiredWorker> desired = {{.spec = spec(11, 0, "exit 0")}};
  reconciler.apply(desired);
  reconciler.apply(desired);
  reconciler.reapply();
  EXPECT_EQ(failures, std::vector<std::string>{"11-1-0"});
  auto statuses = reconciler.observe();
  ASSERT_EQ(statuses.size(), 1u);
  EXPECT_EQ(statuses[0].state, core::WorkerStatus::State::kExited);
  EXPECT_EQ(statuses[0].exit_code, kStartFailedExitCode);
  reconciler.stop_all(0);  // nothing to stop: must not try
  reconciler.mark_reported(statuses);
  reconciler.apply({});
  EXPECT_TRUE(reconciler.observe().empty());
}

TEST_F(LauncherTest, ARestartedAgentAdoptsLiveWorkersAndLearnsExitCodes) {
  const std::string gate = dir_.path() + "/gate";
  std::vector<core::DesiredWorker> desired = {
      {.spec = spec(11, 0, "sleep 1000")},
      {.spec = spec(11, 1, "while [ ! -e " + gate + " ]; do sleep 0.02; done; exit 5")},
  };
  std::vector<core::WorkerStatus> before;
  std::string token0;
  {
    auto launcher = make_launcher();
    Reconciler reconciler(*launcher);
    reconciler.adopt();
    reconciler.apply(desired);
    ASSERT_TRUE(eventually([&] {
      before = reconciler.observe();
      return before.size() == 2 && before[0].pid > 0 && before[1].pid > 0;
    }));
    token0 = launcher->recorded()[0].token;
  }  // the agent "dies": its objects go, the supervisors and workers stay
  ASSERT_TRUE(process_alive(static_cast<pid_t>(before[0].pid)));
  std::ofstream(gate) << "go";  // rank 1 exits 5 while no agent runs
  ASSERT_TRUE(
      eventually([&] { return std::filesystem::exists(dir_.path() + "/state/run/11-1-1.exit"); }));

  auto launcher = make_launcher();
  Reconciler reconciler(*launcher);
  reconciler.adopt();
  reconciler.apply(desired);  // the same desired state: nothing may start again
  auto after = reconciler.observe();
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[0].state, core::WorkerStatus::State::kRunning);
  EXPECT_EQ(after[0].pid, before[0].pid);
  EXPECT_EQ(after[0].started_at_ms, before[0].started_at_ms);
  EXPECT_EQ(after[1].state, core::WorkerStatus::State::kExited);
  EXPECT_EQ(after[1].exit_code, 5);
  EXPECT_EQ(reconciler.worker_for_token(token0), (core::WorkerKey{11, 1, 0}));
  // An adopted worker is watched: its exit is noticed without polling.
  const int changes_before = changes_;
  reconciler.apply({});
  ASSERT_TRUE(eventually(
      [&] { return reconciler.observe()[0].state == core::WorkerStatus::State::kExited; }));
  EXPECT_TRUE(eventually([&] { return changes_ > changes_before; }));
  EXPECT_FALSE(process_alive(static_cast<pid_t>(before[0].pid)));
}

// A restarted agent's heartbeat thread may reapply() before the first assignments answer
// arrives: an unknown desired list is not an empty one, so adopted workers keep running
// until corrald's answer says whether they are wanted.
TEST_F(LauncherTest, AdoptedWorkersWaitForTheFirstAnswerBeforeAnyStop) {
  std::int64_t pid = 0;
  {
    auto launcher = make_launcher();
    Reconciler reconciler(*launcher);
    reconciler.adopt();
    reconciler.apply({{.spec = spec(12, 0, "sleep 1000")}});
    ASSERT_TRUE(eventually([&] {
      pid = reconciler.observe()[0].pid;
      return pid > 0;
    }));
  }
  auto launcher = make_launcher();
  Reconciler reconciler(*launcher);
  reconciler.adopt();
  reconciler.reapply();
  EXPECT_FALSE(reconciler.stops_pending());
  // A stop would end `sleep` (SIGTERM) within milliseconds; none may come.
  EXPECT_FALSE(eventually([&] { return !process_alive(static_cast<pid_t>(pid)); }, 300));
  reconciler.apply({});  // the first answer: not wanted
  EXPECT_TRUE(eventually([&] { return !process_alive(static_cast<pid_t>(pid)); }));
}

// A closed reconciler (its cluster left) starts nothing and answers no token; sweep()
// kills what its launcher recorded, with no grace even for a worker that ignores
// SIGTERM and recorded a minute's grace, and deletes the records and the run dir.
TEST_F(LauncherTest, AClosedClustersWorkersAreSweptWithNoGrace) {
  auto launcher = make_launcher();
  Reconciler reconciler(*launcher);
  reconciler.adopt();
  core::WorkerSpec stubborn = spec(13, 0, "trap '' TERM; while :; do sleep 0.05; done");
  stubborn.grace_ms = 60000;
  reconciler.apply({{.spec = stubborn}, {.spec = spec(13, 1, "exit 4")}});
  std::vector<core::WorkerStatus> st;
  ASSERT_TRUE(eventually([&] {
    st = reconciler.observe();
    return st.size() == 2 && st[0].pid > 0 && st[1].state == core::WorkerStatus::State::kExited;
  }));
  const std::string token = launcher->recorded()[0].token;
  ASSERT_TRUE(reconciler.worker_for_token(token));

  reconciler.close();
  EXPECT_FALSE(reconciler.worker_for_token(token));
  reconciler.apply({{.spec = spec(14, 0, "sleep 1000")}});
  reconciler.reapply();
  EXPECT_EQ(launcher->recorded().size(), 2u) << "a closed reconciler started a worker";

  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(eventually([&] { return sweep(*launcher); }));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  EXPECT_FALSE(process_alive(static_cast<pid_t>(st[0].pid)));
  EXPECT_TRUE(launcher->recorded().empty());
  EXPECT_FALSE(std::filesystem::exists(launcher->run_dir()));
  EXPECT_TRUE(sweep(*launcher));  // nothing left: done at once
}

TEST(ClusterScope, PathsAndTheClusterLastJoined) {
  EXPECT_TRUE(valid_cluster_id("0123456789abcdef0123456789abcdef"));
  EXPECT_TRUE(valid_cluster_id("c1-eu"));
  for (const char* bad : {"", "..", "a/b", "a b", "x\n"})
    EXPECT_FALSE(valid_cluster_id(bad)) << bad;
  EXPECT_FALSE(valid_cluster_id(std::string(65, 'a')));
  EXPECT_EQ(cluster_dir("/s", "c1"), "/s/clusters/c1");

  TempDir dir;
  const std::string state = dir.path();
  EXPECT_FALSE(read_joined_cluster(state));
  ASSERT_TRUE(write_joined_cluster(state, "c1").ok());
  EXPECT_EQ(read_joined_cluster(state), "c1");
  std::ofstream(state + "/cluster-id") << "../x\n";
  EXPECT_FALSE(read_joined_cluster(state)) << "an id that is no path component is ignored";

  EXPECT_TRUE(other_clusters_dirs(state, "c1").empty());
  for (const char* d : {"/clusters/c1/run", "/clusters/c2/run", "/clusters/c3/logs", "/run"}) {
    std::filesystem::create_directories(state + d);
  }
  // c3 has logs but no run records left; the old layout's STATE_DIR/run counts.
  EXPECT_EQ(other_clusters_dirs(state, "c1"),
            (std::vector<std::string>{state, state + "/clusters/c2"}));
}

}  // namespace
}  // namespace corral::agent
