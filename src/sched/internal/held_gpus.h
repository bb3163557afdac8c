// What running jobs hold, as build_snapshot() and rebuild_snapshot() check and track it:
// whole GPUs, one job each, in a mask per node; and shares of GPUs (SharedGpus), side by
// side within the GPU and its memory, a shared GPU also marked in the mask while any share
// is on it.
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "sched/snapshot.h"

namespace corral::sched::detail {

// Marks `r`'s GPUs in `held` (and in `shared` for a job of shares) and derives them as
// (node, mask) in `out`: one entry per node in node order for whole GPUs, one per GPU for
// shares (Plan applies a share to one GPU at a time). InvalidArgument naming
// `running[ID]` for an unknown GPU, a GPU held twice, a job of shares holding one GPU twice
// or a number of GPUs other than its shares, or shares past their GPU or its memory.
core::Status hold_gpus(const ClusterSnapshot& s, const RunningJob& r,
                       std::vector<std::uint64_t>& held, SharedGpus& shared,
                       std::vector<NodeGpus>& out);

// The reverse of hold_gpus() for a job that stopped: a shared GPU stays held while
// another share is on it.
void release_gpus(const JobRequest& r, const std::vector<NodeGpus>& gpus,
                  std::vector<std::uint64_t>& held, SharedGpus& shared);

}  // namespace corral::sched::detail
