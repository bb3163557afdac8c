// The environment of a worker process (docs/agent-protocol.md §2): every variable Corral
// sets, torchrun's contract and its own, named and filled in here only. corrald computes
// the values (server/assignments.h: ranks, world size, master address and port, devices,
// restore point) into a WorkerSpec; the agent's launcher sets worker_env() over its own
// environment and the spec's env, so these always win; the job spec validator refuses a
// spec that sets one of these names, or ranks would disagree about the world.
//
// Thread safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "core/agent_protocol.h"

namespace corral::core {

// torchrun's variables, set for every worker.
inline constexpr std::string_view kTorchrunEnv[] = {
    "CUDA_VISIBLE_DEVICES", "WORLD_SIZE", "RANK", "LOCAL_RANK", "NODE_RANK",
    "MASTER_ADDR",          "MASTER_PORT"};

// Corral's own variables all start with this; a spec may set none that does.
inline constexpr std::string_view kCorralEnvPrefix = "CORRAL_";

// What Corral sets for the worker `spec` describes:
//   CUDA_VISIBLE_DEVICES  spec.visible_devices       RANK, LOCAL_RANK, NODE_RANK, WORLD_SIZE
//   MASTER_ADDR, MASTER_PORT                          CORRAL_JOB_ID, CORRAL_ATTEMPT
//   CORRAL_CHECKPOINT_DIR, CORRAL_RESTORE_FROM (empty when there is none)
//   CORRAL_AGENT_URL, CORRAL_WORKER_TOKEN     where the worker reports checkpoints (§4)
std::map<std::string, std::string> worker_env(const WorkerSpec& spec, std::string_view agent_url,
                                              std::string_view worker_token);

}  // namespace corral::core
