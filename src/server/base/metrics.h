// What corrald's /metrics answers (Prometheus text format 0.0.4; docs/metrics.md lists
// every family, its labels, and how many series a 10,000-GPU fleet has).
//
// Four kinds of state, each updated where it changes and read by render():
//   - process counters and gauges: plain atomics the API threads and the scheduler loop
//     bump without locks;
//   - per-tenant event counters and queue-wait histograms (TenantCounters): added after
//     a transaction commits, from the TenantEvents its Effects carried;
//   - ledger bucket counters (LedgerCounters): added by the accrual controller after the
//     transaction that wrote the entries commits, for the entries it inserted;
//   - the refreshed series: per-tenant GPU gauges and per-GPU DCGM-named series, built
//     from the store every `metrics.refreshMs` by MetricsRefresher (metrics_refresher.h)
//     and kept as rendered text, so a scrape never reads the store.
//
// Thread safety: safe for concurrent use.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/base/thread_annotations.h"

namespace corral::server {

// What the telemetry sink (controllers/telemetry_sink.h) has done since it started,
// as /metrics shows it.
struct TelemetryStats {
  std::int64_t accepted = 0;        // samples queued
  std::int64_t dropped_rate = 0;    // refused by the per-node cap
  std::int64_t dropped_queue = 0;   // refused because the queue was full
  std::int64_t written = 0;         // samples written
  std::int64_t dropped_failed = 0;  // samples of batches whose write failed
  std::int64_t write_failures = 0;  // failed write transactions
  std::int64_t pruned = 0;          // rows deleted by retention
  std::int64_t queued = 0;          // samples waiting now
};

// What one transaction did to one tenant's jobs, counted once it commits.
struct TenantEvents {
  std::int64_t preemptions = 0;              // jobs the scheduler asked to checkpoint and yield
  std::int64_t checkpoints = 0;              // checkpoints recorded
  std::int64_t restarts = 0;                 // failed or lost attempts restarted
  std::int64_t failures = 0;                 // jobs failed with no restart left
  std::vector<std::int64_t> queue_waits_ms;  // one per job placed: placed - queued_at

  void merge(const TenantEvents& other);
};
using TenantEventMap = std::map<std::string, TenantEvents>;  // by tenant

// Upper bounds (seconds) of the queue-wait histogram's buckets; +Inf comes after.
inline constexpr std::array<double, 14> kQueueWaitBuckets = {
    1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14400, 43200, 86400};

// One tenant's counts since this corrald started, as TenantCounters::totals() gives them.
struct TenantTotals {
  std::int64_t preemptions = 0;
  std::int64_t restarts = 0;
  std::int64_t waits = 0;  // jobs placed
  std::int64_t wait_ms_sum = 0;
};

// Per-tenant counters since this corrald started.
class TenantCounters {
 public:
  void add(const TenantEventMap& events) CORRAL_EXCLUDES(mu_);
  // Every tenant seen, by name (the usage history takes differences of these).
  std::map<std::string, TenantTotals> totals() const CORRAL_EXCLUDES(mu_);
  // Appends the families corral_tenant_{preemptions,checkpoints,restarts,failures}_total
  // and corral_queue_wait_seconds, one series per tenant seen.
  void render(std::string& out) const CORRAL_EXCLUDES(mu_);

 private:
  struct Counts {
    std::int64_t preemptions = 0;
    std::int64_t checkpoints = 0;
    std::int64_t restarts = 0;
    std::int64_t failures = 0;
    std::array<std::int64_t, kQueueWaitBuckets.size()> wait_buckets{};  // not cumulative
    std::int64_t waits = 0;
    std::int64_t wait_ms_sum = 0;
  };
  mutable std::mutex mu_;
  std::map<std::string, Counts> by_tenant_ CORRAL_GUARDED_BY(mu_);
};

// Ledger entries written by this corrald, by (tenant, bucket): GPU time and its amount.
// Replicas each count what they inserted, so a sum over replicas is the ledger's growth.
class LedgerCounters {
 public:
  void add(const std::string& tenant, const std::string& bucket, std::int64_t gpu_ms,
           std::int64_t amount_micros) CORRAL_EXCLUDES(mu_);
  // Appends corral_ledger_gpu_seconds_total and corral_ledger_cost_total (currency units).
  void render(std::string& out) const CORRAL_EXCLUDES(mu_);

 private:
  struct Sums {
    std::int64_t gpu_ms = 0;
    std::int64_t amount_micros = 0;
  };
  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::string>, Sums> sums_ CORRAL_GUARDED_BY(mu_);
};

// One tenant's GPUs of one type, as of a refresh.
struct TenantGpuGauge {
  std::string tenant;
  std::string gpu_type;
  double allocated = 0;   // GPUs its jobs hold (a share counts its fraction: 2.25)
  double borrowed = 0;    // of those, beyond its guarantee: max(0, allocated - guaranteed)
  double guaranteed = 0;  // its quota's guarantee (3.5)
};

// One GPU, its holder and its latest readings, as DCGM's exporter would label it.
struct GpuSample {
  std::string node;  // also DCGM's Hostname
  std::int32_t index = 0;
  std::string uuid;
  std::string pci_bus_id;
  std::string gpu_type;
  std::int64_t job = 0;  // 0: nobody holds it
  std::string tenant;    // "" when nobody holds it
  double utilization_percent = 0;
  double power_watts = 0;
  double temperature_c = 0;
  std::int64_t fb_used_mib = 0;
  std::optional<std::int64_t> fb_free_mib;  // when the GPU's memory size is known
};

// What a refresh found: the series rendered from it replace the last refresh's whole.
struct RefreshedState {
  std::vector<TenantGpuGauge> tenant_gpus;                    // by (tenant, type)
  std::vector<std::pair<std::string, std::int64_t>> pending;  // (tenant, pending jobs)
  std::vector<GpuSample> gpus;                                // by (node, index)
  TelemetryStats telemetry;     // the telemetry sink's counters (all 0 without one)
  std::int64_t fleet_gpus = 0;  // registered, healthy or not
  std::int64_t refreshed_at_ms = 0;
};

// The refreshed families as text: corral_tenant_gpus_{allocated,borrowed,guaranteed},
// corral_tenant_pending_jobs, corral_metrics_refresh_timestamp_seconds, the telemetry
// sink's corral_telemetry_* and the DCGM_FI_DEV_* per-GPU gauges. Deterministic for one state
// (sorted input, sorted out).
std::string render_refreshed(const RefreshedState& state);

// A Prometheus label value, quoted and escaped (\\, \", \n).
std::string label_value(std::string_view v);

// How long the phases of scheduling cycles took: read (the store view and queue), build
// (the snapshot), decide, apply (the decisions' transaction). Lock-free: the loops of
// every shard add, a scrape reads.
class CyclePhaseHistogram {
 public:
  enum Phase { kRead, kBuild, kDecide, kApply, kPhases };
  // Upper bounds (seconds) of the buckets; +Inf comes after.
  static constexpr std::array<double, 12> kBuckets = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                      0.1,   0.25,   0.5,   1,    2.5,   5};
  void add(Phase phase, std::int64_t us);
  // Appends corral_sched_cycle_phase_seconds.
  void render(std::string& out) const;

 private:
  struct Counts {
    std::array<std::atomic<std::int64_t>, kBuckets.size()> buckets{};  // not cumulative
    std::atomic<std::int64_t> count{0};
    std::atomic<std::int64_t> us_sum{0};
  };
  std::array<Counts, kPhases> phases_;
};

struct Metrics {
  // HTTP answers by class: 2xx, 3xx, 4xx, 5xx (index status/100 - 2).
  std::array<std::atomic<std::int64_t>, 4> http_responses{};
  std::atomic<std::int64_t> jobs_submitted{0};
  std::atomic<std::int64_t> jobs_cancelled{0};
  std::atomic<std::int64_t> jobs_succeeded{0};  // as agents reported them, since start
  std::atomic<std::int64_t> jobs_failed{0};
  std::atomic<std::int64_t> idempotent_replays{0};
  std::atomic<std::int64_t> admission_rejections{0};
  std::atomic<std::int64_t> sched_cycles{0};
  std::atomic<std::int64_t> sched_cycle_us_total{0};  // rendered in seconds
  CyclePhaseHistogram sched_phases;
  std::atomic<std::int64_t> sched_placements{0};
  std::atomic<std::int64_t> sched_apply_conflicts{0};
  // Shards (docs/scale-out.md): placements dropped at commit because another shard placed
  // for the same tenant since the cycle's read, and placements marked borrowed at commit
  // for the same reason; decisions on another shard's jobs dropped, leases taken and
  // lost, late writes refused by the epoch.
  std::atomic<std::int64_t> sched_quota_conflicts{0};
  std::atomic<std::int64_t> sched_borrowed_at_commit{0};
  std::atomic<std::int64_t> sched_rack_power_conflicts{0};  // the same, for a rack's power cap
  std::atomic<std::int64_t> sched_foreign_dropped{0};
  std::atomic<std::int64_t> leases_claimed{0};
  std::atomic<std::int64_t> leases_lost{0};
  std::atomic<std::int64_t> stale_epoch_refusals{0};
  std::atomic<std::int64_t> shards_held{0};
  std::atomic<std::int64_t> sched_errors{0};
  std::atomic<std::int64_t> pending_jobs{0};  // as of the last cycle
  std::atomic<std::int64_t> running_jobs{0};  // holding GPUs, as of the last cycle
  std::atomic<std::int64_t> store_errors{0};
  std::atomic<std::int64_t> job_spec_decodes{0};  // stored specs decoded by SpecCache
  std::atomic<std::int64_t> polls_waiting{0};     // agents' long polls parked right now
  std::atomic<std::int64_t> metrics_refresh_errors{0};

  TenantCounters tenants;
  LedgerCounters ledger;

  // Counts what a committed transaction did (its Effects' tenant events and outcomes).
  void count_committed(const TenantEventMap& events) { tenants.add(events); }

  // Replaces the refreshed series (MetricsRefresher calls it every refreshMs).
  void set_refreshed(const RefreshedState& state) CORRAL_EXCLUDES(refreshed_mu_);

  // The whole exposition. Reads no store: atomics, two small maps, one cached string.
  std::string render() const CORRAL_EXCLUDES(refreshed_mu_);

 private:
  mutable std::mutex refreshed_mu_;
  std::string refreshed_text_ CORRAL_GUARDED_BY(refreshed_mu_);
};

}  // namespace corral::server
