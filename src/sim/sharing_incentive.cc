#include "sim/sharing_incentive.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace corral::sim {
namespace {

// GPUs of each type the tenant owns alone: its guarantee where it has one (a fraction
// rounded down: a GPU it shares with others is not its own), else its entitlement of the
// type, rounded; at least one.
std::map<core::GpuTypeId, std::int64_t> share_of(const Fleet& fleet, const core::Tenant& t,
                                                 double entitlement) {
  bool guaranteed = false;
  for (const core::GpuType& type : fleet.gpu_types) {
    guaranteed = guaranteed || t.quota_for(type.id).guaranteed_milli > 0;
  }
  std::map<core::GpuTypeId, std::int64_t> out;
  for (const core::GpuType& type : fleet.gpu_types) {
    const std::int64_t total = fleet.gpus_of_type(type.id);
    const std::int64_t share = guaranteed ? t.quota_for(type.id).guaranteed_milli / 1000
                                          : std::llround(entitlement * static_cast<double>(total));
    out[type.id] = std::clamp<std::int64_t>(share, 1, total);
  }
  return out;
}

// The fleet cut to `share`: each type's nodes in order, whole while they fit, the last
// one with the GPUs that are left (its lowest indices), the rest dropped.
Fleet partition(const Fleet& fleet, std::map<core::GpuTypeId, std::int64_t> share) {
  Fleet out = fleet;
  out.nodes.clear();
  for (core::Node node : fleet.nodes) {
    if (node.gpus.empty()) continue;
    std::int64_t& left = share[node.gpus.front().type];
    if (left <= 0) continue;
    if (static_cast<std::int64_t>(node.gpus.size()) > left) {
      node.gpus.resize(static_cast<std::size_t>(left));
    }
    left -= static_cast<std::int64_t>(node.gpus.size());
    out.nodes.push_back(std::move(node));
  }
  return out;
}

}  // namespace

core::Status add_sharing_incentive(const Fleet& fleet, const Workload& workload,
                                   const Policy& policy, const EngineOptions& options,
                                   const RunResult& shared, Metrics& m) {
  for (TenantMetrics& tm : m.tenants) {
    if (tm.mean_jct_s <= 0) continue;
    const auto t = std::find_if(shared.tenants.begin(), shared.tenants.end(),
                                [&](const core::Tenant& x) { return x.id == tm.id; });
    if (t == shared.tenants.end()) continue;
    // Only capacity and jobs differ from the shared run: the tenants and their rules stay.
    const std::map<core::GpuTypeId, std::int64_t> share = share_of(fleet, *t, tm.entitlement);
    const Fleet alone = partition(fleet, share);
    const std::int64_t cap = std::max_element(share.begin(), share.end(), [](auto& a, auto& b) {
                               return a.second < b.second;
                             })->second;
    // A job larger than the share runs on all of it for proportionally longer (its own
    // partition would time-slice it): the same GPU-time, so it is neither dropped nor
    // given GPUs the tenant does not own.
    Workload mine{.source = workload.source};
    for (const TraceJob& j : workload.jobs) {
      if (j.tenant != tm.id) continue;
      TraceJob& copy = mine.jobs.emplace_back(j);
      if (copy.gpus <= cap) continue;
      copy.duration_ms = copy.duration_ms * copy.gpus / cap;
      copy.gpus = static_cast<std::int32_t>(cap);
      copy.gpus_per_node = 0;
      copy.profile.reset();
      copy.elastic_profile.reset();
    }
    CORRAL_ASSIGN_OR_RETURN(const RunResult run, simulate(alone, mine, policy, options));
    double sum = 0;
    std::int64_t finished = 0;
    for (const JobResult& j : run.jobs) {
      if (j.finish_ms < 0) continue;
      sum += static_cast<double>(j.finish_ms - j.submit_ms) / 1000.0;
      ++finished;
    }
    if (finished > 0) tm.sharing_incentive = sum / static_cast<double>(finished) / tm.mean_jct_s;
  }
  return core::ok_status();
}

}  // namespace corral::sim
