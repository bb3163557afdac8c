#include "server/reports/usage_history.h"

#include "server/base/log.h"
#include "server/controllers/metrics_refresher.h"

namespace corral::server {

using core::Result;
using core::Status;

std::vector<store::UsageSampleRow> usage_rows(const RefreshedState& state,
                                              const SchedLoop::TenantShares* shares,
                                              const std::map<std::string, TenantTotals>& totals,
                                              const std::map<std::string, TenantTotals>& since,
                                              core::Time now) {
  std::map<std::string, store::UsageSampleRow> by_tenant;
  const auto row = [&](const std::string& tenant) -> store::UsageSampleRow& {
    auto [it, added] = by_tenant.try_emplace(tenant);
    if (added) {
      it->second.time = now;
      it->second.tenant = tenant;
    }
    return it->second;
  };
  store::UsageSampleRow& cluster = row("*");
  cluster.gpus = state.fleet_gpus;
  cluster.share = 1;
  for (const auto& [tenant, pending] : state.pending) {
    row(tenant).pending = pending;
    cluster.pending += pending;
  }
  for (const TenantGpuGauge& g : state.tenant_gpus) {
    store::UsageSampleRow& r = row(g.tenant);
    r.gpus += g.guaranteed;
    r.allocated += g.allocated;
    r.borrowed += g.borrowed;
    cluster.allocated += g.allocated;
    cluster.borrowed += g.borrowed;
  }
  // Mean utilization of the GPUs someone holds: the part of an allocation that works.
  std::map<std::string, std::pair<double, std::int64_t>> util;  // tenant -> (sum, GPUs)
  for (const GpuSample& s : state.gpus) {
    if (s.job == 0) continue;
    for (const std::string& t : {s.tenant, std::string("*")}) {
      util[t].first += s.utilization_percent / 100.0;
      ++util[t].second;
    }
  }
  for (const auto& [tenant, u] : util) {
    row(tenant).utilization = u.first / static_cast<double>(u.second);
  }
  if (shares != nullptr) {
    for (const sched::TenantShare& s : *shares) {
      store::UsageSampleRow& r = row(s.tenant.value);
      r.share = s.share;
      r.usage_gpus = s.usage_gpus;
      cluster.usage_gpus += s.usage_gpus;
    }
  }
  for (const auto& [tenant, now_total] : totals) {
    TenantTotals before;
    if (const auto it = since.find(tenant); it != since.end()) before = it->second;
    store::UsageSampleRow& r = row(tenant);
    r.preemptions = now_total.preemptions - before.preemptions;
    r.restarts = now_total.restarts - before.restarts;
    r.placed = now_total.waits - before.waits;
    r.wait_ms_sum = now_total.wait_ms_sum - before.wait_ms_sum;
    cluster.preemptions += r.preemptions;
    cluster.restarts += r.restarts;
    cluster.placed += r.placed;
    cluster.wait_ms_sum += r.wait_ms_sum;
  }
  std::vector<store::UsageSampleRow> out;
  out.reserve(by_tenant.size());
  out.push_back(by_tenant["*"]);  // "*" sorts first anyway; said here so it stays so
  for (auto& [tenant, r] : by_tenant) {
    if (tenant != "*") out.push_back(std::move(r));
  }
  return out;
}

UsageHistory::UsageHistory(store::Store& store, const core::Clock& clock, Metrics& metrics,
                           const Scheduler& loop, DashboardSettings settings)
    : store_(store),
      clock_(clock),
      metrics_(metrics),
      loop_(loop),
      settings_(std::move(settings)) {}

Status UsageHistory::sample_once() {
  const core::Time now = clock_.now();
  RefreshedState state;
  CORRAL_RETURN_IF_ERROR(store_.read([&](store::Tx& tx) {
    CORRAL_ASSIGN_OR_RETURN(state, read_refreshed_state(tx, now));
    return Status();
  }));
  const auto totals = metrics_.tenants.totals();
  const auto shares = loop_.tenant_shares();
  const auto rows = usage_rows(state, shares.get(), totals, last_totals_, now);
  const core::Time cutoff =
      now - core::Duration(settings_.history_retention_days * 24 * 3600 * 1000);
  const Status written = store_.transact([&](store::Tx& tx) {
    CORRAL_RETURN_IF_ERROR(tx.records().insert_usage_samples(rows));
    return tx.records().delete_usage_samples_before(cutoff).status();
  });
  if (written.ok()) last_totals_ = totals;  // else the next row counts these events too
  return written;
}

void UsageHistory::start() {
  thread_.start(core::Duration(settings_.history_ms), [this] {
    const Status s = sample_once();
    if (!s.ok()) {
      process_log().write(
          LogEvent("usage_history_failed", LogLevel::kError).add("error", s.to_string()));
    }
  });
}

void UsageHistory::stop() { thread_.stop(); }

}  // namespace corral::server
