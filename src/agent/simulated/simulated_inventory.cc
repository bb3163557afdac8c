#include "agent/simulated/simulated_inventory.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "core/splitmix.h"

namespace corral::agent {
namespace {

// Seeded draws only (STYLE.md: no unseeded randomness).
using core::splitmix64;

// A uniform value in [lo, hi) from `seed`.
double uniform(std::uint64_t seed, double lo, double hi) {
  return lo + (hi - lo) * core::unit_interval(splitmix64(seed));
}

}  // namespace

core::Result<std::vector<core::GpuHealth>> SimulatedInventory::read_health() {
  std::vector<core::GpuHealth> out;
  for (const GpuInfo& g : inventory_.gpus) {
    core::GpuHealth h{.index = g.index,
                      .uuid = g.uuid,
                      .temperature_c = 35,
                      .power_w = g.power_limit_w / 10.0,
                      .power_limit_w = g.power_limit_w};
    const auto last =
        std::find_if(last_.begin(), last_.end(), [&](const auto& s) { return s.gpu == g.index; });
    if (last != last_.end()) {
      h.temperature_c = last->temperature_c;
      h.power_w = last->power_w;
      h.sm_percent = static_cast<std::int32_t>(std::lround(last->utilization * 100));
      h.memory_used_mib = last->memory_used_mib;
    }
    out.push_back(std::move(h));
  }
  return out;
}

core::Result<std::vector<core::TelemetrySample>> SimulatedInventory::sample(
    std::int64_t now_ms, const std::set<std::int32_t>& busy) {
  std::vector<core::TelemetrySample> out;
  ++draws_;
  for (const GpuInfo& g : inventory_.gpus) {
    const std::uint64_t seed = splitmix64(std::hash<std::string>{}(g.uuid) ^ splitmix64(draws_));
    const double limit = g.power_limit_w > 0 ? g.power_limit_w : 700;
    core::TelemetrySample s{.gpu = g.index, .time_ms = now_ms};
    if (busy.count(g.index) > 0) {
      s.utilization = uniform(seed, 0.85, 0.98);
      // Power follows the load (a busy H100 draws most of its 700 W), temperature the power.
      s.power_w = limit * (0.55 + 0.4 * s.utilization) * uniform(seed + 1, 0.97, 1.0);
      s.temperature_c = static_cast<std::int32_t>(std::lround(40 + 35 * s.power_w / limit));
      s.memory_used_mib = static_cast<std::int64_t>(static_cast<double>(g.memory_mib) *
                                                    uniform(seed + 2, 0.6, 0.9));
    } else {
      s.utilization = uniform(seed, 0, 0.01);
      s.power_w = limit * uniform(seed + 1, 0.08, 0.12);
      s.temperature_c = static_cast<std::int32_t>(std::lround(uniform(seed + 2, 32, 38)));
      s.memory_used_mib = 0;
    }
    out.push_back(std::move(s));
  }
  last_ = out;
  return out;
}

}  // namespace corral::agent
