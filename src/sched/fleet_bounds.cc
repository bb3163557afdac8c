#include "sched/internal/fleet_bounds.h"

#include <algorithm>
#include <bit>

#include "sched/internal/text.h"

namespace corral::sched::detail {

FleetBounds::FleetBounds(const Plan& plan)
    : types_(plan.snapshot().gpu_types().size()),
      scopes_(plan.snapshot().region_count() > 1
                  ? static_cast<std::size_t>(plan.snapshot().region_count()) + 1
                  : 1) {
  const ClusterSnapshot& s = plan.snapshot();
  rows_.assign(scopes_ * kLevelCount * types_, Row{});
  clusters_.assign(scopes_, 0);
  for (ClusterIx c = 0; c < s.cluster_count(); ++c) {
    for_scopes(s.region_of_cluster(c), [&](std::size_t scope) { clusters_[scope] += 1; });
  }
  for (std::int32_t l = 0; l < kLevelCount; ++l) {
    const auto level = static_cast<Level>(l);
    for (std::int32_t d = 0; d < plan.domain_count(level); ++d) {
      const RegionIx region = plan.domain_region(level, d);
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
        for_scopes(region, [&](std::size_t scope) {
          Row& row = rows_[(scope * kLevelCount + static_cast<std::size_t>(l)) * types_ + t];
          row[0] = std::max(row[0], gpus);
          std::int32_t at_least = 0;
          for (std::int32_t k = kMaxGpusPerNode; k >= 1; --k) {
            at_least += by_size[k];
            row[k] = std::max(row[k], at_least);
          }
        });
      }
    }
  }
  node_domain_.assign(scopes_ * types_, 0);
  total_.assign(scopes_ * types_, 0);
  largest_.assign(scopes_ * types_, 0);
  std::vector<std::int32_t> off_duty(scopes_ * types_, 0), lost(scopes_ * types_, 0),
      unhealthy(scopes_ * types_, 0);
  for (std::size_t n = 0; n < s.nodes().size(); ++n) {
    const NodeTopo& topo = s.topo()[n];
    if (topo.type < 0) continue;
    for_scopes(topo.region, [&](std::size_t scope) {
      const std::size_t i = scope * types_ + static_cast<std::size_t>(topo.type);
      for (std::uint64_t domain : topo.domain_masks) {
        node_domain_[i] = std::max(node_domain_[i], std::popcount(domain));
      }
      const std::int32_t gpus = std::popcount(topo.all_mask);
      total_[i] += gpus;
      largest_[i] = std::max(largest_[i], gpus);
      if (s.nodes()[n].admin != core::NodeAdminState::kActive) {
        off_duty[i] += gpus;
      } else if (s.nodes()[n].lost) {
        lost[i] += gpus;
      } else {
        unhealthy[i] += std::popcount(topo.all_mask & ~topo.usable_mask);
      }
    });
  }
  out_of_service_.resize(scopes_ * types_);
  for (std::size_t i = 0; i < out_of_service_.size(); ++i) {
    std::string& text = out_of_service_[i];
    if (off_duty[i] > 0) text = cat(off_duty[i], " on cordoned/draining nodes");
    if (lost[i] > 0) text += cat(text.empty() ? "" : ", ", lost[i], " on lost nodes");
    if (unhealthy[i] > 0) text += cat(text.empty() ? "" : ", ", unhealthy[i], " unhealthy");
  }
}

}  // namespace corral::sched::detail
