// corrald's --config file (YAML):
//
//   tenants:                 # created at start when missing (the store then owns them)
//     nlp: {weight: 2, quotas: {H100: {guaranteed: 8, borrowLimit: 8}},
//           maxPendingJobs: 1000, submitRatePerSecond: 50, submitBurst: 100}
//   scheduler:
//     order: fairShare       # or fifo
//     batchWindowMs: 20      # events within this window share one cycle
//     tickMs: 2000           # a cycle runs at least this often
//
// Without a file, corrald has tenant `default` (bounded only by capacity) and the
// built-in priority classes production, standard and preemptible.
//
// Thread safety: a value type.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "server/model_json.h"
#include "server/sched_loop.h"

namespace corral::server {

struct ServerConfig {
  std::vector<TenantConfig> tenants;  // always includes `default`
  SchedLoopOptions sched;
};

ServerConfig default_server_config();
// Reads and validates the file; InvalidArgument names the offending key.
core::Result<ServerConfig> load_server_config(const std::string& path);

}  // namespace corral::server
