#include "sim/policies.h"

#include <fmt/format.h>

namespace corral::sim {

std::vector<std::string> policy_names() {
  return {"fifo", "slurm", "tiresias", "corral", "corral-elastic"};
}

core::Result<Policy> policy_by_name(std::string_view name) {
  // Knobs the baselines switch off: each is a Corral feature the baseline lacks.
  sched::SchedulerConfig plain;
  plain.preemption.enabled = false;
  plain.backfill = false;
  plain.starvation_age = core::Duration(0);
  plain.elastic_growth = false;
  if (name == "fifo") {
    sched::SchedulerConfig c = plain;
    c.order = sched::QueueOrder::kFifo;
    c.topology_scoring = false;
    return Policy{.name = "fifo", .config = c};
  }
  if (name == "slurm") {
    sched::SchedulerConfig c = plain;
    c.order = sched::QueueOrder::kFifo;
    c.topology_scoring = false;
    c.backfill = true;
    return Policy{.name = "slurm", .config = c};
  }
  if (name == "tiresias") {
    sched::SchedulerConfig c = plain;
    c.order = sched::QueueOrder::kAttainedService;
    c.preemption.enabled = true;
    return Policy{.name = "tiresias", .config = c, .jobs_preemptible = true};
  }
  if (name == "corral") {
    return Policy{.name = "corral", .config = {}, .corral = true, .gpu_speed = true};
  }
  if (name == "corral-elastic") {
    return Policy{.name = "corral-elastic",
                  .config = {},
                  .jobs_elastic = true,
                  .corral = true,
                  .gpu_speed = true};
  }
  return core::invalid_argument("policy", fmt::format("unknown policy '{}' (known: {})", name,
                                                      fmt::join(policy_names(), ", ")));
}

}  // namespace corral::sim
