// The usage history behind the dashboard's over-time views (docs/dashboard.md): every
// `dashboard.historyMs` one read of the store (the same one /metrics refreshes from,
// metrics_refresher.h) becomes a row per tenant and one for the whole cluster (tenant
// "*") in usage_history: GPUs allocated and borrowed, guarantees, fair share and decayed
// usage as the scheduler's last cycle weighed them, pending jobs, the mean utilization
// of the allocated GPUs, and what happened since the last row (preemptions, restarts,
// jobs placed and their queue waits, from this corrald's counters). Rows older than
// `dashboard.historyRetentionDays` are deleted as new ones are written.
//
// Counts come from this process's counters (metrics.h): the first row after a start
// counts from the start, and with several replicas each counts what it committed.
//
// Thread safety: start()/stop() once each; sample_once() on one thread at a time.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/result.h"
#include "server/base/metrics.h"
#include "server/base/periodic.h"
#include "server/base/settings.h"
#include "server/cycle/scheduler.h"
#include "store/store.h"

namespace corral::server {

// The rows one sample writes: the cluster's ("*") first, then each tenant's by name.
// `since` is the counters as of the previous sample (empty: none yet).
std::vector<store::UsageSampleRow> usage_rows(const RefreshedState& state,
                                              const SchedLoop::TenantShares* shares,
                                              const std::map<std::string, TenantTotals>& totals,
                                              const std::map<std::string, TenantTotals>& since,
                                              core::Time now);

class UsageHistory {
 public:
  UsageHistory(store::Store& store, const core::Clock& clock, Metrics& metrics,
               const Scheduler& loop, DashboardSettings settings);
  UsageHistory(const UsageHistory&) = delete;
  UsageHistory& operator=(const UsageHistory&) = delete;

  void start();
  void stop();
  // One sample now: reads the store, writes the rows, deletes the expired ones.
  core::Status sample_once();

 private:
  store::Store& store_;
  const core::Clock& clock_;
  Metrics& metrics_;
  const Scheduler& loop_;
  const DashboardSettings settings_;
  std::map<std::string, TenantTotals> last_totals_;  // as of the last sample

  Periodic thread_;
};

}  // namespace corral::server
