// Fragmentation of a node's free GPU capacity, as FGD measures it (Weng et al., "Beware
// of Fragmentation", ATC'23): the free capacity that the jobs the cluster runs cannot
// use there. Where a share of a GPU lands decides how much whole-GPU room stays usable;
// place_share.cc puts it where the node's fragmentation grows least.
//
// The workload is what the snapshot holds (running and queued jobs, each once), grouped
// into classes by what a job needs of one node. For a class m and a node n:
//   - m cannot run on n (type not acceptable, too few CPUs, too few GPUs with room for
//     its per-GPU need): all of n's free GPU capacity is fragment for m;
//   - otherwise the free capacity of the GPUs too full for m's per-GPU need is.
// The node's fragmentation is the sum over classes weighted by their share of the jobs.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sched/snapshot.h"

namespace corral::sched::detail {

struct WorkloadClass {
  std::vector<TypeIx> types;          // acceptable types, sorted; empty: any
  std::int32_t cpus = 0;              // on one node
  std::int32_t per_gpu_milli = 1000;  // a share's thousandths, or 1000 for whole GPUs
  std::int32_t gpus = 1;              // GPUs it needs on one node
  double weight = 0;                  // its share of the jobs, the classes kept summing to 1
  friend auto operator<=>(const WorkloadClass&, const WorkloadClass&) = default;
};

// The snapshot's jobs as classes: the most common first, as many as cover 95% of the jobs
// (the rest is a long tail that costs time and moves no choice), at most 64.
std::vector<WorkloadClass> workload_classes(const ClusterSnapshot& s);

// A node's fragmentation: `free_milli` has each of its GPUs' free capacity in thousandths
// (0 for a GPU that is held whole or unusable), `free_cpus` its free CPUs (negative: it
// does not count CPUs).
double fragmentation(std::span<const WorkloadClass> classes, TypeIx type, std::int64_t free_cpus,
                     std::span<const std::int32_t> free_milli);

}  // namespace corral::sched::detail
