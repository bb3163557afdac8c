// SimulatedInventory: a fixed NodeInventory (from a preset or a YAML file) with healthy,
// idle readings. Faults are injected by the agent from the faults file (faults.h).
//
// Thread safety: needs external synchronization.
#pragma once

#include <utility>
#include <vector>

#include "agent/inventory.h"

namespace corral::agent {

class SimulatedInventory final : public Inventory {
 public:
  explicit SimulatedInventory(NodeInventory inventory) : inventory_(std::move(inventory)) {}

  core::Result<NodeInventory> discover() override { return inventory_; }

  // Idle, cool and healthy: 35 °C, a tenth of the power limit, nothing throttled.
  core::Result<std::vector<core::GpuHealth>> read_health() override {
    std::vector<core::GpuHealth> out;
    for (const GpuInfo& g : inventory_.gpus) {
      out.push_back(core::GpuHealth{.index = g.index,
                                    .uuid = g.uuid,
                                    .temperature_c = 35,
                                    .power_w = g.power_limit_w / 10.0,
                                    .power_limit_w = g.power_limit_w});
    }
    return out;
  }

  bool simulated() const override { return true; }

 private:
  NodeInventory inventory_;
};

}  // namespace corral::agent
