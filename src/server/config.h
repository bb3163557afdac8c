// corrald's --config file (YAML):
//
//   tenants:                 # created at start when missing (the store then owns them)
//     nlp: {weight: 2, quotas: {H100: {guaranteed: 8, borrowLimit: 8}},
//           maxPendingJobs: 1000, submitRatePerSecond: 50, submitBurst: 100}
//   scheduler:
//     batchWindowMs: 20      # events within this window share one cycle
//     tickMs: 2000           # a cycle runs at least this often
//     order: fairShare       # and the other decide() knobs: cycle/scheduler_config.h,
//     minRuntimeMs: 600000   # docs/scheduling.md#configuration
//   racks:                   # power caps in watts; they win over the agents' declarations
//     r1: {powerCapWatts: 40000}
//   agents:                  # the node-agent protocol (docs/agent-protocol.md)
//     nodeLostAfterMs: 30000 # heartbeat silence before a node is lost (fenced, requeued)
//     stopGraceMs: 30000     # SIGTERM to SIGKILL for stopped workers (graceMs)
//     restartBackoffMs: 10000    # first restart's backoff; doubles per restart
//     restartBackoffMaxMs: 300000
//     hotTemperatureC: 87    # above this a GPU takes no new placements
//     throttleReasons: [hw_slowdown, hw_thermal_slowdown, hw_power_brake,
//                       sw_thermal_slowdown]  # clock throttle reasons that count
//     throttleDrainAfterMs: 300000  # throttled that long without a break: unhealthy
//   telemetry:               # ingestion and retention (docs/telemetry.md)
//     rawRetentionMs: 86400000       # raw samples (a day)
//     minuteRetentionMs: 1209600000  # 1-minute rollups (14 days)
//     hourRetentionMs: 34560000000   # 1-hour rollups (400 days)
//     nodePerMinute: 2000    # samples taken per node per minute; the rest dropped
//     queueSamples: 200000   # samples queued for the writer, all nodes; the rest dropped
//     flushMs: 250           # the writer's period
//     pruneEveryMs: 60000    # how often retention deletes
//   billing:                 # the ledger and chargeback: server/billing/billing_config.h
//     prices: [{gpuType: H100, perGpuHour: 2.50}]
//   metrics:                 # /metrics (docs/metrics.md)
//     refreshMs: 5000        # how often per-tenant and per-GPU series are read from the store
//   dashboard:               # the web UI at / (docs/dashboard.md)
//     historyMs: 60000       # how often the over-time views get a usage sample
//     historyRetentionDays: 90
//     chartJs: /usr/share/javascript/chart.js/chart.min.js  # Debian's libjs-chart.js
//   replica:                 # several corrald on one PostgreSQL (docs/scale-out.md)
//     name: corrald-a        # this replica's lease holder name (--replica wins)
//     leaseMs: 5000          # a dead replica's shards are taken over after about 1.3x this
//   security:                # docs/security.md
//     keyFile: /etc/corral/corrald.key   # secrets and audit-anchor keys (default DATA_DIR)
//     auditAnchorFile: /var/log/corral/audit.anchor  # default DATA_DIR/audit.anchor
//     auditAnchorSyslog: true            # also send each anchor to syslog (authpriv)
//   shards:                  # scheduling partitions (server/cycle/shard_map.h); none: one shard
//     - {name: us-east/H100, region: us-east, gpuTypes: [H100]}
//     - {name: big, leaves: [l7, l8], minGpus: 64}
//   log:                     # corrald's log on stderr (server/base/log.h)
//     format: text           # text | json (--log-format wins)
//
// Every key, its default and its range: docs/config.md.
//
// Without a file, corrald has tenant `default` (bounded only by capacity) and the
// built-in priority classes production, standard and preemptible.
//
// Thread safety: a value type.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "server/base/log.h"
#include "server/base/model_json.h"
#include "server/base/settings.h"
#include "server/billing/billing_config.h"
#include "server/cycle/shard_map.h"

namespace corral::server {

// Where the keys and the audit anchor live (docs/security.md): outside the database.
struct SecuritySettings {
  std::string key_file;     // "": DATA_DIR/corrald.key
  std::string anchor_file;  // "": DATA_DIR/audit.anchor
  bool anchor_syslog = false;
};

struct ServerConfig {
  std::vector<TenantConfig> tenants;  // always includes `default`
  // Rack power caps set by the admin: they win over what agents declare at join.
  std::vector<core::Rack> racks;
  SchedLoopOptions sched;
  AgentSettings agents;
  BillingSettings billing;
  MetricsSettings metrics;
  TelemetrySettings telemetry;
  SessionSettings sessions;
  DashboardSettings dashboard;
  ReplicaSettings replica;
  ShardMap shards;
  SecuritySettings security;
  LogSettings log;
};

ServerConfig default_server_config();
// Reads and validates the file; InvalidArgument names the offending key.
core::Result<ServerConfig> load_server_config(const std::string& path);

}  // namespace corral::server
