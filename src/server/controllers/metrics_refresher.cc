#include "server/controllers/metrics_refresher.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "server/base/log.h"
#include "server/base/model_json.h"
#include "server/base/stored_documents.h"

namespace corral::server {

using core::Result;
using core::Status;

Result<RefreshedState> read_refreshed_state(store::Tx& tx, core::Time now) {
  RefreshedState state;
  state.refreshed_at_ms = core::to_ms(now);

  // 1. The fleet as registered: each GPU's type and UUID, and the types there are.
  CORRAL_ASSIGN_OR_RETURN(const auto node_rows, tx.nodes().list_nodes());
  std::vector<core::Node> nodes;
  nodes.reserve(node_rows.size());
  std::set<std::string> fleet_types;
  for (auto& [row, node] : stored_nodes(node_rows)) {
    for (const auto& g : node.gpus) fleet_types.insert(g.type.value);
    state.fleet_gpus += static_cast<std::int64_t>(node.gpus.size());
    nodes.push_back(std::move(node));
  }

  // 2. Who holds what: active allocations and their jobs' tenants.
  CORRAL_ASSIGN_OR_RETURN(const auto allocs, tx.allocations().list_active_allocations());
  CORRAL_ASSIGN_OR_RETURN(const auto holders, tx.jobs().list_jobs_holding_gpus());
  std::map<std::int64_t, std::string> tenant_of;
  for (const auto& j : holders) tenant_of[j.id.value] = j.tenant.value;
  std::map<std::pair<std::string, std::int32_t>, const store::AllocationRow*> held;
  // (tenant, type) -> thousandths of a GPU held (a share counts its share)
  std::map<std::pair<std::string, std::string>, std::int64_t> usage;
  for (const auto& a : allocs) {
    // A GPU of shares is labelled with its largest share's job, as DCGM's exporter gives a
    // shared GPU one pod; the tenants' gauges above count every share.
    auto [h, fresh] = held.try_emplace({a.node.value, a.gpu_index}, &a);
    if (!fresh && a.milli() > h->second->milli()) h->second = &a;
    const auto t = tenant_of.find(a.job.value);
    if (t == tenant_of.end()) continue;
    usage[{t->second, a.gpu_type.value}] += a.milli();
  }

  // 3. Per tenant: every type it has a quota for, holds, or is guaranteed by default.
  CORRAL_ASSIGN_OR_RETURN(const auto tenants, tx.tenants().list_tenants());
  std::map<std::string, core::Tenant> configured;
  for (const TenantConfig& cfg : stored_tenants(tenants)) {
    configured.emplace(cfg.tenant.id.value, cfg.tenant);
  }
  std::set<std::string> tenant_names;
  for (const auto& row : tenants) {
    tenant_names.insert(row.id.value);
    CORRAL_ASSIGN_OR_RETURN(const std::int64_t pending, tx.jobs().count_pending_jobs(row.id));
    state.pending.emplace_back(row.id.value, pending);
    const auto cfg = configured.find(row.id.value);
    const core::Tenant* tenant = cfg == configured.end() ? nullptr : &cfg->second;
    std::set<std::string> types;
    if (tenant != nullptr) {
      for (const auto& [type, q] : tenant->quotas) types.insert(type.value);
      if (tenant->default_quota.guaranteed_milli > 0) {
        types.insert(fleet_types.begin(), fleet_types.end());
      }
    }
    for (auto it = usage.lower_bound({row.id.value, ""});
         it != usage.end() && it->first.first == row.id.value; ++it) {
      types.insert(it->first.second);
    }
    for (const std::string& type : types) {
      TenantGpuGauge g{.tenant = row.id.value, .gpu_type = type};
      if (const auto u = usage.find({row.id.value, type}); u != usage.end())
        g.allocated = static_cast<double>(u->second) / 1000;
      if (tenant != nullptr) {
        g.guaranteed =
            static_cast<double>(tenant->quota_for(core::GpuTypeId(type)).guaranteed_milli) / 1000;
      }
      // Borrowed as admission counts it: what the tenant holds beyond its guarantee (a
      // placement's `borrowed` flag marks the whole gang, not the GPUs past the line).
      g.borrowed = std::max(0.0, g.allocated - g.guaranteed);
      state.tenant_gpus.push_back(std::move(g));
    }
  }
  // A holder whose tenant row is gone still shows what it holds.
  for (const auto& [key, u] : usage) {
    if (tenant_names.count(key.first) > 0) continue;
    state.tenant_gpus.push_back({.tenant = key.first,
                                 .gpu_type = key.second,
                                 .allocated = static_cast<double>(u) / 1000,
                                 .borrowed = static_cast<double>(u) / 1000});
  }
  std::sort(state.tenant_gpus.begin(), state.tenant_gpus.end(),
            [](const TenantGpuGauge& a, const TenantGpuGauge& b) {
              return std::tie(a.tenant, a.gpu_type) < std::tie(b.tenant, b.gpu_type);
            });

  // 4. Per GPU: the latest readings, from the last heartbeat.
  CORRAL_ASSIGN_OR_RETURN(const auto observed, tx.nodes().list_observed());
  std::map<std::string, const store::ObservedNode*> observed_of;
  for (const auto& o : observed) observed_of[o.node.value] = &o;
  for (const core::Node& node : nodes) {
    const auto o = observed_of.find(node.id.value);
    for (const core::Gpu& gpu : node.gpus) {
      GpuSample s{
          .node = node.id.value, .index = gpu.index, .uuid = gpu.uuid, .gpu_type = gpu.type.value};
      bool has_reading = false;
      std::int64_t memory_mib = 0;  // 0: unknown
      if (o != observed_of.end()) {
        for (const auto& inv : o->second->inventory.gpus) {
          if (inv.index != gpu.index) continue;
          s.pci_bus_id = inv.pci_bus_id;
          if (s.uuid.empty()) s.uuid = inv.uuid;
          memory_mib = inv.memory_mib;
        }
        for (const auto& r : o->second->readings) {
          if (r.index != gpu.index || !r.present) continue;
          has_reading = true;
          s.utilization_percent = r.sm_percent;
          s.power_watts = r.power_w;
          s.temperature_c = r.temperature_c;
          s.fb_used_mib = r.memory_used_mib;
        }
      }
      if (!has_reading) continue;
      // The inventory knows the memory size; free is size minus used.
      if (!s.fb_free_mib && memory_mib > 0) {
        s.fb_free_mib = std::max<std::int64_t>(0, memory_mib - s.fb_used_mib);
      }
      if (const auto h = held.find({s.node, s.index}); h != held.end()) {
        s.job = h->second->job.value;
        const auto t = tenant_of.find(s.job);
        if (t != tenant_of.end()) s.tenant = t->second;
      }
      state.gpus.push_back(std::move(s));
    }
  }
  std::sort(state.gpus.begin(), state.gpus.end(), [](const GpuSample& a, const GpuSample& b) {
    return std::tie(a.node, a.index) < std::tie(b.node, b.index);
  });
  return state;
}

MetricsRefresher::MetricsRefresher(store::Store& store, const core::Clock& clock, Metrics& metrics,
                                   MetricsSettings settings, const TelemetrySink* telemetry)
    : store_(store), clock_(clock), metrics_(metrics), settings_(settings), telemetry_(telemetry) {}

MetricsRefresher::~MetricsRefresher() { stop(); }

Status MetricsRefresher::refresh_once() {
  RefreshedState state;
  const Status read = store_.read([&](store::Tx& tx) {
    CORRAL_ASSIGN_OR_RETURN(state, read_refreshed_state(tx, clock_.now()));
    return Status();
  });
  if (!read.ok()) {
    ++metrics_.metrics_refresh_errors;
    return read;
  }
  if (telemetry_ != nullptr) state.telemetry = telemetry_->stats();
  // Every tenant's counters exist from the start, at 0, so rate() has a first point.
  TenantEventMap seen;
  for (const auto& [tenant, n] : state.pending) seen[tenant];
  metrics_.count_committed(seen);
  metrics_.set_refreshed(state);
  return Status();
}

void MetricsRefresher::start() {
  const Status first = refresh_once();
  if (!first.ok()) {
    process_log().write(
        LogEvent("metrics_failed", LogLevel::kError).add("error", first.to_string()));
  }
  thread_.start(core::Duration(settings_.refresh_ms), [this] {
    const Status s = refresh_once();
    if (!s.ok()) {
      process_log().write(LogEvent("metrics_failed", LogLevel::kError).add("error", s.to_string()));
    }
  });
}

void MetricsRefresher::stop() { thread_.stop(); }

}  // namespace corral::server
