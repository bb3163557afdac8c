#include "server/reports/rack_power.h"

#include <algorithm>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "core/gpu_type.h"
#include "server/base/model_json.h"
#include "server/controllers/node_health.h"
#include "server/cycle/snapshot_from_store.h"

namespace corral::server {

std::vector<RackPower> rack_power(std::vector<StoredNode> nodes,
                                  const std::vector<store::ObservedNode>& observed,
                                  const std::vector<store::RackCapRow>& caps,
                                  const std::vector<store::AllocationRow>& active) {
  std::map<std::string, RackPower> racks;
  for (const core::Rack& r : racks_from(caps)) {
    racks[r.name] = {.name = r.name, .cap_watts = r.power_cap_watts};
  }
  std::map<std::string, const store::ObservedNode*> observed_of;
  for (const auto& o : observed) observed_of[o.node.value] = &o;
  // node -> GPUs held: a GPU of shares once, as it draws its power once
  std::map<std::string, std::int32_t> held_on;
  std::set<std::pair<std::string, std::int32_t>> counted;
  for (const auto& a : active) {
    if (counted.emplace(a.node.value, a.gpu_index).second) ++held_on[a.node.value];
  }
  for (auto& [row, node] : nodes) {
    if (node.labels.rack.empty()) continue;
    if (const auto o = observed_of.find(row->id.value); o != observed_of.end()) {
      apply_observation(node, *o->second);
    }
    RackPower& rack = racks[node.labels.rack];
    rack.name = node.labels.rack;
    rack.nodes += 1;
    rack.gpus += static_cast<std::int32_t>(node.gpus.size());
    const auto held = held_on.find(row->id.value);
    if (held == held_on.end() || node.gpus.empty()) continue;
    const auto type = core::find_builtin_gpu_type(node.gpus.front().type.value);
    rack.gpus_held += held->second;
    if (type) rack.used_watts += held->second * core::node_gpu_watts(node, *type);
  }
  std::vector<RackPower> out;
  out.reserve(racks.size());
  for (auto& [name, rack] : racks) out.push_back(std::move(rack));
  return out;
}

core::Result<std::vector<RackPower>> read_rack_power(store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const auto nodes, tx.nodes().list_nodes());
  CORRAL_ASSIGN_OR_RETURN(const auto observed, tx.nodes().list_observed_without_readings());
  CORRAL_ASSIGN_OR_RETURN(const auto caps, tx.rack_caps().list_rack_caps());
  CORRAL_ASSIGN_OR_RETURN(const auto active, tx.allocations().list_active_allocations());
  return rack_power(stored_nodes(nodes), observed, caps, active);
}

nlohmann::json rack_power_json(const std::vector<RackPower>& racks) {
  nlohmann::json out = nlohmann::json::array();
  for (const RackPower& r : racks) {
    const bool capped = r.cap_watts > 0;
    out.push_back({{"name", r.name},
                   {"capWatts", capped ? nlohmann::json(r.cap_watts) : nlohmann::json()},
                   {"usedWatts", r.used_watts},
                   {"freeWatts",
                    capped ? nlohmann::json(std::max<std::int64_t>(0, r.cap_watts - r.used_watts))
                           : nlohmann::json()},
                   {"nodes", r.nodes},
                   {"gpus", r.gpus},
                   {"gpusHeld", r.gpus_held}});
  }
  return out;
}

}  // namespace corral::server
