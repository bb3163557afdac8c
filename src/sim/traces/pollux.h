// The Pollux (OSDI'21) artifact's workloads and run-time model, as a workload plug-in.
//
// A workload CSV (`name,time,application,num_replicas,batch_size`) names, per job, one of
// six applications, a GPU count and a global batch size; it has no durations. The
// artifact derives each job's run time from per-application profiles (the `traces/<app>`
// folder next to the workload folders): placements.csv and scalability.csv give the step
// and synchronization time by placement and per-GPU batch, and validation-<batch>.csv the
// per-epoch progress and gradient statistics. A rigid job (the Tiresias baseline's view:
// fixed GPUs and batch size) trains for the application's fixed number of epochs.
//
// Its time at placement P is W * t(P): t(P) the time of one optimizer step there (with
// gradient accumulation when the per-GPU batch exceeds the largest profiled one), and W
// the statistical work, sum over epochs of progress / gain, which does not depend on the
// placement. So a job's run time at any placement is its time at the tightest placement
// (4 GPUs per node, the Pollux testbed) times t(P) / t(tightest), which is how the engine
// charges a wider placement (TraceJob::profile).
//
// Each job (but ncf, which the artifact pins to 1 GPU) also gets an elastic profile
// (TraceJob::elastic_profile) for a policy that submits jobs elastic: at any placement
// each epoch runs at the batch split that takes least time there, sum over epochs of
// progress x min_B t(P, B) / gain(B), among the splits the artifact's
// GoodputFunction.optimize() weighs plus the job's own (an oracle: the true profiles, not
// a fitted model). Its GPU range is 1 to min(64, max batch / min per-GPU batch), the
// artifact's replica limits.
//
// Differences from the artifact (docs/evaluation.md): a placement the placement profile
// lacks (a gang over more than 4 nodes, or a per-node split it did not measure) is
// interpolated linearly in batch, then GPUs, then nodes, instead of scipy's Delaunay
// LinearNDInterpolator; per-epoch rounding to whole seconds is not reproduced.
//
// The Sia artifact measured the same applications on several GPU types
// (load_sia_workload): there a job's run time also depends on the type it is placed on.
//
// Thread safety: the loaded profiles are immutable and may be shared.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/job_spec.h"
#include "core/result.h"
#include "sim/traces/workload.h"

namespace corral::sim {

// One job's run time by placement: seconds of the whole job on GPUs of `gpu_type`, at
// `gpus_per_node` (the GPUs it holds on each node it uses, in any order).
class RuntimeProfile {
 public:
  virtual ~RuntimeProfile() = default;
  // REQUIRES: gpu_types() is empty (the profile ignores the type) or holds `gpu_type`.
  virtual double seconds(const core::GpuTypeId& gpu_type,
                         std::span<const std::int32_t> gpus_per_node) const = 0;
  // The GPU types it has figures for; empty: one set of figures for every type.
  virtual std::vector<core::GpuTypeId> gpu_types() const { return {}; }
};

// `gpus` packed on whole nodes of `node_gpus` GPUs: the GPUs per node, the last node
// holding the rest (the tightest placement).
std::vector<std::int32_t> whole_nodes(std::int32_t gpus, std::int32_t node_gpus);

// A profile's scaling curve, as decide() is told it (core::ElasticRange::scaling), on
// `gpu_type`: throughput (1 / run time) at each power of two from `min_gpus` up to
// `max_gpus` and at `max_gpus`, packed on whole nodes of `node_gpus` GPUs as decide()
// would try to place it.
std::vector<core::ScalingPoint> scaling_curve(const RuntimeProfile& profile,
                                              const core::GpuTypeId& gpu_type,
                                              std::int32_t min_gpus, std::int32_t max_gpus,
                                              std::int32_t node_gpus);

// Loads a Pollux workload CSV; `profiles_dir` holds one folder per application (empty:
// `traces/` next to the workload's folder). Every job belongs to tenant `default`.
// InvalidArgument names the file, line and column of bad input.
core::Result<Workload> load_pollux_workload(const std::string& path,
                                            const std::string& profiles_dir = "");

// Loads a Sia (SOSP'23) workload CSV, the same format, with each application's profiles
// measured on several GPU types (placements-<cluster>.csv, scalability-<cluster>.csv in
// its folder; `profiles_dir` empty: the `traces/` folder beside the workloads' folder).
// A job's profiles know the types in sia_gpu_types(); its duration is its time at its
// tightest placement on the fastest of them.
core::Result<Workload> load_sia_workload(const std::string& path,
                                         const std::string& profiles_dir = "");

// The fleet GPU types the Sia profiles were measured on, the artifact's cluster name for
// each, and its GPUs per node there.
struct SiaGpuType {
  const char* gpu_type;
  const char* cluster;
  std::int32_t node_gpus;
};
std::span<const SiaGpuType> sia_gpu_types();

// For tests: the seconds of one step and the statistical work W of a rigid job of
// `application` with `gpus` GPUs and global batch `batch_size`, at `gpus_per_node`.
struct PolluxJobModel {
  double work_steps = 0;    // W
  double step_seconds = 0;  // t(placement), accumulation included
  std::int32_t atomic_bsz = 0;
  std::int32_t accum_steps = 0;
};
core::Result<PolluxJobModel> pollux_job_model(const std::string& profiles_dir,
                                              const std::string& application, std::int32_t gpus,
                                              std::int32_t batch_size,
                                              std::span<const std::int32_t> gpus_per_node);

}  // namespace corral::sim
