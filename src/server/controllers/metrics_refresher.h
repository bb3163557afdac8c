// The refreshed part of /metrics (metrics.h): every `metrics.refreshMs` one read
// transaction gathers each tenant's GPUs (allocated, borrowed, guaranteed) and pending
// jobs, and each GPU's holder and latest readings, and Metrics keeps them rendered. A
// scrape reads that text; however often Prometheus scrapes, the store sees one read per
// refresh (about 6 queries plus one per tenant).
//
// Per-GPU readings come from the agents' last heartbeats (NodeRepo's observed rows); a
// GPU that has none (a node registered without an agent) has no per-GPU series. (An
// agent's heartbeat carries its GPUs' latest readings, the same ones its telemetry
// samples, so the series need not wait for the telemetry writer.)
//
// Thread safety: start()/stop() once each; refresh_once() on any one thread at a time.
#pragma once

#include <cstdint>

#include "core/clock.h"
#include "core/result.h"
#include "server/base/metrics.h"
#include "server/base/periodic.h"
#include "server/base/settings.h"
#include "server/controllers/telemetry_sink.h"
#include "store/store.h"

namespace corral::server {

// What the store holds now, as the refreshed series show it.
core::Result<RefreshedState> read_refreshed_state(store::Tx& tx, core::Time now);

class MetricsRefresher {
 public:
  // `telemetry`: the sink whose counters each refresh copies; null: none.
  MetricsRefresher(store::Store& store, const core::Clock& clock, Metrics& metrics,
                   MetricsSettings settings, const TelemetrySink* telemetry = nullptr);
  ~MetricsRefresher();
  MetricsRefresher(const MetricsRefresher&) = delete;
  MetricsRefresher& operator=(const MetricsRefresher&) = delete;

  // Refreshes once now (so the first scrape has the series), then every refresh_ms.
  void start();
  void stop();
  // One refresh: reads the store and replaces the refreshed series.
  core::Status refresh_once();

 private:
  store::Store& store_;
  const core::Clock& clock_;
  Metrics& metrics_;
  const MetricsSettings settings_;
  const TelemetrySink* const telemetry_;

  Periodic thread_;
};

}  // namespace corral::server
