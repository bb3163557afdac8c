// A node's desired workers (docs/agent-protocol.md §2), built by one pure function from
// what the store holds; the long poll of GET /v1/agents/{node}/assignments encodes its
// result, and the lifecycle controller and the logs endpoint use the same rank layout.
//
// The values of the worker environment (core/worker_env.h) are decided here:
//   RANK, LOCAL_RANK, NODE_RANK  from the attempt's whole placement (rank_layout), so a
//                                fenced node's rows being released never renumbers the rest
//   WORLD_SIZE                   the number of ranks of that placement
//   LOCAL_WORLD_SIZE             its ranks on the worker's node (1 for perNode)
//   MASTER_ADDR                  the host of the agent URL of rank 0's node (127.0.0.1 when
//                                that node has no agent)
//   MASTER_PORT                  master_port(): unique among the live attempts whose rank 0
//                                runs on the same node
//   CUDA_VISIBLE_DEVICES         the rank's GPU indices
//   CUDA_MPS_*, CORRAL_GPU_SHARE a job of shares: its share and gpuMemoryGiB (the agent adds
//                                its MPS pipe directory)
//   CORRAL_CHECKPOINT_DIR        the spec's checkpoint.dir
//   CORRAL_RESTORE_FROM          the newest checkpoint of an earlier attempt
// and the spec's env with its secretEnv values over it, and the stop's grace.
//
// Thread safety: node_assignments, rank_layout and master_port are pure functions;
// read_node_assignment_input runs in the caller's transaction.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/agent_protocol.h"
#include "core/checkpoint.h"
#include "core/job_spec.h"
#include "core/result.h"
#include "server/base/key_ring.h"
#include "server/base/spec_cache.h"
#include "store/store.h"

namespace corral::server {

// One worker slot of an attempt: which rank runs where, on which GPUs.
struct RankSlot {
  std::int32_t rank = 0;
  std::int32_t local_rank = 0;
  std::int32_t node_rank = 0;
  core::NodeId node;
  std::vector<std::int32_t> gpus;

  friend bool operator==(const RankSlot&, const RankSlot&) = default;
};

// Ranks of one attempt from its allocation rows in insertion order (the placement's
// order), active or not: nodes in order of first appearance (so rank 0 runs on the first
// row's node), GPUs by index within a node; one rank per GPU (perGpu) or per node
// (perNode, holding all of that node's GPUs).
std::vector<RankSlot> rank_layout(const std::vector<store::AllocationRow>& attempt_allocs,
                                  core::ProcessMode mode);

// The rows of `attempt` among `every` row of a job, in insertion order.
std::vector<store::AllocationRow> attempt_placement(const std::vector<store::AllocationRow>& every,
                                                    std::int32_t attempt);

inline constexpr std::int32_t kMasterPortBase = 29500;

// MASTER_PORT of the attempt laid out as `slots`: kMasterPortBase + the lowest GPU index
// the attempt holds on rank 0's node (29500..29563, a node has at most 64 GPUs).
//
// Why it is safe (note for posterity: it was 29500 + (job x 7 + attempt) mod 10000, which
// gives jobs 1 and 2 in attempts 8 and 1 the same port on one master node):
// - Unique: two attempts whose rank 0 runs on node M while both hold GPUs of M hold
//   disjoint GPUs of M (the store refuses a second active allocation of a GPU), so their
//   lowest GPUs, hence their ports, differ. The port is exactly as exclusive as the GPU:
//   M's rows of an attempt are released early only when M is fenced, and M takes new
//   work only after its agent joined again, having stopped every worker it ran.
// - Stable: an attempt's rows never change while it lives (a resize is a new attempt),
//   and released rows still count, so every rank, on every node, computes the same port
//   from durable rows, across corrald restarts, with nothing to store or allocate.
// REQUIRES: !slots.empty().
std::int32_t master_port(const std::vector<RankSlot>& slots);

// One job holding GPUs on the node, with what its workers are built from.
struct AssignedJob {
  store::JobRow job;  // id, phase (launching/running: run, else stop), stop_grace_ms
  std::shared_ptr<const core::JobSpec> spec;
  std::vector<store::AllocationRow> allocations;  // every row of the job, every attempt
  std::map<std::string, std::string> secret_env;  // the values the spec masks
  std::vector<core::Checkpoint> checkpoints;      // oldest first
};

struct NodeAssignmentInput {
  core::NodeId node;
  std::vector<AssignedJob> jobs;
  // Agent URLs of the nodes that joined (at least those running some rank 0).
  std::map<core::NodeId, std::string> agent_urls;
  std::int64_t default_grace_ms = 30000;  // a stop's grace when the job's is 0
};

// The node's desired workers: for each job with an active allocation on `input.node`,
// in job id order, the ranks of its current attempt (the one its active rows belong to)
// that run there, in rank order.
std::vector<core::DesiredWorker> node_assignments(const NodeAssignmentInput& input);

// Reads what node_assignments() needs for `node` in the caller's transaction; specs come
// from `specs`, secrets are opened with `keys`. A job whose stored spec does not decode,
// or whose secrets do not open, is left out.
core::Result<NodeAssignmentInput> read_node_assignment_input(store::Tx& tx,
                                                             const core::NodeId& node,
                                                             SpecCache& specs, const KeyRing& keys,
                                                             std::int64_t default_grace_ms);

}  // namespace corral::server
