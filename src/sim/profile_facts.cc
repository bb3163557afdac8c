#include "sim/profile_facts.h"

#include <algorithm>

#include <fmt/format.h>

namespace corral::sim {
namespace {

// The largest node of each type, in GPUs.
std::map<core::GpuTypeId, std::int32_t> node_gpus_by_type(const Fleet& fleet) {
  std::map<core::GpuTypeId, std::int32_t> out;
  for (const core::Node& node : fleet.nodes) {
    if (node.gpus.empty()) continue;
    std::int32_t& most = out[node.gpus.front().type];
    most = std::max(most, static_cast<std::int32_t>(node.gpus.size()));
  }
  return out;
}

}  // namespace

core::Status check_profile_types(const RuntimeProfile& profile, const Fleet& fleet,
                                 const std::string& job_name) {
  const std::vector<core::GpuTypeId> known = profile.gpu_types();
  if (known.empty()) return core::ok_status();
  for (const core::GpuType& t : fleet.gpu_types) {
    if (std::find(known.begin(), known.end(), t.id) == known.end()) {
      return core::invalid_argument(
          "gpu_type", fmt::format("job {}: its profiles have no figures for the fleet's GPU "
                                  "type {}",
                                  job_name, t.id.value));
    }
  }
  return core::ok_status();
}

std::map<core::GpuTypeId, double> gpu_speed(const RuntimeProfile& profile, const Fleet& fleet,
                                            std::int32_t gpus) {
  std::map<core::GpuTypeId, double> speed;
  if (profile.gpu_types().empty()) return speed;
  double fastest = 0;
  for (const auto& [type, node_gpus] : node_gpus_by_type(fleet)) {
    const double v = 1.0 / profile.seconds(type, whole_nodes(gpus, node_gpus));
    speed[type] = v;
    fastest = std::max(fastest, v);
  }
  for (auto& [type, v] : speed) v /= fastest;
  return speed;
}

std::vector<core::ScalingPoint> fleet_scaling_curve(const RuntimeProfile& profile,
                                                    const Fleet& fleet, std::int32_t min_gpus,
                                                    std::int32_t max_gpus) {
  core::GpuTypeId best_type;
  std::int32_t best_node = fleet.max_node_gpus();
  if (!profile.gpu_types().empty()) {
    double best = -1;
    for (const auto& [type, node_gpus] : node_gpus_by_type(fleet)) {
      const double v = 1.0 / profile.seconds(type, whole_nodes(max_gpus, node_gpus));
      if (v > best) {
        best = v;
        best_type = type;
        best_node = node_gpus;
      }
    }
  }
  return scaling_curve(profile, best_type, min_gpus, max_gpus, best_node);
}

std::map<core::GpuTypeId, std::vector<core::ScalingPoint>> scaling_curves_by_type(
    const RuntimeProfile& profile, const Fleet& fleet, std::int32_t min_gpus,
    std::int32_t max_gpus) {
  std::map<core::GpuTypeId, std::vector<core::ScalingPoint>> out;
  if (profile.gpu_types().empty()) return out;
  for (const auto& [type, node_gpus] : node_gpus_by_type(fleet)) {
    out[type] = scaling_curve(profile, type, min_gpus, max_gpus, node_gpus);
  }
  return out;
}

}  // namespace corral::sim
