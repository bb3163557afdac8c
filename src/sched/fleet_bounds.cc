#include "sched/internal/fleet_bounds.h"

#include <algorithm>
#include <bit>

#include "sched/internal/text.h"

namespace corral::sched::detail {

FleetBounds::FleetBounds(const Plan& plan) : types_(plan.snapshot().gpu_types().size()) {
  const ClusterSnapshot& s = plan.snapshot();
  rows_.assign(static_cast<std::size_t>(kLevelCount) * types_, Row{});
  for (std::int32_t l = 0; l < kLevelCount; ++l) {
    const auto level = static_cast<Level>(l);
    for (std::int32_t d = 0; d < plan.domain_count(level); ++d) {
      for (std::size_t t = 0; t < types_; ++t) {
        const auto type = static_cast<TypeIx>(t);
        // Nodes of this domain by GPU count, then "at least k" as a suffix sum.
        Row by_size{};
        std::int32_t gpus = 0;
        for (NodeIx n : plan.domain_nodes(level, d, type)) {
          const std::int32_t size = std::popcount(s.topo()[n].all_mask);
          gpus += size;
          by_size[size] += 1;
        }
        if (gpus == 0) continue;
        Row& row = rows_[static_cast<std::size_t>(l) * types_ + t];
        row[0] = std::max(row[0], gpus);
        std::int32_t at_least = 0;
        for (std::int32_t k = kMaxGpusPerNode; k >= 1; --k) {
          at_least += by_size[k];
          row[k] = std::max(row[k], at_least);
        }
      }
    }
  }
  node_domain_.assign(types_, 0);
  std::vector<std::int32_t> off_duty(types_, 0), unhealthy(types_, 0);
  for (std::size_t n = 0; n < s.nodes().size(); ++n) {
    const NodeTopo& topo = s.topo()[n];
    if (topo.type < 0) continue;
    for (std::uint64_t domain : topo.domain_masks) {
      node_domain_[topo.type] = std::max(node_domain_[topo.type], std::popcount(domain));
    }
    if (s.nodes()[n].admin != core::NodeAdminState::kActive) {
      off_duty[topo.type] += std::popcount(topo.all_mask);
    } else {
      unhealthy[topo.type] += std::popcount(topo.all_mask & ~topo.usable_mask);
    }
  }
  out_of_service_.resize(types_);
  for (std::size_t t = 0; t < types_; ++t) {
    std::string& text = out_of_service_[t];
    if (off_duty[t] > 0) text = cat(off_duty[t], " on cordoned/draining nodes");
    if (unhealthy[t] > 0) text += cat(text.empty() ? "" : ", ", unhealthy[t], " unhealthy");
  }
}

}  // namespace corral::sched::detail
