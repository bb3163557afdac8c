// RunningIndex: running jobs as the cycle sees them: their GPUs as plan takes, and
// whether this cycle already preempted or resized them (a job is touched at most once).
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "sched/internal/plan.h"

namespace corral::sched::detail {

struct RunningIndex {
  explicit RunningIndex(const ClusterSnapshot& s);

  std::vector<std::vector<Plan::Take>> takes;  // per running job, by node
  std::vector<TenantIx> tenant;                // per running job
  std::vector<TypeIx> type;                    // per running job (-1 if it holds no GPU)
  // Per running job, the region of its first GPU's node (-1 if it holds none): a gang is
  // placed inside one cluster, hence one region.
  std::vector<RegionIx> region;
  std::vector<bool> touched;  // preempted or resized this cycle
  // Whether the job is borrowing now: per tenant and GPU type, running jobs fill the
  // guarantee oldest first; what lies beyond it is borrowed. Recomputed every cycle, so
  // a job becomes guaranteed when older jobs of its tenant finish (a flag set at
  // placement would go stale and let others reclaim what the tenant is owed).
  std::vector<bool> borrowed;

  // Per GPU type, the running jobs that could give GPUs to some preemptor, by index in
  // ascending order: a preemption search visits only the lists its preemptor can draw
  // from (preempt.cc) instead of every running job. Each list is a superset; candidate()
  // still decides.
  struct ByType {
    std::vector<std::int32_t> elastic;      // elastic jobs above their minimum
    std::vector<std::int32_t> borrowed;     // borrowing now (reclaimable)
    std::vector<std::int32_t> preemptible;  // preemptible jobs
    // By TenantIx: every running job of the tenant, which its own less-served jobs may
    // preempt under fair-share order (PreemptionConfig::attained_service_max_loss).
    std::vector<std::vector<std::int32_t>> by_tenant;
    std::int32_t min_preemptible_tier = std::numeric_limits<std::int32_t>::max();
  };
  std::vector<ByType> by_type;  // by TypeIx
};

// Takes for a list of GPUs, grouped by node in node order.
std::vector<Plan::Take> takes_of(const ClusterSnapshot& s, const std::vector<GpuRef>& gpus);
// The GPUs of a list of takes, sorted.
std::vector<GpuRef> gpus_of(const ClusterSnapshot& s, const std::vector<Plan::Take>& takes);

// Allowed sizes of an elastic range, largest first (just {gpus} for a rigid job).
std::vector<std::int32_t> allowed_sizes(const JobRequest& r);

// Throughput of `r` at `gpus` by its scaling curve (core::throughput_at; linear without one).
double throughput(const JobRequest& r, std::int32_t gpus);
// The same by its curve measured on `type` (JobRequest::scaling_by_type), where it has one.
double throughput(const JobRequest& r, const core::GpuTypeId& type, std::int32_t gpus);

// The allowed sizes, largest first, at which each GPU still adds at least `min_efficiency`
// of what one adds at the smallest allowed size (SchedulerConfig::elastic_min_efficiency);
// the smallest is always among them.
std::vector<std::int32_t> useful_sizes(const JobRequest& r, double min_efficiency);

}  // namespace corral::sched::detail
