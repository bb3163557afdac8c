// TelemetrySink: corrald's ingestion of agents' telemetry (docs/telemetry.md). Best effort
// by design: a batch an agent posts is queued in memory and answered at once (202); a
// writer thread of its own writes what is queued, at most every flush_ms, in one store
// transaction of telemetry only (raw samples and their 1-minute and 1-hour rollups), and
// deletes what is past retention every prune_every_ms.
//
//   agent POST ──> offer() ──> queue (bounded: per node per minute, and in total)
//                                 │ writer thread, every flush_ms
//                                 v
//                   store.transact(insert_telemetry_batch)   fails: the batch is dropped
//
// So a slow or failing telemetry write, a full queue or an agent that stops sending never
// holds an API thread, a heartbeat or the scheduler: offer() takes one mutex for a few
// microseconds and never touches the store; the samples a cap or a failure drops are
// counted (stats()), never retried.
//
// Thread safety: safe for concurrent use. start()/stop() from one thread.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/agent_protocol.h"
#include "core/clock.h"
#include "core/status.h"
#include "server/base/metrics.h"
#include "server/base/periodic.h"
#include "server/base/settings.h"
#include "server/base/thread_annotations.h"
#include "store/store.h"

namespace corral::server {

// How much of one offered batch was taken.
struct TelemetryOffer {
  std::int64_t accepted = 0;
  std::int64_t dropped = 0;
};

class TelemetrySink {
 public:
  TelemetrySink(store::Store& store, const core::Clock& clock, TelemetrySettings settings);
  ~TelemetrySink();
  TelemetrySink(const TelemetrySink&) = delete;
  TelemetrySink& operator=(const TelemetrySink&) = delete;

  // Queues `node`'s samples, as many as its per-minute allowance and the queue's room
  // take (in order; the rest are dropped). Never touches the store.
  TelemetryOffer offer(const std::string& node, const std::vector<core::TelemetrySample>& samples)
      CORRAL_EXCLUDES(mu_);

  // Writes up to max_write_samples of the queue in one transaction; on failure those
  // samples are dropped and counted, and the failure returned. Tests and the thread.
  core::Status flush_once() CORRAL_EXCLUDES(mu_);
  // Deletes what is past retention, as of clock.now(). Tests and the thread.
  core::Status prune_once();

  void start();
  void stop();

  TelemetryStats stats() const CORRAL_EXCLUDES(mu_);
  const TelemetrySettings& settings() const { return settings_; }

 private:
  struct Window {
    std::int64_t minute = -1;  // clock minute (ms / 60000) the count is for
    std::int64_t count = 0;
  };

  store::Store& store_;
  const core::Clock& clock_;
  const TelemetrySettings settings_;

  mutable std::mutex mu_;
  std::vector<store::TelemetryRow> queue_ CORRAL_GUARDED_BY(mu_);
  std::map<std::string, Window> windows_ CORRAL_GUARDED_BY(mu_);
  TelemetryStats stats_ CORRAL_GUARDED_BY(mu_);
  Periodic thread_;
};

}  // namespace corral::server
