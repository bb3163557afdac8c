#include "testing/random_fleet.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/check.h"
#include "core/gpu_type.h"
#include "sched/decide.h"

namespace corral::testing {

std::vector<std::uint64_t> property_seeds(std::uint64_t base, int default_count) {
  if (const char* one = std::getenv("CORRAL_SEED")) return {std::strtoull(one, nullptr, 10)};
  int count = default_count;
  if (const char* n = std::getenv("CORRAL_PROPERTY_CASES")) count = std::atoi(n);
  std::vector<std::uint64_t> out;
  for (int i = 0; i < count; ++i) out.push_back(base + static_cast<std::uint64_t>(i));
  return out;
}

std::uint64_t Rng::next() {
  std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::int64_t Rng::uniform(std::int64_t lo, std::int64_t hi) {
  CORRAL_CHECK(lo <= hi);
  const std::uint64_t span = static_cast<std::uint64_t>(hi - lo) + 1;
  return lo + static_cast<std::int64_t>(next() % span);
}

bool Rng::chance(double p) { return static_cast<double>(next() >> 11) * 0x1.0p-53 < p; }

sched::SnapshotInput random_fleet(Rng& rng, const FleetShape& shape) {
  sched::SnapshotInput in;
  static const char* kTypes[] = {"H100", "A100-80GB", "L40S", "H200", "T4", "B200"};
  const std::int32_t type_count = std::min<std::int32_t>(shape.gpu_types, 6);
  for (std::int32_t t = 0; t < type_count; ++t) {
    in.gpu_types.push_back(*core::find_builtin_gpu_type(kTypes[t]));
  }
  std::int32_t nvl_nodes = static_cast<std::int32_t>(shape.nodes * shape.nvl_rack_fraction);
  for (std::int32_t i = 0; i < shape.nodes; ++i) {
    core::Node n;
    n.id = core::NodeId("node" + std::to_string(100000 + i));
    const std::int32_t leaf = i * shape.leaves / shape.nodes;
    const std::int32_t spine = leaf * shape.spines / shape.leaves;
    n.labels = {.region = shape.regions > 1
                              ? "region" + std::to_string(i * shape.regions / shape.nodes)
                              : std::string("local"),
                .cluster = "c1",
                .spine = "s" + std::to_string(spine),
                .leaf = "l" + std::to_string(leaf),
                .rack = "rack" + std::to_string(i / 4)};
    const char* type = kTypes[(leaf + i / 7) % type_count];
    std::int32_t gpus = 8, domain = 8;
    if (i < nvl_nodes) {
      type = "GB200";
      gpus = 4;
      domain = 4;
      n.labels.nvlink_rack = "nvl" + std::to_string(i / 8);
      n.labels.rack = n.labels.nvlink_rack;
    } else if (shape.mixed_node_shapes) {
      const auto r = rng.uniform(0, 9);
      if (r == 0) domain = 2;  // PCIe with NVLink pairs
      if (r == 1) gpus = domain = 4;
    }
    for (std::int32_t g = 0; g < gpus; ++g) {
      n.gpus.push_back({.index = g,
                        .uuid = n.id.value + "-" + std::to_string(g),
                        .type = core::GpuTypeId(type),
                        .nvlink_domain = g / domain,
                        .numa_node = g * 2 / gpus,
                        .healthy = !rng.chance(shape.unhealthy_gpu_fraction)});
    }
    // With rack caps, every third node reports a power limit below its type's TDP (PCIe
    // parts, or capped by the admin), so that racks count per node, not per type. Derived
    // from the index: drawing it would change every seed's fleet.
    if (shape.rack_power_caps && i % 3 == 1) {
      const std::int64_t tdp = core::find_builtin_gpu_type(type)->tdp_watts;
      for (core::Gpu& g : n.gpus) {
        g.power_limit_watts = static_cast<std::int32_t>(tdp * (6 + i % 5) / 10);
      }
    }
    if (rng.chance(shape.cordoned_node_fraction)) {
      n.admin = rng.chance(0.5) ? core::NodeAdminState::kCordoned : core::NodeAdminState::kDraining;
    }
    if (shape.cpu_limits) {
      n.cpus = static_cast<std::int32_t>(rng.uniform(gpus * 4, gpus * 16));
      n.memory_mib = rng.uniform(gpus * 32, gpus * 256) * 1024;
    }
    in.nodes.push_back(std::move(n));
  }
  if (nvl_nodes > 0 && std::none_of(in.gpu_types.begin(), in.gpu_types.end(),
                                    [](const core::GpuType& t) { return t.id.value == "GB200"; })) {
    in.gpu_types.push_back(*core::find_builtin_gpu_type("GB200"));
  }
  if (shape.rack_power_caps) {
    for (std::int32_t r = 0; r * 4 < shape.nodes; ++r) {
      // Between half and all of four 8-GPU nodes at 700 W each.
      if (rng.chance(0.5)) {
        in.racks.push_back(
            {.name = "rack" + std::to_string(r), .power_cap_watts = rng.uniform(11'200, 22'400)});
      }
    }
  }
  const std::int32_t reservations = static_cast<std::int32_t>(rng.uniform(0, shape.reservations));
  for (std::int32_t r = 0; r < reservations; ++r) {
    const std::int64_t start = rng.uniform(0, 3) * 3'600'000;
    core::Reservation res{
        .id = core::ReservationId("res" + std::to_string(r)),
        .tenant = core::TenantId("tenant" + std::to_string(rng.uniform(0, shape.tenants - 1))),
        .start = core::time_from_ms(start),
        .end = core::time_from_ms(start + rng.uniform(1, 4) * 3'600'000)};
    if (rng.chance(0.5)) {
      res.gpu_type = in.gpu_types[0].id;
      res.count = static_cast<std::int32_t>(rng.uniform(1, 16));
    } else {
      res.nodes.push_back(in.nodes[rng.uniform(0, shape.nodes - 1)].id);
    }
    in.reservations.push_back(std::move(res));
  }
  for (std::int32_t o = 0; o < shape.org_tenants; ++o) {
    in.tenants.push_back({.id = core::TenantId("org" + std::to_string(o)),
                          .weight = static_cast<double>(rng.uniform(1, 4))});
  }
  for (std::int32_t t = 0; t < shape.tenants; ++t) {
    core::Tenant tenant{.id = core::TenantId("tenant" + std::to_string(t)),
                        .weight = static_cast<double>(rng.uniform(1, 4))};
    if (shape.org_tenants > 0 && rng.chance(0.7)) {
      tenant.parent = core::TenantId("org" + std::to_string(rng.uniform(0, shape.org_tenants - 1)));
    }
    if (shape.quotas) {
      for (const core::GpuType& type : in.gpu_types) {
        if (rng.chance(0.6)) {
          // Whole GPUs mostly, a guarantee with a fraction (2.5) at times.
          tenant.quotas[type.id] = {
              .guaranteed_milli =
                  1000 * rng.uniform(0, 32) + (rng.chance(0.2) ? rng.uniform(1, 999) : 0),
              .borrow_limit_milli = rng.chance(0.2) ? 0 : 1000 * rng.uniform(0, 64)};
        }
      }
    }
    in.usage[tenant.id] = static_cast<double>(rng.uniform(0, 1'000'000));
    in.tenants.push_back(std::move(tenant));
  }
  return in;
}

std::vector<sched::PendingJob> random_jobs(Rng& rng, const sched::SnapshotInput& fleet,
                                           const WorkloadShape& shape, std::int64_t first_id,
                                           std::int32_t count) {
  std::vector<core::TenantId> leaves;
  for (const core::Tenant& t : fleet.tenants) {
    const bool is_parent = std::any_of(fleet.tenants.begin(), fleet.tenants.end(),
                                       [&](const core::Tenant& c) { return c.parent == t.id; });
    if (!is_parent) leaves.push_back(t.id);
  }
  CORRAL_CHECK(!leaves.empty());
  std::vector<std::string> regions;
  for (const core::Node& n : fleet.nodes) {
    if (std::ranges::count(regions, n.labels.region) == 0) regions.push_back(n.labels.region);
  }
  std::vector<sched::PendingJob> jobs;
  for (std::int32_t i = 0; i < count; ++i) {
    sched::JobRequest r;
    r.id = core::JobId(first_id + i);
    r.tenant = leaves[rng.uniform(0, static_cast<std::int64_t>(leaves.size()) - 1)];
    r.tier = static_cast<std::int32_t>(rng.uniform(0, shape.tiers - 1));
    // Mostly small jobs, some whole nodes, a few large gangs.
    const auto size_class = rng.uniform(0, 99);
    if (size_class < 40)
      r.gpus = 1;
    else if (size_class < 60)
      r.gpus = 1 << rng.uniform(1, 2);
    else if (size_class < 80)
      r.gpus = 8;
    else if (size_class < 95)
      r.gpus = 8 << rng.uniform(1, 3);
    else
      r.gpus = 8 << rng.uniform(4, 6);
    r.gpus = std::min(r.gpus, shape.max_gpus);
    if (r.gpus >= 8 && r.gpus % 8 == 0 && rng.chance(0.5)) r.gpus_per_node = 8;
    if (rng.chance(0.5)) {
      const auto& types = fleet.gpu_types;
      r.gpu_types.push_back(types[rng.uniform(0, static_cast<std::int64_t>(types.size()) - 1)].id);
      if (rng.chance(0.3)) {
        const auto& other = types[rng.uniform(0, static_cast<std::int64_t>(types.size()) - 1)].id;
        if (other != r.gpu_types[0]) r.gpu_types.push_back(other);
      }
    }
    static constexpr core::PackLevel kPacks[] = {core::PackLevel::kNvlink, core::PackLevel::kNode,
                                                 core::PackLevel::kLeaf, core::PackLevel::kSpine,
                                                 core::PackLevel::kNone};
    r.topology.pack = kPacks[rng.uniform(0, 4)];
    r.topology.mode =
        rng.chance(0.3) ? core::TopologyMode::kRequired : core::TopologyMode::kPreferred;
    r.cpus_per_gpu = static_cast<std::int32_t>(rng.uniform(0, 8));
    r.memory_per_gpu_mib = rng.uniform(0, 64) * 1024;
    r.preemptible = rng.chance(0.3);
    r.max_runtime = core::seconds(rng.uniform(600, 3 * 86400));
    if (rng.chance(0.5)) {
      r.checkpoint_interval = core::seconds(rng.uniform(5, 60) * 60);
      r.restore_time = core::seconds(rng.uniform(0, 300));
    }
    if (r.gpus >= 2 && rng.chance(shape.elastic_fraction)) {
      const std::int32_t step = r.gpus_per_node > 0 ? r.gpus_per_node : 1;
      r.elastic = core::ElasticRange{.min_gpus = std::max(step, r.gpus / 2 / step * step),
                                     .max_gpus = r.gpus * 2,
                                     .step = core::ElasticStep::kMultiple,
                                     .step_multiple = step};
    }
    if (!fleet.reservations.empty() && rng.chance(shape.reservation_fraction)) {
      const auto& res = fleet.reservations[rng.uniform(
          0, static_cast<std::int64_t>(fleet.reservations.size()) - 1)];
      r.reservation = res.id;
      if (rng.chance(0.8)) r.tenant = res.tenant;
    }
    // Speeds by type for some jobs: on the types they accept, some types left out.
    if (shape.speed_fraction > 0 && rng.chance(shape.speed_fraction)) {
      for (const core::GpuType& t : fleet.gpu_types) {
        const bool accepted = r.gpu_types.empty() || std::ranges::count(r.gpu_types, t.id) > 0;
        if (accepted && rng.chance(0.8)) {
          r.gpu_speed[t.id] = static_cast<double>(rng.uniform(1, 1000)) / 100;
        }
      }
    }
    // Drawn only when asked for, so fleets without regions see the same jobs as before.
    if (shape.region_fraction > 0 && rng.chance(shape.region_fraction)) {
      r.region = rng.chance(0.1)
                     ? std::string("nowhere")
                     : regions[rng.uniform(0, static_cast<std::int64_t>(regions.size()) - 1)];
    }
    jobs.push_back({.request = std::move(r),
                    .queued_at = core::time_from_ms(rng.uniform(0, 3'600'000)),
                    .attempt = 0});
  }
  return jobs;
}

sched::SnapshotInput random_workload(Rng& rng, sched::SnapshotInput fleet,
                                     const WorkloadShape& shape) {
  // Place the would-be running jobs with decide() itself, then turn placements into
  // running jobs: the running state is consistent by construction.
  fleet.pending = random_jobs(rng, fleet, shape, 1, shape.running);
  auto empty = sched::build_snapshot(fleet);
  if (!empty.ok())
    std::fprintf(stderr, "random_workload: %s\n", empty.status().to_string().c_str());
  CORRAL_CHECK(empty.ok());
  const sched::Decisions placed = sched::decide(*empty, sched::SchedulerConfig{}, core::Time{});
  std::map<core::JobId, const sched::PendingJob*> by_id;
  for (const auto& p : fleet.pending) by_id[p.request.id] = &p;
  for (const sched::Placement& p : placed.placements) {
    sched::RunningJob r{.request = by_id[p.job]->request,
                        .started_at = core::time_from_ms(rng.uniform(0, 3'600'000)),
                        .preemptions = static_cast<std::int32_t>(rng.uniform(0, 3)),
                        .gpus = p.gpus,
                        .borrowed = p.borrowed,
                        .stopping = rng.chance(shape.stopping_fraction),
                        .reservation = p.reservation};
    if (r.request.checkpoint_interval.count() > 0) {
      r.last_checkpoint_at = r.started_at + core::Duration(rng.uniform(0, 1'800'000));
    }
    fleet.running.push_back(std::move(r));
  }
  fleet.pending = random_jobs(rng, fleet, shape, 1'000'000, shape.pending);
  return fleet;
}

}  // namespace corral::testing
