// Shares of a GPU over seeded random fleets: whole-GPU jobs and shares running and
// queued together, under every share rule. Each case prints its seed on failure;
// CORRAL_SEED=<seed> replays it.
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "sched/check.h"
#include "sched/decide.h"
#include "testing/random_fleet.h"

namespace corral::sched {
namespace {

using testing::FleetShape;
using testing::property_seeds;
using testing::Rng;
using testing::WorkloadShape;

constexpr SharePlacement kRules[] = {SharePlacement::kFragmentation, SharePlacement::kBestFit,
                                     SharePlacement::kPacking, SharePlacement::kRandom};

std::int64_t gpu_memory(const SnapshotInput& in, const core::NodeId& node, std::int32_t index) {
  for (const core::Node& n : in.nodes) {
    if (n.id != node) continue;
    for (const core::GpuType& t : in.gpu_types) {
      if (t.id == n.gpus[static_cast<std::size_t>(index)].type) return t.memory_mib;
    }
  }
  return 0;
}

// A random fleet and workload, plus running shares on GPUs no whole job holds (the shares
// on a GPU within its whole and its memory) and queued shares, some of them gangs of two or
// three shares when `gangs`.
SnapshotInput random_share_case(std::uint64_t seed, std::int32_t pending_shares, bool gangs) {
  Rng rng(seed);
  FleetShape fleet{.nodes = static_cast<std::int32_t>(rng.uniform(1, 12)),
                   .gpu_types = static_cast<std::int32_t>(rng.uniform(1, 2)),
                   .leaves = 1,
                   .spines = 1,
                   .tenants = static_cast<std::int32_t>(rng.uniform(1, 4)),
                   .unhealthy_gpu_fraction = rng.chance(0.3) ? 0.1 : 0.0,
                   .rack_power_caps = rng.chance(0.5),
                   .cpu_limits = rng.chance(0.5),
                   .quotas = rng.chance(0.7)};
  WorkloadShape work{.pending = static_cast<std::int32_t>(rng.uniform(0, 12)),
                     .running = static_cast<std::int32_t>(rng.uniform(0, 10)),
                     .max_gpus = 16};
  SnapshotInput in = testing::random_workload(rng, testing::random_fleet(rng, fleet), work);
  // What each GPU draws from its rack's cap, and what the racks draw now: a running share
  // is added only where its GPU already draws, or its rack has room for one more.
  const auto watts = [&](const core::NodeId& id) -> std::pair<std::string, std::int64_t> {
    for (const core::Node& n : in.nodes) {
      if (n.id != id) continue;
      for (const core::GpuType& t : in.gpu_types) {
        if (t.id == n.gpus.front().type) return {n.labels.rack, core::node_gpu_watts(n, t)};
      }
    }
    return {};
  };
  std::map<std::string, std::int64_t> rack_watts, rack_cap;
  for (const core::Rack& r : in.racks) rack_cap[r.name] = r.power_cap_watts;
  std::set<GpuRef> whole;
  for (const RunningJob& r : in.running) {
    whole.insert(r.gpus.begin(), r.gpus.end());
    for (const GpuRef& g : r.gpus) {
      const auto [rack, w] = watts(g.node);
      rack_watts[rack] += w;
    }
  }
  std::map<GpuRef, ShareUse> shared;
  const auto pick = [&](auto& list) -> auto& {
    return list[static_cast<std::size_t>(
        rng.uniform(0, static_cast<std::int64_t>(list.size()) - 1))];
  };
  // Leaf tenants only: a tenant with sub-tenants holds no jobs.
  std::set<core::TenantId> parents;
  for (const core::Tenant& t : in.tenants) {
    if (t.parent) parents.insert(*t.parent);
  }
  std::int64_t id = 100'000;
  const auto random_share = [&] {
    JobRequest r{.id = core::JobId(++id),
                 .tier = static_cast<std::int32_t>(rng.uniform(0, 2)),
                 .gpu_milli = static_cast<std::int32_t>(rng.chance(0.5) ? 250 * rng.uniform(1, 3)
                                                                        : rng.uniform(1, 999)),
                 .cpus_per_gpu = static_cast<std::int32_t>(rng.uniform(0, 8)),
                 .preemptible = rng.chance(0.5)};
    do {
      r.tenant = pick(in.tenants).id;
    } while (parents.count(r.tenant));
    if (rng.chance(0.5)) r.gpu_memory_mib = rng.uniform(1, 40) * 1024;
    if (rng.chance(0.3)) r.gpu_types = {in.gpu_types.front().id};
    return r;
  };
  for (std::int32_t i = 0, n = static_cast<std::int32_t>(rng.uniform(0, 16)); i < n; ++i) {
    const core::Node& node = pick(in.nodes);
    const GpuRef g{node.id, pick(node.gpus).index};
    JobRequest r = random_share();
    r.cpus_per_gpu = 0;  // the random fleet's CPUs are already spoken for by its jobs
    r.gpu_types.clear();
    ShareUse& use = shared[g];
    const auto [rack, w] = watts(g.node);
    const bool over_cap =
        use.milli == 0 && rack_cap[rack] > 0 && rack_watts[rack] + w > rack_cap[rack];
    if (whole.count(g) || over_cap || use.milli + r.gpu_milli > 1000 ||
        use.memory_mib + r.gpu_memory_mib > gpu_memory(in, g.node, g.index)) {
      continue;
    }
    if (use.milli == 0) rack_watts[rack] += w;
    use.milli += r.gpu_milli;
    use.memory_mib += r.gpu_memory_mib;
    in.running.push_back({.request = r, .gpus = {g}});
  }
  for (std::int32_t i = 0; i < pending_shares; ++i) {
    JobRequest r = random_share();
    if (gangs && rng.chance(0.25)) r.gpus = static_cast<std::int32_t>(rng.uniform(2, 3));
    in.pending.push_back({.request = r, .queued_at = core::time_from_ms(rng.uniform(0, 1000))});
  }
  return in;
}

// What the decisions leave on each GPU, counted independently of check.cc: no GPU both
// held whole and shared, the shares within the GPU and its memory, and every tenant that
// gained within guarantee + borrow limit, shares counted by their thousandths.
void expect_shares_fit(const ClusterSnapshot& s, const SnapshotInput& in, const Decisions& d) {
  std::map<core::JobId, const JobRequest*> requests;
  for (const RunningJob& r : s.running()) requests[r.request.id] = &r.request;
  for (const PendingJob& p : s.pending()) requests[p.request.id] = &p.request;
  std::set<core::JobId> stopped;
  for (const Preemption& p : d.preemptions) stopped.insert(p.victim);
  std::vector<std::pair<const JobRequest*, std::vector<GpuRef>>> holds;
  for (const RunningJob& r : s.running()) {
    if (stopped.count(r.request.id)) continue;  // its GPUs go to the job that waits for it
    holds.emplace_back(&r.request, r.gpus);
  }
  for (const Resize& r : d.resizes) {
    for (auto& [req, gpus] : holds) {
      if (req->id == r.job) gpus = r.gpus;
    }
  }
  for (const Placement& p : d.placements) holds.emplace_back(requests.at(p.job), p.gpus);

  std::map<GpuRef, ShareUse> shares;
  std::map<GpuRef, std::int32_t> wholes;
  std::map<std::pair<core::TenantId, core::GpuTypeId>, std::int64_t> milli;
  for (const auto& [r, gpus] : holds) {
    for (const GpuRef& g : gpus) {
      const core::Node& n = s.nodes()[*s.find_node(g.node)];
      milli[{r->tenant, n.gpus[static_cast<std::size_t>(g.index)].type}] +=
          is_share(*r) ? r->gpu_milli : 1000;
      if (is_share(*r)) {
        shares[g].milli += r->gpu_milli;
        shares[g].memory_mib += r->gpu_memory_mib;
      } else {
        ++wholes[g];
      }
    }
  }
  for (const auto& [g, n] : wholes) {
    EXPECT_EQ(n, 1) << "GPU " << g.node.value << "/" << g.index << " held whole twice";
    EXPECT_EQ(shares.count(g), 0u)
        << "GPU " << g.node.value << "/" << g.index << " held whole and shared";
  }
  for (const auto& [g, use] : shares) {
    EXPECT_LE(use.milli, 1000) << "GPU " << g.node.value << "/" << g.index;
    EXPECT_LE(use.memory_mib, gpu_memory(in, g.node, g.index))
        << "GPU " << g.node.value << "/" << g.index << " memory oversubscribed";
  }
  for (const Placement& p : d.placements) {
    const JobRequest& r = *requests.at(p.job);
    const core::Tenant& t = s.tenants()[*s.find_tenant(r.tenant)];
    const std::int64_t held = milli[std::make_pair(r.tenant, p.gpu_type)];
    EXPECT_LE(held, t.quota_for(p.gpu_type).max_total_milli())
        << "tenant " << r.tenant.value << " past its quota on " << p.gpu_type.value;
  }
}

TEST(ShareProperty, SharesNeverOverlapOrOversubscribeAndQuotasHold) {
  for (std::uint64_t seed : property_seeds(300'000, 600)) {
    SCOPED_TRACE("CORRAL_SEED=" + std::to_string(seed));
    const SnapshotInput in = random_share_case(seed, static_cast<std::int32_t>(seed % 20), true);
    auto s = build_snapshot(in);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    for (SharePlacement rule : kRules) {
      SchedulerConfig config;
      config.share_placement = rule;
      const Decisions d = decide(*s, config, core::Time{});
      for (const std::string& v : check(*s, d, config, core::Time{})) ADD_FAILURE() << v;
      expect_shares_fit(*s, in, d);
      EXPECT_EQ(to_json(d), to_json(decide(*s, config, core::Time{}))) << "not deterministic";
    }
    if (HasFailure()) return;
  }
}

// One queued share and nothing else to place: when decide() leaves it waiting for room,
// no usable GPU of an acceptable type has room for it, by a count made here.
TEST(ShareProperty, AShareNeverWaitsBesideAGpuWithRoomForIt) {
  for (std::uint64_t seed : property_seeds(310'000, 600)) {
    SCOPED_TRACE("CORRAL_SEED=" + std::to_string(seed));
    SnapshotInput in = random_share_case(seed, 1, false);
    std::erase_if(in.pending, [](const PendingJob& p) { return !is_share(p.request); });
    for (core::Tenant& t : in.tenants) {
      t.quotas.clear();
      t.default_quota = {};
    }
    for (core::Rack& r : in.racks) r.power_cap_watts = 0;
    auto s = build_snapshot(in);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    const JobRequest& r = s->pending().front().request;
    const Decisions d = decide(*s, SchedulerConfig{}, core::Time{});
    if (!d.placements.empty()) continue;
    ASSERT_EQ(d.pending.size(), 1u);
    std::map<GpuRef, ShareUse> used;
    std::set<GpuRef> whole;
    std::map<core::NodeId, std::pair<std::int64_t, std::int64_t>> node_use;  // cpus, memory
    for (const RunningJob& j : s->running()) {
      for (const GpuRef& g : j.gpus) {
        if (is_share(j.request)) {
          used[g].milli += j.request.gpu_milli;
          used[g].memory_mib += j.request.gpu_memory_mib;
        } else {
          whole.insert(g);
        }
        node_use[g.node].first += j.request.cpus_per_gpu;
        node_use[g.node].second += j.request.memory_per_gpu_mib;
      }
    }
    for (const core::Node& n : s->nodes()) {
      if (n.admin != core::NodeAdminState::kActive || n.lost) continue;
      if (n.cpus > 0 && n.cpus - node_use[n.id].first < r.cpus_per_gpu) continue;
      if (n.memory_mib > 0 && n.memory_mib - node_use[n.id].second < r.memory_per_gpu_mib) continue;
      for (const core::Gpu& gpu : n.gpus) {
        const GpuRef g{n.id, gpu.index};
        const bool type_ok = r.gpu_types.empty() || r.gpu_types.front() == gpu.type;
        const bool room = used[g].milli + r.gpu_milli <= 1000 &&
                          used[g].memory_mib + r.gpu_memory_mib <= gpu_memory(in, n.id, gpu.index);
        EXPECT_FALSE(gpu.healthy && type_ok && !whole.count(g) && room)
            << "share " << r.id.value << " (" << r.gpu_milli << "/1000, " << r.gpu_memory_mib
            << " MiB) waits (" << d.pending[0].reason << ") but GPU " << n.id.value << "/"
            << gpu.index << " has room";
      }
    }
    if (HasFailure()) return;
  }
}

}  // namespace
}  // namespace corral::sched
