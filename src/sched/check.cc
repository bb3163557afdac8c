#include "sched/check.h"

#include <algorithm>
#include <bit>
#include <map>
#include <set>

#include "sched/internal/place.h"
#include "sched/internal/text.h"

namespace corral::sched {
namespace {

using detail::cat;

std::string gpu_text(const GpuRef& g) { return cat(g.node.value, "/", g.index); }

}  // namespace

std::vector<std::string> check(const ClusterSnapshot& s, const Decisions& d) {
  std::vector<std::string> bad;
  std::map<core::JobId, const PendingJob*> pending;
  for (const PendingJob& p : s.pending()) pending[p.request.id] = &p;

  // 1. Every pending job is decided exactly once, and only pending jobs are.
  std::map<core::JobId, int> seen;
  for (const Placement& p : d.placements) seen[p.job]++;
  for (const Pending& p : d.pending) seen[p.job]++;
  for (const auto& [job, count] : seen) {
    if (!pending.count(job)) bad.push_back(cat("job ", job.value, " is not pending"));
    if (count > 1) bad.push_back(cat("job ", job.value, " decided ", count, " times"));
  }
  for (const auto& [job, p] : pending) {
    if (!seen.count(job)) bad.push_back(cat("job ", job.value, " got no decision"));
  }
  for (size_t i = 0; i < d.pending.size(); ++i) {
    if (d.pending[i].position != static_cast<std::int32_t>(i) + 1) {
      bad.push_back(cat("pending job ", d.pending[i].job.value, " has position ",
                        d.pending[i].position, ", expected ", i + 1));
    }
    if (d.pending[i].reason.empty()) {
      bad.push_back(cat("pending job ", d.pending[i].job.value, " has no reason"));
    }
  }

  // 2. GPU ownership: what running jobs hold, then each placement.
  std::set<GpuRef> held;
  std::map<std::pair<TenantIx, TypeIx>, std::int64_t> tenant_used;
  std::map<NodeIx, std::pair<std::int64_t, std::int64_t>> node_use;  // cpus, memory
  std::map<RackIx, std::int64_t> rack_watts;
  const auto account = [&](const JobRequest& r, const GpuRef& g, NodeIx node) {
    const TypeIx type = s.topo()[node].type;
    tenant_used[{*s.find_tenant(r.tenant), type}] += 1;
    node_use[node].first += r.cpus_per_gpu;
    node_use[node].second += r.memory_per_gpu_mib;
    rack_watts[s.topo()[node].rack] += s.gpu_types()[type].tdp_watts;
    (void)g;
  };
  for (const RunningJob& r : s.running()) {
    for (const GpuRef& g : r.gpus) {
      held.insert(g);
      account(r.request, g, *s.find_node(g.node));
    }
  }
  std::set<std::pair<TenantIx, TypeIx>> grew;
  std::set<NodeIx> touched_nodes;
  std::set<RackIx> touched_racks;
  for (const Placement& p : d.placements) {
    const auto it = pending.find(p.job);
    if (it == pending.end()) continue;
    const JobRequest& r = it->second->request;
    const std::string job = cat("job ", p.job.value);
    if (static_cast<std::int32_t>(p.gpus.size()) != r.gpus) {
      bad.push_back(cat(job, " asked for ", r.gpus, " GPUs but got ", p.gpus.size()));
    }
    if (!r.gpu_types.empty() &&
        std::find(r.gpu_types.begin(), r.gpu_types.end(), p.gpu_type) == r.gpu_types.end()) {
      bad.push_back(cat(job, " placed on unacceptable type ", p.gpu_type.value));
    }
    std::map<NodeIx, std::uint64_t> masks;
    bool all_known = true;
    for (const GpuRef& g : p.gpus) {
      const auto node = s.find_node(g.node);
      if (!node || g.index < 0 ||
          g.index >= static_cast<std::int32_t>(s.nodes()[*node].gpus.size())) {
        bad.push_back(cat(job, " placed on unknown GPU ", gpu_text(g)));
        all_known = false;
        continue;
      }
      if (!held.insert(g).second) bad.push_back(cat("GPU ", gpu_text(g), " given twice"));
      const core::Node& n = s.nodes()[*node];
      if (!n.gpus[g.index].healthy)
        bad.push_back(cat(job, " placed on unhealthy GPU ", gpu_text(g)));
      if (n.admin != core::NodeAdminState::kActive) {
        bad.push_back(cat(job, " placed on ", core::to_string(n.admin), " node ", n.id.value));
      }
      if (n.gpus[g.index].type != p.gpu_type) {
        bad.push_back(cat(job, " GPU ", gpu_text(g), " is not of type ", p.gpu_type.value));
      }
      masks[*node] |= std::uint64_t{1} << g.index;
      account(r, g, *node);
      grew.insert({*s.find_tenant(r.tenant), s.topo()[*node].type});
      touched_nodes.insert(*node);
      touched_racks.insert(s.topo()[*node].rack);
    }
    if (!all_known) continue;
    std::vector<detail::Plan::Take> takes;
    for (const auto& [node, mask] : masks) takes.push_back({node, mask});
    if (r.gpus_per_node > 0) {
      for (const auto& t : takes) {
        if (std::popcount(t.mask) != r.gpus_per_node) {
          bad.push_back(cat(job, " has ", std::popcount(t.mask), " GPUs on ",
                            s.nodes()[t.node].id.value, ", asked for ", r.gpus_per_node,
                            " per node"));
        }
      }
    }
    if (r.topology.mode == core::TopologyMode::kRequired &&
        !detail::satisfies(s, takes, r.topology.pack)) {
      bad.push_back(cat(job, " requires pack ", core::to_string(r.topology.pack),
                        " but is packed at ", core::to_string(detail::packed_level(s, takes))));
    }
    // Borrowed flag: the tenant's total on this type after this placement.
    const TenantIx tenant = *s.find_tenant(r.tenant);
    const TypeIx type = takes.empty() ? -1 : s.topo()[takes[0].node].type;
    if (type >= 0) {
      const core::Quota& q = s.tenants()[tenant].quota_for(s.gpu_types()[type].id);
      const bool beyond = tenant_used[{tenant, type}] > q.guaranteed;
      if (beyond && !p.borrowed) {
        bad.push_back(cat(job, " goes beyond its tenant's guarantee but is not marked borrowed"));
      }
    }
  }

  // 3. Limits, checked where this decision added something.
  for (const auto& [key, used] : tenant_used) {
    if (!grew.count(key)) continue;
    const core::Tenant& t = s.tenants()[key.first];
    const core::Quota& q = t.quota_for(s.gpu_types()[key.second].id);
    if (used > q.max_total()) {
      bad.push_back(cat("tenant ", t.id.value, " holds ", used, " ",
                        s.gpu_types()[key.second].id.value, ", past its limit of ", q.max_total()));
    }
  }
  for (NodeIx node : touched_nodes) {
    const core::Node& n = s.nodes()[node];
    const auto [cpus, mem] = node_use[node];
    if (n.cpus > 0 && cpus > n.cpus) {
      bad.push_back(cat("node ", n.id.value, " CPUs overcommitted: ", cpus, " of ", n.cpus));
    }
    if (n.memory_mib > 0 && mem > n.memory_mib) {
      bad.push_back(
          cat("node ", n.id.value, " memory overcommitted: ", mem, " of ", n.memory_mib, " MiB"));
    }
  }
  for (RackIx rack : touched_racks) {
    const std::int64_t cap = s.rack_power_cap_watts(rack);
    if (cap > 0 && rack_watts[rack] > cap) {
      bad.push_back(cat("rack ", s.rack_name(rack), " power ", rack_watts[rack], " W past its cap ",
                        cap, " W"));
    }
  }
  return bad;
}

}  // namespace corral::sched
