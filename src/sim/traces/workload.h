// A workload: the jobs a simulation replays, in the trace's own terms (names, seconds),
// before the engine turns them into scheduler requests.
//
// Thread safety: value types.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/sweep.h"

namespace corral::sim {

class RuntimeProfile;  // pollux.h

// A trial of a sweep (core::SweepSpec) as a model: the metric it reports, lower better,
// along a learning curve final + gap * (1 - step / steps)^speed over its `steps`, and its
// sweep's early-stopping rule (whose max_step is `steps`). Curves cross: a trial that
// learns fast looks better early than one that ends better, which is the bet early
// stopping makes.
struct SweepTrial {
  std::int64_t steps = 1;
  double final_value = 0;
  double gap = 1;
  double speed = 1;
  std::optional<core::AshaRule> asha;
  double value_at(std::int64_t step) const {
    const double left =
        1.0 - static_cast<double>(std::min(step, steps)) / static_cast<double>(steps);
    return final_value + gap * std::pow(left, speed);
  }
};

struct TraceJob {
  std::string name;  // the trace's job id, e.g. "philly-31566"
  core::TenantId tenant;
  std::int64_t submit_ms = 0;  // from the start of the trace
  std::int32_t gpus = 1;
  // GPUs on each node the gang spans (0: the scheduler chooses the split). A large
  // training job takes whole nodes, so a node with a failed GPU cannot host it.
  std::int32_t gpus_per_node = 0;
  std::int64_t duration_ms = 0;  // run time when placed as the job wants it, > 0
  std::string gpu_type;          // empty: any type
  std::string region;            // the region it must run in; empty: the fleet's job_regions rule
  std::string status;            // the trace's final status, if it has one (informational)
  // The job's priority tier (core/priority.h: 0 preemptible, 1 standard, 2 production)
  // and whether it may be preempted (also when the policy makes every job preemptible).
  // Traces do not say; a what-if or a test scenario does.
  std::int32_t tier = 1;
  bool preemptible = false;
  // Who submitted it, for an interactive session (tier core::kInteractiveTier): decide()
  // holds each user's sessions to SchedulerConfig::session_gpus_per_user. Traces do not
  // say; a what-if or a test scenario does.
  std::string user;
  // Its own checkpoint interval; -1: the engine's RuntimeModel::checkpoint_interval.
  std::int64_t checkpoint_interval_ms = -1;
  // Run time by placement (Pollux workloads); null: the engine's RuntimeModel factors.
  std::shared_ptr<const RuntimeProfile> profile;
  // Run time by placement when the job runs elastic (a policy with jobs_elastic): at
  // each size it trains at the batch size best for that size. Null: it can only run
  // rigid. Its range of GPU counts, when it has one.
  std::shared_ptr<const RuntimeProfile> elastic_profile;
  std::int32_t elastic_min_gpus = 0;
  std::int32_t elastic_max_gpus = 0;
  // A task of a job array (core::ArraySpec): its index (-1: in no array; the tasks of one
  // array are consecutive in the workload, index 0 first) and the array's maxRunning.
  std::int32_t array_index = -1;
  std::int32_t array_max_running = 0;
  // Runs after the job this many places earlier in the workload succeeded (a workflow
  // step, core::Dependency with on: success); 0: after nothing.
  std::int32_t after = 0;
  // A trial of a sweep: its model; the sweep is its array. Null for any other job.
  std::shared_ptr<const SweepTrial> trial;
};

struct Workload {
  std::string source;
  std::vector<TraceJob> jobs;  // sorted by submit time, then input order
};

}  // namespace corral::sim
