#include "sched/internal/running.h"

#include <algorithm>
#include <bit>
#include <map>
#include <tuple>

namespace corral::sched::detail {

std::vector<Plan::Take> takes_of(const ClusterSnapshot& s, const std::vector<GpuRef>& gpus) {
  std::map<NodeIx, std::uint64_t> masks;
  for (const GpuRef& g : gpus) masks[*s.find_node(g.node)] |= std::uint64_t{1} << g.index;
  std::vector<Plan::Take> out;
  for (const auto& [node, mask] : masks) out.push_back({node, mask});
  return out;
}

std::vector<GpuRef> gpus_of(const ClusterSnapshot& s, const std::vector<Plan::Take>& takes) {
  std::vector<GpuRef> out;
  for (const Plan::Take& t : takes) {
    for (std::uint64_t m = t.mask; m != 0; m &= m - 1) {
      out.push_back({s.nodes()[t.node].id, std::countr_zero(m)});
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

RunningIndex::RunningIndex(const ClusterSnapshot& s) {
  const auto& running = s.running();
  takes.reserve(running.size());
  for (size_t j = 0; j < running.size(); ++j) {
    // A share's GPU is not the share's to give back: it is never a preemption's victim or
    // a resize's (the GPU frees only when every share on it ends), so it has no takes.
    std::vector<Plan::Take>& t = takes.emplace_back();
    if (!is_share(running[j].request)) {
      for (const NodeGpus& g : s.running_gpus(j)) t.push_back({g.node, g.mask});
    }
    tenant.push_back(s.running_tenant(j));
    type.push_back(takes.back().empty() ? -1 : s.topo()[takes.back()[0].node].type);
    region.push_back(takes.back().empty() ? -1 : s.topo()[takes.back()[0].node].region);
  }
  touched.assign(running.size(), false);

  std::vector<std::int32_t> order(running.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::int32_t>(i);
  std::sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) {
    return std::tie(running[a].started_at, running[a].request.id) <
           std::tie(running[b].started_at, running[b].request.id);
  });
  // Shares fill the guarantee too, by their thousandths (admission counts them so), though
  // they are never reclaimed: a whole-GPU job that started past the guarantee beside them
  // stays a borrower.
  std::map<std::pair<TenantIx, TypeIx>, std::int64_t> filled;  // thousandths
  borrowed.assign(running.size(), false);
  for (std::int32_t ix : order) {
    const auto& gpus = s.running_gpus(static_cast<std::size_t>(ix));
    if (gpus.empty()) continue;
    const TypeIx t = s.topo()[gpus.front().node].type;
    std::int64_t& used = filled[{tenant[ix], t}];
    used += gpu_milli_of(running[ix].request, static_cast<std::int32_t>(running[ix].gpus.size()));
    const core::Quota& q = s.tenants()[tenant[ix]].quota_for(s.gpu_types()[t].id);
    borrowed[ix] = used > q.guaranteed_milli;
  }

  by_type.resize(s.gpu_types().size());
  for (ByType& lists : by_type) lists.by_tenant.resize(s.tenants().size());
  for (std::int32_t ix = 0; ix < static_cast<std::int32_t>(running.size()); ++ix) {
    if (type[ix] < 0) continue;
    const JobRequest& r = running[ix].request;
    ByType& lists = by_type[type[ix]];
    if (r.elastic && static_cast<std::int32_t>(running[ix].gpus.size()) > r.elastic->min_gpus) {
      lists.elastic.push_back(ix);
    }
    if (borrowed[ix]) lists.borrowed.push_back(ix);
    lists.by_tenant[tenant[ix]].push_back(ix);
    if (r.preemptible) {
      lists.preemptible.push_back(ix);
      lists.min_preemptible_tier = std::min(lists.min_preemptible_tier, r.tier);
    }
  }
}

std::vector<std::int32_t> allowed_sizes(const JobRequest& r) {
  if (!r.elastic) return {r.gpus};
  const core::ElasticRange& e = *r.elastic;
  std::vector<std::int32_t> sizes;
  for (std::int32_t n = e.max_gpus; n >= e.min_gpus && n >= 1; --n) {
    const bool on_step = e.step == core::ElasticStep::kPowerOfTwo
                             ? std::has_single_bit(static_cast<std::uint32_t>(n))
                             : n % std::max(e.step_multiple, 1) == 0;
    const bool splits = r.gpus_per_node == 0 || n % r.gpus_per_node == 0;
    if (on_step && splits) sizes.push_back(n);
  }
  if (sizes.empty()) sizes.push_back(r.gpus);
  return sizes;
}

double throughput(const JobRequest& r, std::int32_t gpus) {
  return r.elastic ? core::throughput_at(r.elastic->scaling, gpus) : static_cast<double>(gpus);
}

double throughput(const JobRequest& r, const core::GpuTypeId& type, std::int32_t gpus) {
  const auto it = r.scaling_by_type.find(type);
  return it == r.scaling_by_type.end() ? throughput(r, gpus)
                                       : core::throughput_at(it->second, gpus);
}

std::vector<std::int32_t> useful_sizes(const JobRequest& r, double min_efficiency) {
  std::vector<std::int32_t> sizes = allowed_sizes(r);
  if (!r.elastic || r.elastic->scaling.empty() || min_efficiency <= 0) return sizes;
  const std::int32_t least = sizes.back();
  const double per_gpu_at_least = throughput(r, least) / static_cast<double>(least);
  std::erase_if(sizes, [&](std::int32_t n) {
    return n != least &&
           throughput(r, n) / static_cast<double>(n) < min_efficiency * per_gpu_at_least;
  });
  return sizes;
}

}  // namespace corral::sched::detail
