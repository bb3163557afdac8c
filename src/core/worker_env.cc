#include "core/worker_env.h"

#include <cctype>

#include "core/sweep.h"

namespace corral::core {

std::map<std::string, std::string> worker_env(const WorkerSpec& spec, std::string_view agent_url,
                                              std::string_view worker_token) {
  std::map<std::string, std::string> env = {
      {"CUDA_VISIBLE_DEVICES", spec.visible_devices},
      {"WORLD_SIZE", std::to_string(spec.world_size)},
      {"RANK", std::to_string(spec.key.rank)},
      {"LOCAL_RANK", std::to_string(spec.local_rank)},
      {"LOCAL_WORLD_SIZE", std::to_string(spec.local_world_size)},
      {"NODE_RANK", std::to_string(spec.node_rank)},
      {"GROUP_RANK", std::to_string(spec.node_rank)},
      {"MASTER_ADDR", spec.master_addr},
      {"MASTER_PORT", std::to_string(spec.master_port)},
      {"CORRAL_JOB_ID", std::to_string(spec.key.job)},
      {"CORRAL_ATTEMPT", std::to_string(spec.key.attempt)},
      {"CORRAL_CHECKPOINT_DIR", spec.checkpoint_dir},
      {"CORRAL_RESTORE_FROM", spec.restore_from},
      {"CORRAL_AGENT_URL", std::string(agent_url)},
      {"CORRAL_WORKER_TOKEN", std::string(worker_token)},
  };
  if (spec.array_job > 0) {
    // Slurm's SLURM_ARRAY_JOB_ID, SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT.
    env["CORRAL_ARRAY_JOB_ID"] = std::to_string(spec.array_job);
    env["CORRAL_ARRAY_INDEX"] = std::to_string(spec.array_index);
    env["CORRAL_ARRAY_COUNT"] = std::to_string(spec.array_count);
  }
  if (!spec.sweep_params.empty()) {
    // The whole set as JSON for a program that reads it at once, and each by name.
    env["CORRAL_SWEEP_PARAMS"] = parameters_json(spec.sweep_params);
    for (const auto& [name, value] : spec.sweep_params) {
      std::string upper = name;
      for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      env["CORRAL_PARAM_" + upper] = parameter_env_text(value);
    }
  }
  if (spec.per_node) {
    // torchrun ignores MASTER_ADDR, RANK and the rest (it sets them for its children);
    // it reads its own arguments from PET_<ARG> when no flag gives them. Without these a
    // perNode gang of N nodes would be N one-node worlds, each its own rank 0. Its
    // default rendezvous, "static", is the one these describe.
    env["PET_NNODES"] = std::to_string(spec.world_size);
    env["PET_NODE_RANK"] = std::to_string(spec.node_rank);
    env["PET_NPROC_PER_NODE"] = std::to_string(spec.gpus.size());
    env["PET_MASTER_ADDR"] = spec.master_addr;
    env["PET_MASTER_PORT"] = std::to_string(spec.master_port);
  }
  return env;
}

}  // namespace corral::core
