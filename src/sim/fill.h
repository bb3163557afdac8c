// The fill experiment of FGD (Weng et al., "Beware of Fragmentation", ATC'23) on the
// production scheduler: the Alibaba 2023 GPU-sharing trace's pods (openb_pod_list_*.csv)
// arrive one at a time on its GPU nodes (openb_node_list_gpu_node.csv), none ever leaves,
// and each is placed by decide() at once or dropped. After the list, pods drawn from it
// at random keep arriving until their GPU request reaches `inflate` times the fleet's
// GPUs. What is measured: the share of the fleet's GPU capacity left unallocated as the
// arrived request passes each percent of it (docs/evaluation.md, "Shares of a GPU").
//
// Differences from the paper's artifact, stated in docs/evaluation.md: pods that ask for
// no GPU are left out (Corral schedules GPU jobs; in the artifact they take CPUs on the
// GPU nodes), and a whole-GPU pod is placed by Corral's gang placement under every share
// rule (the artifact's baselines score nodes for every pod).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"
#include "sched/config.h"
#include "sched/snapshot.h"

namespace corral::sim {

struct FillPod {
  std::string name;
  std::int32_t gpus = 1;       // whole GPUs, or 1 for a share
  std::int32_t gpu_milli = 0;  // a share's thousandths; 0: whole GPUs
  // The pod's CPUs in thousandths: the trace's unit, which the experiment keeps for the
  // nodes' CPUs too (the scheduler counts CPUs in whatever unit both are given in), since
  // most pods ask for a fraction of a CPU and rounding up would strand GPUs that FGD's
  // runs do not.
  std::int32_t cpus = 0;
  std::int64_t memory_mib = 0;
  std::vector<std::string> gpu_types;  // acceptable models; empty: any
  std::int64_t milli() const { return gpu_milli > 0 ? gpu_milli : 1000 * std::int64_t{gpus}; }
};

struct FillTrace {
  std::vector<core::Node> nodes;
  std::vector<core::GpuType> gpu_types;
  std::vector<FillPod> pods;       // GPU pods in creation order
  std::int64_t cpu_only_pods = 0;  // left out
  std::int64_t capacity_milli() const;
};

// Reads the node list and a pod list (the CSVs as published). InvalidArgument names the
// file, line and field of a bad row.
core::Result<FillTrace> load_fill_trace(const std::string& nodes_csv, const std::string& pods_csv);

struct FillRun {
  std::string placement;  // the share rule's name
  std::uint64_t seed = 0;
  // unallocated[p]: the share (0-1) of GPU capacity unallocated when the arrived request
  // first reached p% of capacity, p = 0..; as far as the run went.
  std::vector<double> unallocated;
  // At the end, the share of GPU capacity left over on GPUs that shares are on (the rest
  // of what is unallocated is whole GPUs).
  double leftover_on_shared = 0;
  std::int64_t placed = 0, dropped = 0;
};

struct FillOptions {
  double inflate = 1.3;  // arrivals stop past this multiple of the fleet's GPUs
  bool shuffle = false;  // the list in a seeded random order (the artifact's), else as given
  std::uint64_t seed = 42;
  std::int32_t check_every = 0;  // run sched::check on every Nth decision (0: never)
};

// One run with `config` (its share_placement named `placement` in the result).
core::Result<FillRun> run_fill(const FillTrace& trace, const sched::SchedulerConfig& config,
                               const std::string& placement, const FillOptions& options);

}  // namespace corral::sim
