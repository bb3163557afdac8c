// SimulatedInventory: a fixed NodeInventory (from a preset or a YAML file) with healthy
// readings made from the load: a GPU a worker runs on is 85-98% utilized, draws most of
// its power limit and runs warm (60-75 C); an idle one is ~0%, cool and near idle power.
// The values vary from sample to sample by a PRNG seeded from the GPU's uuid, so two runs
// read the same. Faults are injected by the agent from the faults file (faults.h).
//
// Thread safety: needs external synchronization.
#pragma once

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "agent/inventory.h"

namespace corral::agent {

class SimulatedInventory final : public Inventory {
 public:
  explicit SimulatedInventory(NodeInventory inventory) : inventory_(std::move(inventory)) {}

  core::Result<NodeInventory> discover() override { return inventory_; }

  // Healthy, as loaded as the last sample() said (idle and cool before any): nothing
  // throttled.
  core::Result<std::vector<core::GpuHealth>> read_health() override;

  core::Result<std::vector<core::TelemetrySample>> sample(
      std::int64_t now_ms, const std::set<std::int32_t>& busy) override;

  bool simulated() const override { return true; }

 private:
  NodeInventory inventory_;
  std::vector<core::TelemetrySample> last_;  // the last sample(), by GPU index
  std::uint64_t draws_ = 0;
};

}  // namespace corral::agent
