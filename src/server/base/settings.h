// The settings of corrald's parts, as config.h reads them from --config: plain values,
// so the config loader and the tests depend on these and not on the threads that use
// them (the scheduler loop, the lease holder, the telemetry sink, ...). Each part
// includes this header for its own section.
//
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "core/time.h"
#include "sched/config.h"

namespace corral::server {

class ShardMap;

// Captured cycles for corral-sim replay (cycle_recorder.h, config `scheduler.capture`).
struct CaptureOptions {
  std::string dir;                               // empty: no captures at all
  std::int64_t every = 0;                        // every Nth cycle; 0: only on request
  std::int64_t max_bytes = 256LL * 1024 * 1024;  // the directory's bound
};

// Knobs of the agent protocol and the controllers (config `agents:`).
struct AgentSettings {
  std::int64_t node_lost_after_ms = 30000;  // heartbeat silence before a node is lost
  std::int64_t stop_grace_ms = 30000;       // SIGTERM to SIGKILL, sent as graceMs
  std::int64_t restart_backoff_ms = 10000;  // first restart's backoff; doubles each time
  std::int64_t restart_backoff_max_ms = 300000;
  std::int32_t hot_temperature_c = 87;  // above this a GPU takes no new placements
  // Clock throttle reasons (core::GpuHealth::throttle) that make a GPU `hot` (no new
  // placements) and, held without a break for throttle_drain_after_ms, unhealthy (its
  // node drained). The defaults are the hardware's and the driver's thermal slowdowns:
  // a power cap the admin set (sw_power_cap) and idle clocks are not faults.
  std::set<std::string> throttle_reasons = {"hw_slowdown", "hw_thermal_slowdown", "hw_power_brake",
                                            "sw_thermal_slowdown"};
  std::int64_t throttle_drain_after_ms = 300'000;  // 0: a throttled GPU is only hot
};

// The clock throttle reasons agents report (NVML's, by name), and whether `reason` is one:
// AgentSettings::throttle_reasons names only these.
bool known_throttle_reason(std::string_view reason);

struct SchedLoopOptions {
  sched::SchedulerConfig config;
  // Events arriving within this window after the first are handled by one cycle.
  core::Duration batch_window{20};
  // Cycles start at most this often: under a stream of submissions each cycle takes a
  // larger batch instead of re-reading the queue for every job.
  core::Duration min_interval{50};
  // ... and at least this many times the last cycle's duration after its start, so the
  // loop takes at most about 1/pace_factor of a core however long the queue grows.
  int pace_factor = 4;
  // A cycle runs at least this often, so time-based policy (reservations, decay) moves.
  core::Duration tick{2000};
  // Between full reads the loop keeps the pending queue in memory and reads only the
  // jobs submitted since the last cycle (job_submitted()); any other wake() and this
  // interval force a full re-read, which catches whatever changed behind its back.
  core::Duration full_read{5000};
  // Decayed fair-share usage is written to the store at most this often (with a cycle's
  // decisions), and read back at start().
  core::Duration usage_write_interval{5000};
  // A pending job whose queue position or reason detail moved, with the kind of its
  // reason unchanged (the jobs ahead of it left; "behind job N" names a later N), is
  // rewritten at most this often: under a stream of short jobs every position and
  // every such reason moves every cycle, and rewriting thousands of rows per cycle for
  // text people read now and then took most of the loop's time. A new job and a change
  // of kind (capacity -> quota) are written at once.
  core::Duration position_write_interval{2000};
  std::string shard = "default";
  std::string holder = "corrald";
  // Several shards (shard_scope.h): this loop schedules shard `shard_index` of `shards`
  // only. Null or one shard: everything.
  const ShardMap* shards = nullptr;
  int shard_index = 0;
  // Captured cycles for corral-sim replay (cycle_recorder.h); no directory: none.
  CaptureOptions capture;
};

struct ReplicaSettings {
  // This replica's name: its leases' holder. A replica restarted under the same name
  // takes its leases back at once; two live replicas must not share one.
  std::string name = "corrald";
  core::Duration lease{5000};  // a lease lapses this long after its last renewal
};

// Config `metrics:` (config.h).
struct MetricsSettings {
  std::int64_t refresh_ms = 5000;  // how often the refreshed series are read from the store
};

// The `telemetry:` section of corrald's config (config.h).
struct TelemetrySettings {
  std::int64_t raw_retention_ms = 24LL * 3'600'000;          // rawRetentionMs
  std::int64_t minute_retention_ms = 14LL * 24 * 3'600'000;  // minuteRetentionMs
  std::int64_t hour_retention_ms = 400LL * 24 * 3'600'000;   // hourRetentionMs
  // Samples accepted per node per (clock) minute: 8 GPUs every 5 s is 96; the rest of a
  // batch past it is dropped (nodePerMinute).
  std::int64_t node_samples_per_minute = 2'000;
  // Samples queued and not yet written, all nodes together (queueSamples).
  std::int64_t queue_samples = 200'000;
  std::int64_t flush_ms = 250;           // flushMs: the writer's period
  std::int64_t prune_every_ms = 60'000;  // pruneEveryMs: retention's period
  // The most samples one write transaction takes, so that one write stays short (the rest
  // waits for the next flush).
  std::int64_t max_write_samples = 20'000;
};

// Config `sessions:` (config.h): when an interactive session's GPUs count as idle, and
// what follows (server/controllers/idle_sessions.h; docs/sessions.md).
struct SessionSettings {
  // Idle this long (no GPU of it at or above idle_below), a session is warned; a spec's
  // session.idleTimeout overrides it (idleTimeoutMs).
  std::int64_t idle_timeout_ms = 3'600'000;
  // From the warning to the reclaim, if its GPUs stay idle (graceMs).
  std::int64_t grace_ms = 900'000;
  // A GPU is busy in a minute whose highest utilization sample reached this (idleBelow).
  double idle_below = 0.05;
  // How often the sessions are judged (checkEveryMs).
  std::int64_t check_every_ms = 60'000;
};

// Config `dashboard:` (config.h).
struct DashboardSettings {
  std::int64_t history_ms = 60'000;          // how often a usage row is written
  std::int64_t history_retention_days = 90;  // rows older than this go
  // The Chart.js build the page loads from /ui/chart.js (Debian's libjs-chart.js).
  std::string chart_js = "/usr/share/javascript/chart.js/chart.min.js";
};

}  // namespace corral::server
