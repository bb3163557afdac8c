// The environment of a worker process (docs/agent-protocol.md §2): every variable Corral
// sets, torchrun's contract and its own, named and filled in here only. corrald computes
// the values (server/controllers/assignments.h: ranks, world size, master address and port,
// devices, restore point) into a WorkerSpec; the agent's launcher sets worker_env() over its own
// environment and the spec's env, so these always win; the job spec validator refuses a
// spec that sets one of these names, or ranks would disagree about the world (and, for
// NVIDIA MPS's, tenants sharing a GPU about their shares).
//
// Thread safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "core/agent_protocol.h"

namespace corral::core {

// torchrun's variables, set for every worker: what torch.distributed reads (env://) and
// torchrun sets for the processes it starts.
inline constexpr std::string_view kTorchrunEnv[] = {
    "CUDA_VISIBLE_DEVICES", "WORLD_SIZE",       "RANK",
    "LOCAL_RANK",           "LOCAL_WORLD_SIZE", "NODE_RANK",
    "GROUP_RANK",           "MASTER_ADDR",      "MASTER_PORT"};

// torchrun's own settings (torch/distributed/run.py reads --ARG or else PET_ARG), set for
// perNode workers only: there the process is torchrun, one per node.
inline constexpr std::string_view kTorchrunLauncherEnv[] = {
    "PET_NNODES", "PET_NODE_RANK", "PET_NPROC_PER_NODE", "PET_MASTER_ADDR", "PET_MASTER_PORT"};

// Corral's own variables all start with this; a spec may set none that does.
inline constexpr std::string_view kCorralEnvPrefix = "CORRAL_";

// NVIDIA MPS's variables all start with this. Corral sets its client limits for a worker
// with a share of a GPU, and a spec may set none: a tenant that set its own thread
// percentage, memory limit or pipe directory would take the other tenants' share of the
// GPU, or leave MPS altogether.
inline constexpr std::string_view kMpsEnvPrefix = "CUDA_MPS_";

// What Corral sets for the worker `spec` describes:
//   CUDA_VISIBLE_DEVICES  spec.visible_devices       RANK, LOCAL_RANK, NODE_RANK, WORLD_SIZE
//   LOCAL_WORLD_SIZE      ranks on this node          GROUP_RANK = NODE_RANK
//   MASTER_ADDR, MASTER_PORT                          CORRAL_JOB_ID, CORRAL_ATTEMPT
//   perNode only: PET_NNODES (nodes), PET_NODE_RANK, PET_NPROC_PER_NODE (the node's GPUs of
//   the job), PET_MASTER_ADDR, PET_MASTER_PORT: torchrun forms one world of them all
//   CORRAL_CHECKPOINT_DIR, CORRAL_RESTORE_FROM (empty when there is none)
//   CORRAL_AGENT_URL, CORRAL_WORKER_TOKEN     where the worker reports checkpoints (§4)
//   a task of a job array only: CORRAL_ARRAY_JOB_ID, CORRAL_ARRAY_INDEX, CORRAL_ARRAY_COUNT
//   a trial of a sweep only: CORRAL_SWEEP_PARAMS (its parameters as one JSON object) and
//   CORRAL_PARAM_<NAME> for each (upper case; a string without its quotes)
//   a share of a GPU only (spec.gpu_share_milli > 0), NVIDIA MPS's client settings:
//     CUDA_MPS_ACTIVE_THREAD_PERCENTAGE  the share as a whole percentage of the GPU's
//                                        threads, rounded up ("25" for 250 thousandths)
//     CUDA_MPS_PINNED_DEVICE_MEM_LIMIT   spec.gpu_memory_mib on each of its GPUs, by the
//                                        index the worker sees ("0=20480M,1=20480M");
//                                        only when gpu_memory_mib > 0
//     CUDA_MPS_PIPE_DIRECTORY            `mps_pipe_dir`, where the node's MPS control
//                                        daemon listens; unset when empty (MPS's default,
//                                        /tmp/nvidia-mps)
//     CORRAL_GPU_SHARE                   the share as a fraction ("0.25"), for a program
//                                        that sizes itself
std::map<std::string, std::string> worker_env(const WorkerSpec& spec, std::string_view agent_url,
                                              std::string_view worker_token,
                                              std::string_view mps_pipe_dir = {});

}  // namespace corral::core
