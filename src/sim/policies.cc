#include "sim/policies.h"

#include <fmt/format.h>

namespace corral::sim {

std::vector<std::string> policy_names() { return {"fifo", "corral"}; }

core::Result<Policy> policy_by_name(std::string_view name) {
  if (name == "fifo") {
    return Policy{.name = "fifo",
                  .config = {.order = sched::QueueOrder::kFifo, .topology_scoring = false}};
  }
  if (name == "corral") return Policy{.name = "corral", .config = {}};
  if (name == "slurm" || name == "tiresias") {
    return core::invalid_argument(
        "policy",
        fmt::format("'{}' needs {} in sched::decide(), which this build does not have", name,
                    name == "slurm" ? "EASY backfill"
                                    : "attained-service order "
                                      "and preemption"));
  }
  return core::invalid_argument("policy", fmt::format("unknown policy '{}' (known: {})", name,
                                                      fmt::join(policy_names(), ", ")));
}

}  // namespace corral::sim
