#include "server/base/metrics.h"

#include <algorithm>
#include <charconv>
#include <span>
#include <string_view>

#include "server/base/stored_documents.h"

namespace corral::server {
namespace {

// Shortest text that reads back as `v` (Prometheus takes Go's float syntax).
std::string number(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string number(std::int64_t v) { return std::to_string(v); }

// Milliseconds as seconds, exactly: "1.5", "0.001", "12".
std::string ms_as_seconds(std::int64_t ms) { return number(static_cast<double>(ms) / 1000.0); }

void family(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

// One sample; `labels` is "" or `a="x",b="y"` (already escaped).
void sample(std::string& out, std::string_view name, std::string_view labels,
            std::string_view value) {
  out += name;
  if (!labels.empty()) {
    out += '{';
    out += labels;
    out += '}';
  }
  out += ' ';
  out += value;
  out += '\n';
}

void line(std::string& out, std::string_view name, std::string_view type, std::string_view help,
          std::int64_t value) {
  family(out, name, type, help);
  sample(out, name, "", number(value));
}

std::string label(std::string_view name, std::string_view value);

// One series of a histogram: its buckets (`counts` per bound, not cumulative), +Inf,
// _sum and _count. `labels` is already escaped and not empty.
void histogram_series(std::string& out, std::string_view name, const std::string& labels,
                      std::span<const double> bounds, std::span<const std::int64_t> counts,
                      std::int64_t count, const std::string& sum) {
  const std::string bucket = std::string(name) + "_bucket";
  std::int64_t cumulative = 0;
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    cumulative += counts[i];
    sample(out, bucket, labels + "," + label("le", number(bounds[i])), number(cumulative));
  }
  sample(out, bucket, labels + ",le=\"+Inf\"", number(count));
  sample(out, std::string(name) + "_sum", labels, sum);
  sample(out, std::string(name) + "_count", labels, number(count));
}

std::string label(std::string_view name, std::string_view value) {
  std::string out(name);
  out += '=';
  out += label_value(value);
  return out;
}

}  // namespace

std::string label_value(std::string_view v) {
  std::string out = "\"";
  for (const char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

void TenantEvents::merge(const TenantEvents& other) {
  preemptions += other.preemptions;
  checkpoints += other.checkpoints;
  restarts += other.restarts;
  failures += other.failures;
  queue_waits_ms.insert(queue_waits_ms.end(), other.queue_waits_ms.begin(),
                        other.queue_waits_ms.end());
}

void TenantCounters::add(const TenantEventMap& events) {
  if (events.empty()) return;
  std::lock_guard lock(mu_);
  for (const auto& [tenant, e] : events) {
    Counts& c = by_tenant_[tenant];
    c.preemptions += e.preemptions;
    c.checkpoints += e.checkpoints;
    c.restarts += e.restarts;
    c.failures += e.failures;
    for (const std::int64_t ms : e.queue_waits_ms) {
      const std::int64_t wait_ms = std::max<std::int64_t>(ms, 0);
      const double s = static_cast<double>(wait_ms) / 1000.0;
      const auto* at = std::lower_bound(kQueueWaitBuckets.begin(), kQueueWaitBuckets.end(), s);
      if (at != kQueueWaitBuckets.end()) ++c.wait_buckets[at - kQueueWaitBuckets.begin()];
      ++c.waits;
      c.wait_ms_sum += wait_ms;
    }
  }
}

std::map<std::string, TenantTotals> TenantCounters::totals() const {
  std::lock_guard lock(mu_);
  std::map<std::string, TenantTotals> out;
  for (const auto& [tenant, c] : by_tenant_) {
    out[tenant] = {.preemptions = c.preemptions,
                   .restarts = c.restarts,
                   .waits = c.waits,
                   .wait_ms_sum = c.wait_ms_sum};
  }
  return out;
}

void TenantCounters::render(std::string& out) const {
  std::lock_guard lock(mu_);
  struct Counter {
    const char* name;
    const char* help;
    std::int64_t Counts::*field;
  };
  static constexpr Counter kCounters[] = {
      {"corral_tenant_preemptions_total",
       "jobs the scheduler asked to checkpoint and yield their GPUs, by tenant",
       &Counts::preemptions},
      {"corral_tenant_checkpoints_total", "checkpoints recorded for the tenant's jobs",
       &Counts::checkpoints},
      {"corral_tenant_restarts_total",
       "failed or lost job attempts restarted (maxRestarts), by tenant", &Counts::restarts},
      {"corral_tenant_failures_total", "jobs that failed with no restart left, by tenant",
       &Counts::failures},
  };
  for (const Counter& k : kCounters) {
    family(out, k.name, "counter", k.help);
    for (const auto& [tenant, c] : by_tenant_) {
      sample(out, k.name, label("tenant", tenant), number(c.*k.field));
    }
  }
  constexpr std::string_view kWait = "corral_queue_wait_seconds";
  family(out, kWait, "histogram", "time from (re-)entering the queue to placement, by tenant");
  for (const auto& [tenant, c] : by_tenant_) {
    histogram_series(out, kWait, label("tenant", tenant), kQueueWaitBuckets, c.wait_buckets,
                     c.waits, ms_as_seconds(c.wait_ms_sum));
  }
}

void CyclePhaseHistogram::add(Phase phase, std::int64_t us) {
  Counts& c = phases_[phase];
  const double s = static_cast<double>(std::max<std::int64_t>(us, 0)) / 1e6;
  const auto* at = std::lower_bound(kBuckets.begin(), kBuckets.end(), s);
  if (at != kBuckets.end()) ++c.buckets[static_cast<std::size_t>(at - kBuckets.begin())];
  ++c.count;
  c.us_sum += us;
}

void CyclePhaseHistogram::render(std::string& out) const {
  static constexpr const char* kNames[kPhases] = {"read", "build", "decide", "apply"};
  constexpr std::string_view kName = "corral_sched_cycle_phase_seconds";
  family(out, kName, "histogram",
         "scheduling cycle phases: read the store, build the snapshot, decide, apply");
  for (std::size_t p = 0; p < kPhases; ++p) {
    const Counts& c = phases_[p];
    // Buckets before the count: add() counts after the bucket, so +Inf never falls
    // below the last bucket.
    std::array<std::int64_t, kBuckets.size()> buckets{};
    for (std::size_t i = 0; i < kBuckets.size(); ++i) buckets[i] = c.buckets[i].load();
    histogram_series(out, kName, label("phase", kNames[p]), kBuckets, buckets, c.count.load(),
                     number(static_cast<double>(c.us_sum.load()) / 1e6));
  }
}

void LedgerCounters::add(const std::string& tenant, const std::string& bucket, std::int64_t gpu_ms,
                         std::int64_t amount_micros) {
  std::lock_guard lock(mu_);
  Sums& s = sums_[{tenant, bucket}];
  s.gpu_ms += gpu_ms;
  s.amount_micros += amount_micros;
}

void LedgerCounters::render(std::string& out) const {
  std::lock_guard lock(mu_);
  // Unattributed time (tenant "") carries no tenant label.
  const auto labels = [](const std::pair<std::string, std::string>& k) {
    return (k.first.empty() ? std::string() : label("tenant", k.first) + ",") +
           label("bucket", k.second);
  };
  family(out, "corral_ledger_gpu_seconds_total", "counter",
         "GPU time written to the ledger by this corrald, by tenant and bucket (docs/ledger.md)");
  for (const auto& [k, s] : sums_) {
    sample(out, "corral_ledger_gpu_seconds_total", labels(k), ms_as_seconds(s.gpu_ms));
  }
  family(out, "corral_ledger_cost_total", "counter",
         "amount written to the ledger by this corrald, in the price book's currency, by "
         "tenant and bucket");
  for (const auto& [k, s] : sums_) {
    sample(out, "corral_ledger_cost_total", labels(k),
           number(static_cast<double>(s.amount_micros) / 1e6));
  }
}

std::string render_refreshed(const RefreshedState& state) {
  std::string out;
  struct Gauge {
    const char* name;
    const char* help;
    double (*value)(const TenantGpuGauge&);
  };
  static constexpr Gauge kGauges[] = {
      {"corral_tenant_gpus_allocated",
       "GPUs the tenant's jobs hold (a share of a GPU as its fraction), by GPU type",
       [](const TenantGpuGauge& t) { return t.allocated; }},
      {"corral_tenant_gpus_borrowed", "GPUs the tenant holds beyond its guarantee, by GPU type",
       [](const TenantGpuGauge& t) { return t.borrowed; }},
      {"corral_tenant_gpus_guaranteed", "the tenant's guaranteed GPUs (quota), by GPU type",
       [](const TenantGpuGauge& t) { return t.guaranteed; }},
  };
  for (const Gauge& g : kGauges) {
    family(out, g.name, "gauge", g.help);
    for (const TenantGpuGauge& t : state.tenant_gpus) {
      sample(out, g.name, label("tenant", t.tenant) + "," + label("gpu_type", t.gpu_type),
             number(g.value(t)));
    }
  }
  family(out, "corral_tenant_pending_jobs", "gauge", "the tenant's jobs waiting in the queue");
  for (const auto& [tenant, n] : state.pending) {
    sample(out, "corral_tenant_pending_jobs", label("tenant", tenant), number(n));
  }
  family(out, "corral_metrics_refresh_timestamp_seconds", "gauge",
         "when the per-tenant and per-GPU series were last read from the store");
  sample(out, "corral_metrics_refresh_timestamp_seconds", "", ms_as_seconds(state.refreshed_at_ms));

  // The telemetry sink (telemetry_sink.h): what it took, wrote and dropped, and why.
  const TelemetryStats& t = state.telemetry;
  family(out, "corral_telemetry_samples_total", "counter",
         "agents' telemetry samples by outcome: accepted (queued), written, or dropped by the "
         "per-node cap (dropped_rate), a full queue (dropped_queue) or a failed write "
         "(dropped_failed)");
  const std::pair<const char*, std::int64_t> outcomes[] = {{"accepted", t.accepted},
                                                           {"written", t.written},
                                                           {"dropped_rate", t.dropped_rate},
                                                           {"dropped_queue", t.dropped_queue},
                                                           {"dropped_failed", t.dropped_failed}};
  for (const auto& [outcome, n] : outcomes) {
    sample(out, "corral_telemetry_samples_total", label("outcome", outcome), number(n));
  }
  line(out, "corral_telemetry_write_failures_total", "counter",
       "telemetry write transactions that failed (their samples dropped)", t.write_failures);
  line(out, "corral_telemetry_pruned_rows_total", "counter",
       "telemetry rows deleted past their retention", t.pruned);
  line(out, "corral_telemetry_queued_samples", "gauge", "telemetry samples waiting for the writer",
       t.queued);

  // Per GPU, under the DCGM exporter's names and labels (gpu, UUID, device, pci_bus_id,
  // Hostname), with Corral's node, gpu_type and holder (hpc_job, tenant) beside them.
  std::vector<std::string> labels;
  labels.reserve(state.gpus.size());
  for (const GpuSample& g : state.gpus) {
    std::string l = label("gpu", std::to_string(g.index)) + "," + label("UUID", g.uuid) + "," +
                    label("device", "nvidia" + std::to_string(g.index)) + "," +
                    label("pci_bus_id", g.pci_bus_id) + "," + label("Hostname", g.node) + "," +
                    label("node", g.node) + "," + label("gpu_type", g.gpu_type);
    if (g.job != 0) {
      l += "," + label("hpc_job", std::to_string(g.job)) + "," + label("tenant", g.tenant);
    }
    labels.push_back(std::move(l));
  }
  struct PerGpu {
    const char* name;
    const char* help;
    std::string (*value)(const GpuSample&);
  };
  static constexpr PerGpu kPerGpu[] = {
      {"DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).",
       [](const GpuSample& g) { return number(g.utilization_percent); }},
      {"DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).",
       [](const GpuSample& g) { return number(g.power_watts); }},
      {"DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).",
       [](const GpuSample& g) { return number(g.temperature_c); }},
      {"DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).",
       [](const GpuSample& g) { return number(g.fb_used_mib); }},
  };
  for (const PerGpu& f : kPerGpu) {
    family(out, f.name, "gauge", f.help);
    for (std::size_t i = 0; i < state.gpus.size(); ++i) {
      sample(out, f.name, labels[i], f.value(state.gpus[i]));
    }
  }
  family(out, "DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).");
  for (std::size_t i = 0; i < state.gpus.size(); ++i) {
    if (state.gpus[i].fb_free_mib) {
      sample(out, "DCGM_FI_DEV_FB_FREE", labels[i], number(*state.gpus[i].fb_free_mib));
    }
  }
  return out;
}

void Metrics::set_refreshed(const RefreshedState& state) {
  std::string text = render_refreshed(state);
  std::lock_guard lock(refreshed_mu_);
  refreshed_text_ = std::move(text);
}

std::string Metrics::render() const {
  std::string out;
  family(out, "corral_http_responses_total", "counter", "HTTP responses by status class");
  for (int i = 0; i < 4; ++i) {
    sample(out, "corral_http_responses_total", label("class", std::to_string(i + 2) + "xx"),
           number(http_responses[static_cast<std::size_t>(i)].load()));
  }
  line(out, "corral_jobs_submitted_total", "counter", "jobs accepted", jobs_submitted.load());
  line(out, "corral_jobs_cancelled_total", "counter", "jobs cancelled", jobs_cancelled.load());
  line(out, "corral_jobs_succeeded_total", "counter", "jobs whose every rank exited 0",
       jobs_succeeded.load());
  line(out, "corral_jobs_failed_total", "counter", "jobs that failed with no restart left",
       jobs_failed.load());
  line(out, "corral_idempotent_replays_total", "counter",
       "mutating requests answered from an earlier attempt", idempotent_replays.load());
  line(out, "corral_admission_rejections_total", "counter", "submissions refused with 429",
       admission_rejections.load());
  line(out, "corral_sched_cycles_total", "counter", "scheduling cycles run", sched_cycles.load());
  family(out, "corral_sched_cycle_seconds_total", "counter", "time spent in scheduling cycles");
  sample(out, "corral_sched_cycle_seconds_total", "",
         number(static_cast<double>(sched_cycle_us_total.load()) / 1e6));
  sched_phases.render(out);
  line(out, "corral_sched_placements_total", "counter", "gangs placed", sched_placements.load());
  line(out, "corral_sched_apply_conflicts_total", "counter",
       "decision transactions refused by the store", sched_apply_conflicts.load());
  line(out, "corral_sched_quota_conflicts_total", "counter",
       "placements dropped at commit: another shard placed for the tenant meanwhile",
       sched_quota_conflicts.load());
  line(out, "corral_sched_borrowed_at_commit_total", "counter",
       "placements marked borrowed at commit: another shard placed for the tenant meanwhile",
       sched_borrowed_at_commit.load());
  line(out, "corral_sched_rack_power_conflicts_total", "counter",
       "placements dropped at commit: another shard placed on the capped rack meanwhile",
       sched_rack_power_conflicts.load());
  line(out, "corral_sched_foreign_decisions_dropped_total", "counter",
       "preemptions, resizes and placements dropped for touching another shard's jobs",
       sched_foreign_dropped.load());
  line(out, "corral_shard_leases_claimed_total", "counter", "shard leases this replica took",
       leases_claimed.load());
  line(out, "corral_shard_leases_lost_total", "counter",
       "shard leases another replica took from this one", leases_lost.load());
  line(out, "corral_stale_epoch_refusals_total", "counter",
       "writes refused because another replica holds the shard's lease",
       stale_epoch_refusals.load());
  line(out, "corral_shards_held", "gauge", "shard leases this replica holds", shards_held.load());
  line(out, "corral_sched_errors_total", "counter", "cycles that failed", sched_errors.load());
  line(out, "corral_pending_jobs", "gauge", "pending jobs at the last cycle", pending_jobs.load());
  line(out, "corral_running_jobs", "gauge", "jobs holding GPUs at the last cycle",
       running_jobs.load());
  line(out, "corral_store_errors_total", "counter", "store calls that failed", store_errors.load());
  line(out, "corral_job_spec_decodes_total", "counter",
       "stored job specs decoded for agents and controllers (once per job, not per poll)",
       job_spec_decodes.load());
  line(out, "corral_agent_polls_waiting", "gauge", "agents' long polls parked on the board",
       polls_waiting.load());
  line(out, "corral_metrics_refresh_errors_total", "counter",
       "refreshes of the per-tenant and per-GPU series that failed to read the store",
       metrics_refresh_errors.load());
  family(out, "corral_store_unreadable_rows_total", "counter",
         "stored tenant, node and reservation rows this process could not decode and left "
         "out (each distinct row content once; the log names them: unreadable_row)");
  for (const auto& [table, n] : unreadable_rows()) {
    sample(out, "corral_store_unreadable_rows_total", label("table", table), number(n));
  }
  tenants.render(out);
  ledger.render(out);
  std::lock_guard lock(refreshed_mu_);
  if (refreshed_text_.empty()) {
    // Before the first refresh: the families, with no series yet.
    out += render_refreshed({});
  } else {
    out += refreshed_text_;
  }
  return out;
}

}  // namespace corral::server
