#include "core/worker_env.h"

namespace corral::core {

std::map<std::string, std::string> worker_env(const WorkerSpec& spec, std::string_view agent_url,
                                              std::string_view worker_token) {
  return {
      {"CUDA_VISIBLE_DEVICES", spec.visible_devices},
      {"WORLD_SIZE", std::to_string(spec.world_size)},
      {"RANK", std::to_string(spec.key.rank)},
      {"LOCAL_RANK", std::to_string(spec.local_rank)},
      {"NODE_RANK", std::to_string(spec.node_rank)},
      {"MASTER_ADDR", spec.master_addr},
      {"MASTER_PORT", std::to_string(spec.master_port)},
      {"CORRAL_JOB_ID", std::to_string(spec.key.job)},
      {"CORRAL_ATTEMPT", std::to_string(spec.key.attempt)},
      {"CORRAL_CHECKPOINT_DIR", spec.checkpoint_dir},
      {"CORRAL_RESTORE_FROM", spec.restore_from},
      {"CORRAL_AGENT_URL", std::string(agent_url)},
      {"CORRAL_WORKER_TOKEN", std::string(worker_token)},
  };
}

}  // namespace corral::core
