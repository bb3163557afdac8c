#include "sim/metrics.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

namespace corral::sim {
namespace {

constexpr double kMsPerHour = 3600e3;

// Entitlement by weight down the tenant tree, among `active` tenants (those with jobs)
// and their ancestors: siblings split their parent's entitlement by weight.
std::map<core::TenantId, double> entitlements(const std::vector<core::Tenant>& tenants,
                                              const std::set<core::TenantId>& active) {
  std::map<core::TenantId, const core::Tenant*> by_id;
  for (const core::Tenant& t : tenants) by_id[t.id] = &t;
  std::set<core::TenantId> live;  // active tenants and their ancestors
  for (const core::TenantId& id : active) {
    for (const core::Tenant* t = by_id.count(id) ? by_id[id] : nullptr; t != nullptr;
         t = t->parent && by_id.count(*t->parent) ? by_id[*t->parent] : nullptr) {
      if (!live.insert(t->id).second) break;
    }
  }
  std::map<std::optional<core::TenantId>, double> child_weight;
  for (const core::TenantId& id : live) child_weight[by_id[id]->parent] += by_id[id]->weight;
  std::map<core::TenantId, double> out;
  // Parents before children: repeat until every live tenant has a value (depth is small).
  while (out.size() < live.size()) {
    for (const core::TenantId& id : live) {
      if (out.count(id)) continue;
      const core::Tenant& t = *by_id[id];
      double base = 1.0;
      if (t.parent) {
        if (!out.count(*t.parent)) continue;
        base = out[*t.parent];
      }
      out[id] = base * t.weight / child_weight[t.parent];
    }
  }
  return out;
}

}  // namespace

Distribution distribution(std::vector<double>& values) {
  Distribution d;
  d.count = static_cast<std::int64_t>(values.size());
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  d.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  const auto rank = [&](double p) {
    const auto k = static_cast<std::size_t>(std::ceil(p * static_cast<double>(values.size())));
    return values[std::clamp<std::size_t>(k, 1, values.size()) - 1];
  };
  d.median = rank(0.5);
  d.p99 = rank(0.99);
  return d;
}

Metrics compute_metrics(const RunResult& run, const Fleet& fleet) {
  Metrics m{.policy = run.policy,
            .jobs = static_cast<std::int64_t>(run.jobs.size()),
            .gpu_failures = run.gpu_failures,
            .cycles = run.cycles,
            .cycles_skipped = run.cycles_skipped,
            .checks = run.checks,
            .wall_seconds = run.wall_seconds,
            .decide_seconds = run.decide_seconds};
  m.by_size = {{.label = "1", .min_gpus = 1, .max_gpus = 1},
               {.label = "2-4", .min_gpus = 2, .max_gpus = 4},
               {.label = "5-8", .min_gpus = 5, .max_gpus = 8},
               {.label = "9-32", .min_gpus = 9, .max_gpus = 32},
               {.label = "33+", .min_gpus = 33, .max_gpus = 1 << 30}};
  std::vector<double> jct, queue, slowdowns;
  std::vector<std::vector<double>> bucket_jct(m.by_size.size()), bucket_queue(m.by_size.size());
  std::map<core::TenantId, std::pair<std::int64_t, double>> tenant_jobs;  // count, JCT sum
  std::map<core::TenantId, std::int64_t> tenant_finished;
  std::map<core::TenantId, std::pair<std::int64_t, double>> tenant_queue;  // started, sum
  std::int64_t last_finish = run.start_ms;
  std::int64_t lost_gpu_ms = 0;
  for (const JobResult& j : run.jobs) {
    std::size_t b = 0;
    while (j.gpus > m.by_size[b].max_gpus) ++b;
    tenant_jobs[j.tenant].first += 1;
    m.preemptions += j.preemptions;
    m.resizes += j.resizes;
    m.resize_restart_gpu_hours += static_cast<double>(j.resize_restart_gpu_ms) / 3.6e6;
    m.failure_stops += j.failures;
    lost_gpu_ms += j.lost_gpu_ms;
    if (j.start_ms < 0) {
      ++m.never_started;
      continue;
    }
    const double q = static_cast<double>(j.start_ms - j.submit_ms) / 1000.0;
    queue.push_back(q);
    bucket_queue[b].push_back(q);
    tenant_queue[j.tenant].first += 1;
    tenant_queue[j.tenant].second += q;
    if (j.gpus > 1) slowdowns.push_back(j.slowdown);
    if (j.finish_ms < 0) continue;
    ++m.finished;
    const double c = static_cast<double>(j.finish_ms - j.submit_ms) / 1000.0;
    jct.push_back(c);
    bucket_jct[b].push_back(c);
    tenant_jobs[j.tenant].second += c;
    tenant_finished[j.tenant] += 1;
    last_finish = std::max(last_finish, j.finish_ms);
  }
  m.jct_s = distribution(jct);
  m.queue_s = distribution(queue);
  for (std::size_t b = 0; b < m.by_size.size(); ++b) {
    m.by_size[b].jct_s = distribution(bucket_jct[b]);
    m.by_size[b].queue_s = distribution(bucket_queue[b]);
  }
  m.makespan_s = static_cast<double>(last_finish - run.start_ms) / 1000.0;
  m.lost_gpu_hours = static_cast<double>(lost_gpu_ms) / kMsPerHour;
  if (!slowdowns.empty()) {
    m.mean_slowdown = std::accumulate(slowdowns.begin(), slowdowns.end(), 0.0) /
                      static_cast<double>(slowdowns.size());
  }
  // Allocation over the makespan: the engine's exact integral of allocated GPUs.
  if (run.total_gpus > 0 && last_finish > run.start_ms) {
    m.gpu_allocation = static_cast<double>(run.allocated_gpu_ms) /
                       (static_cast<double>(run.total_gpus) *
                        static_cast<double>(std::max(last_finish, run.end_ms) - run.start_ms));
  }

  if (run.usable_gpu_ms > 0) {
    m.idle_waiting_share =
        static_cast<double>(run.idle_waiting_gpu_ms) / static_cast<double>(run.usable_gpu_ms);
  }

  if (auto billed = bill(run, fleet); billed.ok()) {
    m.ledger = *billed;
  } else {
    m.ledger_error = billed.status().to_string();
  }

  // Tenants: share of GPU-hours against entitlement, and cost.
  std::set<core::TenantId> active;
  for (const auto& [id, jobs] : tenant_jobs) active.insert(id);
  const std::map<core::TenantId, double> entitled = entitlements(run.tenants, active);
  double total_gpu_ms = 0;
  for (const auto& [tenant, by_type] : run.tenant_gpu_ms) {
    for (const auto& [type, ms] : by_type) total_gpu_ms += static_cast<double>(ms);
  }
  double sum_x = 0, sum_x2 = 0;
  std::int64_t n = 0;
  for (const core::Tenant& t : run.tenants) {
    if (!active.count(t.id)) continue;
    TenantMetrics tm{.id = t.id, .weight = t.weight, .jobs = tenant_jobs[t.id].first};
    std::int64_t gpu_ms = 0;
    if (const auto it = run.tenant_gpu_ms.find(t.id); it != run.tenant_gpu_ms.end()) {
      for (const auto& [type, ms] : it->second) {
        gpu_ms += ms;
        // A type without a price costs nothing here; the report says prices are missing.
        if (auto cost = fleet.prices.cost(type, fleet.region, false, ms); cost.ok()) {
          tm.cost_usd += static_cast<double>(*cost) / 1e6;
        }
      }
    }
    tm.gpu_hours = static_cast<double>(gpu_ms) / kMsPerHour;
    tm.share = total_gpu_ms > 0 ? static_cast<double>(gpu_ms) / total_gpu_ms : 0;
    tm.entitlement = entitled.count(t.id) ? entitled.at(t.id) : 0;
    const std::int64_t finished = tenant_finished[t.id];
    tm.mean_jct_s = finished > 0 ? tenant_jobs[t.id].second / static_cast<double>(finished) : 0;
    const auto& [started, queue_sum] = tenant_queue[t.id];
    tm.mean_queue_s = started > 0 ? queue_sum / static_cast<double>(started) : 0;
    m.total_cost_usd += tm.cost_usd;
    if (const auto it = run.backlog.find(t.id);
        it != run.backlog.end() && it->second.backlogged_ms > 0 && it->second.fair_gpu_ms > 0) {
      tm.backlog_service = it->second.held_gpu_ms / it->second.fair_gpu_ms;
      const double x = std::min(1.0, tm.backlog_service);
      sum_x += x;
      sum_x2 += x * x;
      ++n;
    }
    m.tenants.push_back(std::move(tm));
  }
  // 1 by convention when nobody waited; 0 when those who waited got nothing meanwhile.
  if (n == 0) {
    m.jain_index = 1.0;
  } else {
    m.jain_index = sum_x2 > 0 ? sum_x * sum_x / (static_cast<double>(n) * sum_x2) : 0.0;
  }
  return m;
}

}  // namespace corral::sim
