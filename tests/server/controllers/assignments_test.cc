// node_assignments(): the torchrun contract of every worker (ranks, world size, master
// address and port, devices, checkpoint and restore) from the store's rows, without a
// store; master_port() against the formula it replaced; SpecCache's decode count; the
// AssignmentBoard's answers to versions of another corrald replica.
#include "server/controllers/assignments.h"

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "core/job_spec_parse.h"
#include "core/worker_env.h"
#include "server/base/spec_cache.h"
#include "server/controllers/assignment_board.h"

namespace corral::server {
namespace {

using core::JobId;
using core::NodeId;

std::shared_ptr<const core::JobSpec> spec_of(const std::string& text) {
  auto parsed = core::parse_job_spec(text, core::SpecFormat::kJson);
  EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : core::to_string(parsed.errors.front()));
  return std::make_shared<const core::JobSpec>(std::move(*parsed.spec));
}

std::string spec_json(int gpus, const std::string& extra = "") {
  return R"({"name": "t", "resources": {"gpus": )" + std::to_string(gpus) +
         R"(}, "command": ["train", "--fast"])" + extra + "}";
}

// The rows of one attempt: `gpus` per node, in placement order.
std::vector<store::AllocationRow> rows(
    std::int64_t job, std::int32_t attempt,
    const std::vector<std::pair<std::string, std::vector<int>>>& placement, bool active = true) {
  std::vector<store::AllocationRow> out;
  for (const auto& [node, gpus] : placement) {
    for (const int g : gpus) {
      out.push_back({.job = JobId(job),
                     .attempt = attempt,
                     .node = NodeId(node),
                     .gpu_index = g,
                     .active = active});
    }
  }
  return out;
}

AssignedJob job(std::int64_t id, std::int32_t attempt, std::shared_ptr<const core::JobSpec> spec,
                std::vector<store::AllocationRow> allocations,
                core::JobPhase phase = core::JobPhase::kRunning) {
  return AssignedJob{
      .job = {.id = JobId(id), .phase = phase, .attempt = attempt},
      .spec = std::move(spec),
      .allocations = std::move(allocations),
  };
}

TEST(NodeAssignments, GangOverTwoNodesGetsTheTorchrunContract) {
  NodeAssignmentInput in{.node = NodeId("n2"),
                         .agent_urls = {{NodeId("n1"), "http://10.0.0.1:7070"},
                                        {NodeId("n2"), "http://10.0.0.2:7070"}}};
  // Rows in placement order: n1 first, so rank 0 runs there; GPU order within a node
  // is by index whatever the row order.
  in.jobs.push_back(job(42, 2, spec_of(spec_json(4, R"(, "env": {"MODE": "x"},
                                "secretEnv": {"TOKEN": "s"},
                                "checkpoint": {"dir": "/ck/42", "intervalSeconds": 60})")),
                        rows(42, 2, {{"n1", {5, 4}}, {"n2", {7, 1}}})));
  in.jobs.back().secret_env = {{"TOKEN", "real"}};
  in.jobs.back().checkpoints = {{.attempt = 1, .step = 10, .uri = "/ck/42/a1-10"},
                                {.attempt = 1, .step = 20, .uri = "/ck/42/a1-20"},
                                {.attempt = 2, .step = 5, .uri = "/ck/42/a2-5"}};
  const auto workers = node_assignments(in);
  ASSERT_EQ(workers.size(), 2u);
  for (std::size_t i = 0; i < workers.size(); ++i) {
    SCOPED_TRACE(i);
    const core::WorkerSpec& w = workers[i].spec;
    EXPECT_TRUE(workers[i].run);
    EXPECT_EQ(w.key.job, 42);
    EXPECT_EQ(w.key.attempt, 2);
    EXPECT_EQ(w.key.rank, 2 + static_cast<int>(i));  // n1 holds ranks 0 and 1
    EXPECT_EQ(w.local_rank, static_cast<int>(i));
    EXPECT_EQ(w.node_rank, 1);
    EXPECT_EQ(w.world_size, 4);
    EXPECT_EQ(w.master_addr, "10.0.0.1");
    EXPECT_EQ(w.master_port, kMasterPortBase + 4);  // rank 0's GPU: n1's lowest
    EXPECT_EQ(w.command, (std::vector<std::string>{"train", "--fast"}));
    EXPECT_EQ(w.env, (std::map<std::string, std::string>{{"MODE", "x"}, {"TOKEN", "real"}}));
    EXPECT_EQ(w.checkpoint_dir, "/ck/42");
    // The newest checkpoint of an earlier attempt, never the current attempt's own.
    EXPECT_EQ(w.restore_from, "/ck/42/a1-20");
    EXPECT_EQ(w.grace_ms, in.default_grace_ms);
  }
  EXPECT_EQ(workers[0].spec.gpus, std::vector<std::int32_t>{1});
  EXPECT_EQ(workers[0].spec.visible_devices, "1");
  EXPECT_EQ(workers[1].spec.visible_devices, "7");

  // The environment the agent sets from it: the same values under torchrun's names.
  const auto env = core::worker_env(workers[1].spec, "http://10.0.0.2:7070", "tok");
  EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES"), "7");
  EXPECT_EQ(env.at("RANK"), "3");
  EXPECT_EQ(env.at("LOCAL_RANK"), "1");
  EXPECT_EQ(env.at("NODE_RANK"), "1");
  EXPECT_EQ(env.at("WORLD_SIZE"), "4");
  EXPECT_EQ(env.at("MASTER_ADDR"), "10.0.0.1");
  EXPECT_EQ(env.at("MASTER_PORT"), std::to_string(kMasterPortBase + 4));
  EXPECT_EQ(env.at("CORRAL_JOB_ID"), "42");
  EXPECT_EQ(env.at("CORRAL_ATTEMPT"), "2");
  EXPECT_EQ(env.at("CORRAL_CHECKPOINT_DIR"), "/ck/42");
  EXPECT_EQ(env.at("CORRAL_RESTORE_FROM"), "/ck/42/a1-20");
  EXPECT_EQ(env.at("CORRAL_AGENT_URL"), "http://10.0.0.2:7070");
  EXPECT_EQ(env.at("CORRAL_WORKER_TOKEN"), "tok");
  for (const std::string_view name : core::kTorchrunEnv) {
    EXPECT_EQ(env.count(std::string(name)), 1u) << name;
  }
}

TEST(NodeAssignments, PerNodeRunsOneProcessHoldingTheNodesGpus) {
  NodeAssignmentInput in{.node = NodeId("n1")};
  in.jobs.push_back(job(7, 1, spec_of(spec_json(4, R"(, "processes": "perNode")")),
                        rows(7, 1, {{"n2", {2, 3}}, {"n1", {6, 5}}})));
  const auto workers = node_assignments(in);
  ASSERT_EQ(workers.size(), 1u);
  const core::WorkerSpec& w = workers[0].spec;
  EXPECT_EQ(w.key.rank, 1);
  EXPECT_EQ(w.node_rank, 1);
  EXPECT_EQ(w.local_rank, 0);
  EXPECT_EQ(w.world_size, 2);
  EXPECT_EQ(w.gpus, (std::vector<std::int32_t>{5, 6}));
  EXPECT_EQ(w.visible_devices, "5,6");
  EXPECT_EQ(w.master_addr, "127.0.0.1");  // rank 0's node has no agent URL here
  EXPECT_EQ(w.master_port, kMasterPortBase + 2);
  EXPECT_EQ(w.restore_from, "");
  EXPECT_EQ(w.checkpoint_dir, "");
}

// Issue 38, item 5: what torch.distributed and torchrun read, for an uneven perGpu gang
// and a perNode one. Before, LOCAL_WORLD_SIZE and GROUP_RANK were unset and torchrun,
// reading only flags and PET_*, made each node of a perNode gang a one-node world.
TEST(NodeAssignments, PerGpuWorkersGetTheirNodesLocalWorldSizeAndGroupRank) {
  NodeAssignmentInput in{.node = NodeId("n2")};
  // 3 ranks on n1, 2 on n2: LOCAL_WORLD_SIZE is the node's own count, not an average.
  in.jobs.push_back(
      job(5, 1, spec_of(spec_json(5)), rows(5, 1, {{"n1", {0, 1, 2}}, {"n2", {3, 6}}})));
  const auto workers = node_assignments(in);
  ASSERT_EQ(workers.size(), 2u);
  for (std::size_t i = 0; i < workers.size(); ++i) {
    SCOPED_TRACE(i);
    const auto env = core::worker_env(workers[i].spec, "http://127.0.0.1:1", "tok");
    EXPECT_EQ(env.at("RANK"), std::to_string(3 + i));
    EXPECT_EQ(env.at("LOCAL_RANK"), std::to_string(i));
    EXPECT_EQ(env.at("WORLD_SIZE"), "5");
    EXPECT_EQ(env.count("LOCAL_WORLD_SIZE") ? env.at("LOCAL_WORLD_SIZE") : "unset", "2");
    EXPECT_EQ(env.count("GROUP_RANK") ? env.at("GROUP_RANK") : "unset", "1");
    // A perGpu process is a rank, never a launcher: torchrun's settings would mislead one
    // started there into spawning more ranks.
    for (const auto& [name, value] : env) EXPECT_FALSE(name.starts_with("PET_")) << name;
  }
}

TEST(NodeAssignments, PerNodeWorkersTellTorchrunTheWholeWorld) {
  NodeAssignmentInput in{.node = NodeId("n2"),
                         .agent_urls = {{NodeId("n1"), "http://10.0.0.1:7070"}}};
  in.jobs.push_back(
      job(9, 3, spec_of(spec_json(12, R"(, "processes": "perNode")")),
          rows(9, 3, {{"n1", {4, 5, 6, 7}}, {"n2", {0, 1}}, {"n3", {2, 3, 4, 5, 6, 7}}})));
  const auto workers = node_assignments(in);
  ASSERT_EQ(workers.size(), 1u);
  auto env = core::worker_env(workers[0].spec, "http://10.0.0.2:7070", "tok");
  const auto get = [&](const std::string& name) {
    return env.count(name) ? env.at(name) : "unset";
  };
  // torchrun's arguments, each as torch/distributed/run.py reads it when no flag is given.
  EXPECT_EQ(get("PET_NNODES"), "3");
  EXPECT_EQ(get("PET_NODE_RANK"), "1");
  EXPECT_EQ(get("PET_NPROC_PER_NODE"), "2");  // this node's GPUs of the job
  EXPECT_EQ(get("PET_MASTER_ADDR"), "10.0.0.1");
  EXPECT_EQ(get("PET_MASTER_PORT"), std::to_string(kMasterPortBase + 4));
  // The process itself (a plain script run perNode reads these): one rank per node.
  EXPECT_EQ(get("RANK"), "1");
  EXPECT_EQ(get("WORLD_SIZE"), "3");
  EXPECT_EQ(get("LOCAL_RANK"), "0");
  EXPECT_EQ(get("LOCAL_WORLD_SIZE"), "1");
  EXPECT_EQ(get("GROUP_RANK"), "1");
  EXPECT_EQ(get("CUDA_VISIBLE_DEVICES"), "0,1");
  for (const std::string_view name : core::kTorchrunLauncherEnv) {
    EXPECT_EQ(env.count(std::string(name)), 1u) << name;
  }
}

TEST(NodeAssignments, FencedNodeKeepsTheOtherRanksAndStopsCarryTheirGrace) {
  NodeAssignmentInput in{.node = NodeId("n2"), .default_grace_ms = 9000};
  // n1 was fenced: its rows are released, but the ranks on n2 keep their numbers and
  // the attempt keeps its port.
  auto allocations = rows(3, 1, {{"n1", {0, 1}}}, /*active=*/false);
  for (auto& r : rows(3, 1, {{"n2", {0, 1}}})) allocations.push_back(r);
  in.jobs.push_back(job(3, 1, spec_of(spec_json(4)), allocations, core::JobPhase::kPreempting));
  in.jobs.back().job.stop_grace_ms = 1234;
  // A job whose rows here belong to an older, released attempt only gets nothing.
  in.jobs.push_back(job(4, 1, spec_of(spec_json(1)), rows(4, 1, {{"n2", {2}}}, false)));
  const auto workers = node_assignments(in);
  ASSERT_EQ(workers.size(), 2u);
  EXPECT_EQ(workers[0].spec.key.rank, 2);
  EXPECT_EQ(workers[1].spec.key.rank, 3);
  for (const auto& w : workers) {
    EXPECT_FALSE(w.run);
    EXPECT_EQ(w.spec.grace_ms, 1234);
    EXPECT_EQ(w.spec.world_size, 4);
    EXPECT_EQ(w.spec.master_port, kMasterPortBase + 0);
  }
  in.jobs.front().job.stop_grace_ms = 0;
  EXPECT_EQ(node_assignments(in).front().spec.grace_ms, 9000);
}

// The formula master_port() replaced: one port per (job, attempt), blind to the node.
std::int32_t old_master_port(std::int64_t job, std::int32_t attempt) {
  return static_cast<std::int32_t>(29500 + (job * 7 + attempt) % 10000);
}

TEST(MasterPort, TwoJobsSharingAMasterNodeNeverShareAPort) {
  // Jobs 1 and 2, in attempts 8 and 1, both with rank 0 on node m: the old formula gave
  // both 29515, and the second TCPStore could not bind.
  ASSERT_EQ(old_master_port(1, 8), old_master_port(2, 1));
  NodeAssignmentInput in{.node = NodeId("m")};
  in.jobs.push_back(job(1, 8, spec_of(spec_json(2)), rows(1, 8, {{"m", {0, 1}}})));
  in.jobs.push_back(job(2, 1, spec_of(spec_json(4)), rows(2, 1, {{"m", {4, 5}}, {"x", {0, 1}}})));
  const auto workers = node_assignments(in);
  std::set<std::int32_t> ports;
  for (const auto& w : workers) ports.insert(w.spec.master_port);
  EXPECT_EQ(ports, (std::set<std::int32_t>{kMasterPortBase + 0, kMasterPortBase + 4}));
}

TEST(MasterPort, EveryCollisionOfTheOldFormulaGetsDistinctPorts) {
  // Every pair of (job, attempt) below 20 that the old formula gave one port, sharing
  // one 8-GPU master node in every split of its GPUs, in both process modes.
  int collisions = 0;
  for (std::int64_t ja = 1; ja < 20; ++ja) {
    for (std::int32_t aa = 1; aa < 20; ++aa) {
      for (std::int64_t jb = ja + 1; jb < 20; ++jb) {
        for (std::int32_t ab = 1; ab < 20; ++ab) {
          if (old_master_port(ja, aa) != old_master_port(jb, ab)) continue;
          ++collisions;
          for (int cut = 1; cut < 8; ++cut) {
            std::vector<int> a, b;
            for (int g = 0; g < 8; ++g) (g < cut ? b : a).push_back(g);
            const auto pa =
                master_port(rank_layout(rows(ja, aa, {{"m", a}}), core::ProcessMode::kPerGpu));
            const auto pb = master_port(
                rank_layout(rows(jb, ab, {{"m", b}, {"y", {0}}}), core::ProcessMode::kPerNode));
            ASSERT_NE(pa, pb) << ja << "/" << aa << " and " << jb << "/" << ab << " cut " << cut;
          }
        }
      }
    }
  }
  EXPECT_GT(collisions, 0);
}

TEST(SpecCache, DecodesEachStoredSpecOnceAndAgainWhenItsTextChanges) {
  std::atomic<std::int64_t> counter{0};
  SpecCache cache(SpecCache::kDefaultCapacity, &counter);
  const std::string text = core::job_spec_to_json(*spec_of(spec_json(2)));
  for (int poll = 0; poll < 50; ++poll) {
    auto spec = cache.get(JobId(1), text);
    ASSERT_TRUE(spec.ok()) << spec.status().to_string();
    EXPECT_EQ((*spec)->resources.gpus, 2);
  }
  EXPECT_EQ(cache.decodes(), 1);
  EXPECT_EQ(counter.load(), 1);
  // Another text under the same id (a reused id, another writer): decoded, not stale.
  const std::string other = core::job_spec_to_json(*spec_of(spec_json(3)));
  auto changed = cache.get(JobId(1), other);
  ASSERT_TRUE(changed.ok());
  EXPECT_EQ((*changed)->resources.gpus, 3);
  EXPECT_EQ(cache.decodes(), 2);
  cache.forget(JobId(1));
  EXPECT_EQ(cache.size(), 0u);
  ASSERT_TRUE(cache.get(JobId(1), other).ok());
  EXPECT_EQ(cache.decodes(), 3);
  // A stored spec that does not parse is DataLoss, and nothing is kept.
  auto bad = cache.get(JobId(9), R"({"name": 1})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), core::StatusCode::kDataLoss);
  EXPECT_EQ(cache.size(), 1u);
}

TEST(SpecCache, KeepsAtMostItsCapacityDroppingTheLowestIds) {
  SpecCache cache(2);
  const std::string text = core::job_spec_to_json(*spec_of(spec_json(1)));
  for (std::int64_t id = 1; id <= 5; ++id) ASSERT_TRUE(cache.get(JobId(id), text).ok());
  EXPECT_EQ(cache.size(), 2u);
  ASSERT_TRUE(cache.get(JobId(5), text).ok());
  ASSERT_TRUE(cache.get(JobId(4), text).ok());
  EXPECT_EQ(cache.decodes(), 5);
}

// Two replicas on one store number their versions apart (each from its own start's clock).
// An agent that moved from the other one may send a `since` of the other's: the long poll
// must answer at once, whether that version is older or newer than this board's.
TEST(AssignmentBoard, AnswersAtOnceForAVersionItDidNotIssue) {
  AssignmentBoard board(5'000'000);
  board.bump({"n1"});
  const std::int64_t current = board.version("n1");
  for (const std::int64_t foreign : {std::int64_t{-1}, std::int64_t{0}, std::int64_t{4'000'123},
                                     current - 1, std::int64_t{9'000'000}}) {
    SCOPED_TRACE(foreign);
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(board.wait("n1", foreign, std::chrono::seconds(20)), current);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  }
}

// An appliedVersion above the node's current one cannot be this board's: taken as ours,
// it would confirm stops (marked at lower versions) that the agent never applied.
TEST(AssignmentBoard, IgnoresAnAppliedVersionAboveItsOwn) {
  AssignmentBoard board(5'000'000);
  board.mark_stop(7, "n1");
  const std::int64_t stop = *board.stop_version(7, "n1");
  board.set_applied("n1", 9'000'000);  // a replica started later numbers from higher up
  EXPECT_EQ(board.applied("n1"), 0);
  EXPECT_LT(board.applied("n1"), stop);
  board.set_applied("n1", stop);  // this board's own: believed
  EXPECT_EQ(board.applied("n1"), stop);
  board.set_applied("n1", stop - 1);  // never backwards
  EXPECT_EQ(board.applied("n1"), stop);
}

}  // namespace
}  // namespace corral::server
