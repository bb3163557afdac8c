// Racks' power: each rack's cap and the watts its allocated GPUs count against it, for
// GET /v1/racks, `corral racks` and the dashboard's fleet view (GET /v1/fleet).
//
// The figures are the scheduler's own: the caps racks_from() puts in force (the admin
// config's, else the smallest an agent declared), and each allocated GPU at its node's
// watts per GPU (core::node_gpu_watts: the power limit its agent reports, else the GPU
// type's catalog TDP). Nothing here names a job or a tenant, so every caller may see it.
//
// Thread safety: free functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/result.h"
#include "server/base/stored_documents.h"
#include "store/store.h"

namespace corral::server {

struct RackPower {
  std::string name;
  std::int64_t cap_watts = 0;   // 0: no cap
  std::int64_t used_watts = 0;  // what its allocated GPUs count against the cap
  std::int32_t nodes = 0;
  std::int32_t gpus = 0;
  std::int32_t gpus_held = 0;  // allocated GPUs
};

// Every rack a node names and every rack with a cap, by name; a node without a rack is
// in none. `nodes` as stored_nodes() decoded them (taken, since the GPUs' reported power
// limits are applied to them: `observed`, apply_observation).
std::vector<RackPower> rack_power(std::vector<StoredNode> nodes,
                                  const std::vector<store::ObservedNode>& observed,
                                  const std::vector<store::RackCapRow>& caps,
                                  const std::vector<store::AllocationRow>& active);

// The same, read from the store in four queries.
core::Result<std::vector<RackPower>> read_rack_power(store::Tx& tx);

// [{"name", "capWatts" (null: none), "usedWatts", "freeWatts" (null: no cap), "nodes",
//   "gpus", "gpusHeld"}, ...]
nlohmann::json rack_power_json(const std::vector<RackPower>& racks);

}  // namespace corral::server
