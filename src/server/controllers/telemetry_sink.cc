#include "server/controllers/telemetry_sink.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "server/base/log.h"

namespace corral::server {

using core::Status;

TelemetrySink::TelemetrySink(store::Store& store, const core::Clock& clock,
                             TelemetrySettings settings)
    : store_(store), clock_(clock), settings_(settings) {}

TelemetrySink::~TelemetrySink() { stop(); }

TelemetryOffer TelemetrySink::offer(const std::string& node,
                                    const std::vector<core::TelemetrySample>& samples) {
  const std::int64_t minute = core::to_ms(clock_.now()) / 60'000;
  std::lock_guard lock(mu_);
  if (windows_.size() > 100'000) windows_.clear();  // nodes gone: never grows without bound
  Window& w = windows_[node];
  if (w.minute != minute) w = Window{.minute = minute, .count = 0};
  const std::int64_t by_rate =
      std::max<std::int64_t>(0, settings_.node_samples_per_minute - w.count);
  const std::int64_t by_room =
      std::max<std::int64_t>(0, settings_.queue_samples - static_cast<std::int64_t>(queue_.size()));
  const std::int64_t n = static_cast<std::int64_t>(samples.size());
  const std::int64_t take = std::min({n, by_rate, by_room});
  // Counted against the cap that refused them first: the node's rate, then the queue.
  stats_.dropped_rate += n - std::min(n, by_rate);
  stats_.dropped_queue += std::min(n, by_rate) - take;
  stats_.accepted += take;
  w.count += take;
  for (std::int64_t i = 0; i < take; ++i) {
    const core::TelemetrySample& s = samples[static_cast<std::size_t>(i)];
    std::vector<std::string> throttle = s.throttle;
    std::sort(throttle.begin(), throttle.end());
    queue_.push_back({.node = core::NodeId(node),
                      .gpu_index = s.gpu,
                      .time = core::time_from_ms(s.time_ms),
                      .utilization = s.utilization,
                      .memory_used_mib = s.memory_used_mib,
                      .power_watts = s.power_w,
                      .temperature_c = s.temperature_c,
                      .throttle = std::move(throttle),
                      .ecc_corrected = s.ecc_corrected,
                      .ecc_uncorrected = s.ecc_uncorrected});
  }
  return {.accepted = take, .dropped = n - take};
}

Status TelemetrySink::flush_once() {
  std::vector<store::TelemetryRow> batch;
  {
    std::lock_guard lock(mu_);
    const auto n =
        std::min<std::size_t>(queue_.size(), static_cast<std::size_t>(settings_.max_write_samples));
    if (n == 0) return Status();
    if (n == queue_.size()) {
      batch.swap(queue_);
    } else {
      batch.assign(std::make_move_iterator(queue_.begin()),
                   std::make_move_iterator(queue_.begin() + static_cast<std::ptrdiff_t>(n)));
      queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
    }
  }
  // The write holds no lock: offer() keeps answering meanwhile.
  const Status s =
      store_.transact([&](store::Tx& tx) { return tx.records().insert_telemetry_batch(batch); });
  std::lock_guard lock(mu_);
  if (s.ok()) {
    stats_.written += static_cast<std::int64_t>(batch.size());
  } else {
    // Best effort: dropped, never retried (a retry would only grow the backlog of a store
    // that is already failing).
    stats_.dropped_failed += static_cast<std::int64_t>(batch.size());
    ++stats_.write_failures;
  }
  return s;
}

Status TelemetrySink::prune_once() {
  const core::Time now = clock_.now();
  const store::TelemetryCutoffs cutoffs{
      .raw = now - core::Duration(settings_.raw_retention_ms),
      .minute = now - core::Duration(settings_.minute_retention_ms),
      .hour = now - core::Duration(settings_.hour_retention_ms)};
  std::int64_t deleted = 0;
  CORRAL_RETURN_IF_ERROR(store_.transact([&](store::Tx& tx) {
    CORRAL_ASSIGN_OR_RETURN(deleted, tx.records().delete_telemetry_before(cutoffs));
    return Status();
  }));
  std::lock_guard lock(mu_);
  stats_.pruned += deleted;
  return Status();
}

void TelemetrySink::start() {
  const core::Duration period(std::max<std::int64_t>(1, settings_.flush_ms));
  // The first prune waits a period too: a start is no reason to delete. The task's state
  // lives in the lambda: only the writer thread touches it.
  thread_.start(period, [this, last_prune = clock_.now(), last_error = Status()]() mutable {
    Status s = flush_once();
    if (clock_.now() - last_prune >= core::Duration(settings_.prune_every_ms)) {
      last_prune = clock_.now();
      const Status pruned = prune_once();
      if (s.ok()) s = pruned;
    }
    // One line per kind of failure, not one per flush of a store that stays down.
    if (!s.ok() && s.to_string() != last_error.to_string()) {
      process_log().write(LogEvent("telemetry_dropped", LogLevel::kWarn)
                              .add("error", s.to_string())
                              .add("reason", "best effort: the batch is dropped"));
    }
    last_error = s;
  });
}

void TelemetrySink::stop() { thread_.stop(); }

TelemetryStats TelemetrySink::stats() const {
  std::lock_guard lock(mu_);
  TelemetryStats out = stats_;
  out.queued = static_cast<std::int64_t>(queue_.size());
  return out;
}

}  // namespace corral::server
