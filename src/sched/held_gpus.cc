#include "sched/internal/held_gpus.h"

#include <algorithm>
#include <bit>
#include <utility>

#include "sched/internal/text.h"

namespace corral::sched::detail {
namespace {

// One share of a running job, on GPU `g`: the GPU exists and no whole-GPU job holds it,
// and the shares on it add up to at most the whole GPU and its memory. Marks it in `held`
// and `shared`, and adds it to `out` as an entry of its own.
core::Status hold_one_share(const ClusterSnapshot& s, const RunningJob& r, const GpuRef& g,
                            std::vector<std::uint64_t>& held, SharedGpus& shared,
                            std::vector<NodeGpus>& out) {
  const auto field = [&] { return cat("running[", r.request.id.value, "]"); };
  const auto node = s.find_node(g.node);
  if (!node || g.index < 0 || g.index >= static_cast<std::int32_t>(s.nodes()[*node].gpus.size())) {
    return core::invalid_argument(field(), cat("holds unknown GPU ", g.node.value, "/", g.index));
  }
  const std::uint64_t bit = std::uint64_t{1} << g.index;
  const auto key = std::make_pair(*node, g.index);
  const auto at = shared.find(key);
  if ((held[*node] & bit) != 0 && at == shared.end()) {
    return core::invalid_argument(
        field(), cat("GPU ", g.node.value, "/", g.index, " is held by a whole-GPU job"));
  }
  ShareUse& use = shared[key];
  use.milli += r.request.gpu_milli;
  use.memory_mib += r.request.gpu_memory_mib;
  const std::int64_t memory = s.gpu_types()[s.topo()[*node].type].memory_mib;
  if (use.milli > 1000 || (memory > 0 && use.memory_mib > memory)) {
    return core::invalid_argument(
        field(), cat("the shares on GPU ", g.node.value, "/", g.index, " add up to ", use.milli,
                     "/1000 of it and ", use.memory_mib, "/", memory, " MiB of its memory"));
  }
  held[*node] |= bit;
  out.push_back({*node, bit});
  return core::ok_status();
}

// A running job of shares: one share on each of its GPUs, each GPU once. `out` gets one
// entry per GPU, in node and GPU order (Plan applies a share to one GPU at a time).
core::Status hold_shares(const ClusterSnapshot& s, const RunningJob& r,
                         std::vector<std::uint64_t>& held, SharedGpus& shared,
                         std::vector<NodeGpus>& out) {
  const auto field = [&] { return cat("running[", r.request.id.value, "]"); };
  if (r.gpus.size() != static_cast<std::size_t>(r.request.gpus)) {
    return core::invalid_argument(
        field() + ".gpus", cat("holds ", r.gpus.size(), " GPUs for ", r.request.gpus, " shares"));
  }
  for (const GpuRef& g : r.gpus) {
    CORRAL_RETURN_IF_ERROR(hold_one_share(s, r, g, held, shared, out));
  }
  std::sort(out.begin(), out.end(), [](const NodeGpus& a, const NodeGpus& b) {
    return std::pair(a.node, a.mask) < std::pair(b.node, b.mask);
  });
  for (std::size_t i = 1; i < out.size(); ++i) {
    if (out[i].node == out[i - 1].node && out[i].mask == out[i - 1].mask) {
      return core::invalid_argument(field() + ".gpus",
                                    "holds one GPU twice: its shares are on GPUs of their own");
    }
  }
  return core::ok_status();
}

}  // namespace

core::Status hold_gpus(const ClusterSnapshot& s, const RunningJob& r,
                       std::vector<std::uint64_t>& held, SharedGpus& shared,
                       std::vector<NodeGpus>& out) {
  if (is_share(r.request)) return hold_shares(s, r, held, shared, out);
  const auto field = [&] { return cat("running[", r.request.id.value, "]"); };
  const std::vector<core::Node>& nodes = s.nodes();
  const core::NodeId* last_id = nullptr;  // a gang's GPUs come node by node
  NodeIx node = -1;
  for (const GpuRef& g : r.gpus) {
    if (last_id == nullptr || g.node != *last_id) {
      const auto found = s.find_node(g.node);
      node = found ? *found : -1;
      last_id = &g.node;
    }
    if (node < 0 || g.index < 0 || g.index >= static_cast<std::int32_t>(nodes[node].gpus.size())) {
      return core::invalid_argument(field(), cat("holds unknown GPU ", g.node.value, "/", g.index));
    }
    const std::uint64_t bit = std::uint64_t{1} << g.index;
    if ((held[node] & bit) != 0) {
      return core::invalid_argument(
          field(), cat("GPU ", g.node.value, "/", g.index, " is held by two jobs"));
    }
    held[node] |= bit;
    const auto at =
        std::find_if(out.begin(), out.end(), [&](const NodeGpus& n) { return n.node == node; });
    if (at == out.end()) {
      out.push_back({node, bit});
    } else {
      at->mask |= bit;
    }
  }
  std::sort(out.begin(), out.end(),
            [](const NodeGpus& a, const NodeGpus& b) { return a.node < b.node; });
  return core::ok_status();
}

void release_gpus(const JobRequest& r, const std::vector<NodeGpus>& gpus,
                  std::vector<std::uint64_t>& held, SharedGpus& shared) {
  for (const NodeGpus& g : gpus) {
    if (is_share(r)) {
      const auto at = shared.find({g.node, std::countr_zero(g.mask)});
      at->second.milli -= r.gpu_milli;
      at->second.memory_mib -= r.gpu_memory_mib;
      if (at->second.milli > 0) continue;
      shared.erase(at);
    }
    held[g.node] &= ~g.mask;
  }
}

}  // namespace corral::sched::detail
