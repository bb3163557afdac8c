#include "core/worker_env.h"

#include <cctype>
#include <cstddef>

#include <fmt/format.h>

#include "core/sweep.h"
#include "core/units.h"

namespace corral::core {

namespace {

// NVIDIA MPS's client settings for a worker with a share of each of its GPUs, as NVIDIA's
// MPS documentation describes them (docs.nvidia.com/deploy/mps: "Appendix: Environment
// Variables" and "Volta MPS Execution Resource Provisioning"). Each can only narrow what
// the node's MPS control daemon allows, never widen it.
void add_share_env(const WorkerSpec& spec, std::string_view mps_pipe_dir,
                   std::map<std::string, std::string>& env) {
  // A whole percentage, rounded up. MPS's documented values are whole percentages (its
  // control commands and examples: 30, 50, 100), and MPS itself rounds the limit down
  // to a thread count the hardware can enforce; rounding down here as well would take
  // from a share twice, and would give a share under 1% (5 thousandths) 0, a value MPS
  // does not document. Rounded up, a share gets less than one point more than it holds.
  env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] = std::to_string((spec.gpu_share_milli + 9) / 10);
  if (spec.gpu_memory_mib > 0) {
    // DEVICE=LIMIT for each GPU, comma-separated, DEVICE "with the same semantics as
    // CUDA_VISIBLE_DEVICES" (NVIDIA): the ordinal the process sees, 0..n-1 for the
    // worker's n GPUs, not the node's index. LIMIT is MiB with MPS's M suffix, as its
    // set_device_pinned_mem_limit command and NVIDIA's device plugin write it.
    std::string limits;
    for (std::size_t i = 0; i < spec.gpus.size(); ++i) {
      if (i > 0) limits += ',';
      limits += fmt::format("{}={}M", i, spec.gpu_memory_mib);
    }
    env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"] = std::move(limits);
  }
  // The control daemon's directory: a client that looks elsewhere finds no daemon and runs
  // outside MPS, unlimited.
  if (!mps_pipe_dir.empty()) env["CUDA_MPS_PIPE_DIRECTORY"] = std::string(mps_pipe_dir);
  env["CORRAL_GPU_SHARE"] = format_gpu_milli(spec.gpu_share_milli);  // 250: "0.25"
}

}  // namespace

std::map<std::string, std::string> worker_env(const WorkerSpec& spec, std::string_view agent_url,
                                              std::string_view worker_token,
                                              std::string_view mps_pipe_dir) {
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
  if (spec.gpu_share_milli > 0) add_share_env(spec, mps_pipe_dir, env);
  return env;
}

}  // namespace corral::core
