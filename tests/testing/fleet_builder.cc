#include "testing/fleet_builder.h"

#include <cstdio>
#include <set>

namespace corral::testing {

FleetBuilder& FleetBuilder::node(const std::string& name, const std::string& type,
                                 std::int32_t gpus, std::int32_t domain_size, const Where& where) {
  core::Node n;
  n.id = core::NodeId(name);
  n.labels = {.region = where.region,
              .cluster = where.cluster,
              .spine = where.spine,
              .leaf = where.leaf,
              .rack = where.rack,
              .nvlink_rack = where.nvl_rack};
  for (std::int32_t i = 0; i < gpus; ++i) {
    n.gpus.push_back({.index = i,
                      .uuid = name + "-gpu" + std::to_string(i),
                      .type = core::GpuTypeId(type),
                      .nvlink_domain = i / domain_size,
                      .numa_node = i < gpus / 2 ? 0 : 1});
  }
  nodes_.push_back(std::move(n));
  return *this;
}

FleetBuilder& FleetBuilder::nvl_rack(const std::string& rack, std::int32_t trays,
                                     const Where& where) {
  Where w = where;
  w.rack = rack;
  w.nvl_rack = rack;
  for (std::int32_t t = 0; t < trays; ++t) {
    node(rack + "-tray" + (t < 10 ? "0" : "") + std::to_string(t), "GB200", 4, 4, w);
  }
  return *this;
}

core::Node& FleetBuilder::find(const std::string& name) {
  for (core::Node& n : nodes_) {
    if (n.id.value == name) return n;
  }
  CORRAL_CHECK(false && "no such node");
  __builtin_unreachable();
}

FleetBuilder& FleetBuilder::unhealthy(const std::string& node, std::int32_t gpu) {
  find(node).gpus.at(gpu).healthy = false;
  return *this;
}

FleetBuilder& FleetBuilder::admin(const std::string& node, core::NodeAdminState state) {
  find(node).admin = state;
  return *this;
}

FleetBuilder& FleetBuilder::lost(const std::string& node) {
  find(node).lost = true;
  return *this;
}

FleetBuilder& FleetBuilder::cpus(const std::string& node, std::int32_t cpus,
                                 std::int64_t memory_mib) {
  find(node).cpus = cpus;
  find(node).memory_mib = memory_mib;
  return *this;
}

FleetBuilder& FleetBuilder::rack_cap(const std::string& rack, std::int64_t watts) {
  racks_[rack] = {.name = rack, .power_cap_watts = watts};
  return *this;
}

FleetBuilder& FleetBuilder::power_limit(const std::string& node, std::int32_t watts) {
  for (core::Gpu& g : find(node).gpus) g.power_limit_watts = watts;
  return *this;
}

void FleetBuilder::ensure_tenant(const core::TenantId& id) {
  if (!tenants_.count(id)) tenants_[id] = core::Tenant{.id = id};
}

FleetBuilder& FleetBuilder::tenant(const std::string& name, double weight,
                                   std::optional<std::string> parent) {
  const core::TenantId id(name);
  ensure_tenant(id);
  tenants_[id].weight = weight;
  if (parent) {
    ensure_tenant(core::TenantId(*parent));
    tenants_[id].parent = core::TenantId(*parent);
  }
  return *this;
}

FleetBuilder& FleetBuilder::quota(const std::string& tenant, const std::string& type,
                                  std::int64_t guaranteed, std::int64_t borrow_limit) {
  const core::TenantId id(tenant);
  ensure_tenant(id);
  tenants_[id].quotas[core::GpuTypeId(type)] = core::Quota::gpus(guaranteed, borrow_limit);
  return *this;
}

FleetBuilder& FleetBuilder::quota_milli(const std::string& tenant, const std::string& type,
                                        std::int64_t guaranteed_milli,
                                        std::int64_t borrow_limit_milli) {
  const core::TenantId id(tenant);
  ensure_tenant(id);
  tenants_[id].quotas[core::GpuTypeId(type)] = {.guaranteed_milli = guaranteed_milli,
                                                .borrow_limit_milli = borrow_limit_milli};
  return *this;
}

FleetBuilder& FleetBuilder::default_quota(const std::string& tenant, std::int64_t guaranteed,
                                          std::int64_t borrow_limit) {
  const core::TenantId id(tenant);
  ensure_tenant(id);
  tenants_[id].default_quota = core::Quota::gpus(guaranteed, borrow_limit);
  return *this;
}

FleetBuilder& FleetBuilder::class_cap(const std::string& tenant, std::int32_t tier,
                                      std::int64_t max_gpus) {
  const core::TenantId id(tenant);
  ensure_tenant(id);
  tenants_[id].max_gpus_by_tier[tier] = max_gpus;
  return *this;
}

FleetBuilder& FleetBuilder::usage(const std::string& tenant, double weighted_gpu_seconds) {
  ensure_tenant(core::TenantId(tenant));
  usage_[core::TenantId(tenant)] = weighted_gpu_seconds;
  return *this;
}

FleetBuilder& FleetBuilder::pending(const JobBuilder& job) {
  ensure_tenant(job.request().tenant);
  pending_.push_back(job.pending());
  return *this;
}

FleetBuilder& FleetBuilder::running(const JobBuilder& job,
                                    std::vector<std::pair<std::string, std::int32_t>> gpus,
                                    bool borrowed) {
  ensure_tenant(job.request().tenant);
  // A running job that names a reservation was placed inside it.
  sched::RunningJob r{
      .request = job.request(), .borrowed = borrowed, .reservation = job.request().reservation};
  for (auto& [node, index] : gpus) r.gpus.push_back({core::NodeId(node), index});
  running_.push_back(std::move(r));
  return *this;
}

FleetBuilder& FleetBuilder::reservation(const std::string& name, const std::string& tenant,
                                        const std::string& type, std::int32_t count,
                                        std::int64_t start_ms, std::int64_t end_ms) {
  ensure_tenant(core::TenantId(tenant));
  reservations_.push_back({.id = core::ReservationId(name),
                           .tenant = core::TenantId(tenant),
                           .gpu_type = core::GpuTypeId(type),
                           .count = count,
                           .start = core::time_from_ms(start_ms),
                           .end = core::time_from_ms(end_ms)});
  return *this;
}

FleetBuilder& FleetBuilder::reservation_nodes(const std::string& name, const std::string& tenant,
                                              std::vector<std::string> nodes, std::int64_t start_ms,
                                              std::int64_t end_ms) {
  ensure_tenant(core::TenantId(tenant));
  core::Reservation r{.id = core::ReservationId(name),
                      .tenant = core::TenantId(tenant),
                      .start = core::time_from_ms(start_ms),
                      .end = core::time_from_ms(end_ms)};
  for (auto& n : nodes) r.nodes.emplace_back(n);
  reservations_.push_back(std::move(r));
  return *this;
}

FleetBuilder& FleetBuilder::run_state(std::int64_t id, const RunState& state) {
  for (sched::RunningJob& r : running_) {
    if (r.request.id.value != id) continue;
    r.started_at = core::time_from_ms(state.started_ms);
    if (state.checkpoint_ms) r.last_checkpoint_at = core::time_from_ms(*state.checkpoint_ms);
    r.preemptions = state.preemptions;
    r.stopping = state.stopping;
    return *this;
  }
  CORRAL_CHECK(false && "no such running job");
  return *this;
}

sched::SnapshotInput FleetBuilder::input() const {
  sched::SnapshotInput in;
  std::set<std::string> types;
  for (const core::Node& n : nodes_) {
    for (const core::Gpu& g : n.gpus) types.insert(g.type.value);
  }
  for (const auto& j : pending_) {
    for (const auto& t : j.request.gpu_types) types.insert(t.value);
  }
  for (const std::string& t : types) {
    const auto type = core::find_builtin_gpu_type(t);
    CORRAL_CHECK(type.has_value());
    in.gpu_types.push_back(*type);
  }
  in.nodes = nodes_;
  for (const auto& [name, rack] : racks_) in.racks.push_back(rack);
  for (const auto& [id, t] : tenants_) in.tenants.push_back(t);
  in.usage = usage_;
  in.pending = pending_;
  in.running = running_;
  in.reservations = reservations_;
  return in;
}

sched::ClusterSnapshot FleetBuilder::build() const {
  auto s = sched::build_snapshot(input());
  if (!s.ok()) {
    std::fprintf(stderr, "FleetBuilder: %s\n", s.status().to_string().c_str());
  }
  CORRAL_CHECK(s.ok());
  return std::move(s).value();
}

}  // namespace corral::testing
