#include "agent/telemetry.h"

#include <algorithm>

namespace corral::agent {

void TelemetryBuffer::add(const std::vector<core::TelemetrySample>& samples) {
  std::lock_guard lock(mu_);
  samples_.insert(samples_.end(), samples.begin(), samples.end());
  trim();
}

std::vector<core::TelemetrySample> TelemetryBuffer::take(std::size_t max) {
  std::lock_guard lock(mu_);
  const std::size_t n = std::min(max, samples_.size());
  std::vector<core::TelemetrySample> out(samples_.begin(),
                                         samples_.begin() + static_cast<std::ptrdiff_t>(n));
  samples_.erase(samples_.begin(), samples_.begin() + static_cast<std::ptrdiff_t>(n));
  return out;
}

void TelemetryBuffer::put_back(const std::vector<core::TelemetrySample>& batch) {
  std::lock_guard lock(mu_);
  samples_.insert(samples_.begin(), batch.begin(), batch.end());
  trim();
}

std::size_t TelemetryBuffer::size() const {
  std::lock_guard lock(mu_);
  return samples_.size();
}

std::int64_t TelemetryBuffer::dropped() const {
  std::lock_guard lock(mu_);
  return dropped_;
}

void TelemetryBuffer::trim() {
  while (samples_.size() > capacity_) {
    samples_.pop_front();
    ++dropped_;
  }
}

core::Status sample_telemetry(Inventory& inventory, std::int64_t now_ms,
                              const std::set<std::int32_t>& busy, const Faults* faults,
                              TelemetryBuffer& buffer) {
  CORRAL_ASSIGN_OR_RETURN(std::vector<core::TelemetrySample> samples,
                          inventory.sample(now_ms, busy));
  if (faults != nullptr) apply_faults(*faults, samples);
  buffer.add(samples);
  return core::ok_status();
}

FlushResult flush_telemetry(TelemetryBuffer& buffer, std::size_t max_batch,
                            const SendTelemetry& send) {
  FlushResult out;
  // At most what was there when the flush began: samples that arrive meanwhile wait.
  std::size_t left = buffer.size();
  while (left > 0) {
    core::TelemetryBatch batch{.samples = buffer.take(std::min(left, max_batch))};
    if (batch.samples.empty()) break;
    left -= std::min(left, batch.samples.size());
    const core::Status s = send(batch);
    const auto n = static_cast<std::int64_t>(batch.samples.size());
    if (s.ok()) {
      out.sent += n;
      continue;
    }
    out.last_error = s;
    if (s.code() == core::StatusCode::kUnavailable) {
      buffer.put_back(batch.samples);
      break;
    }
    out.refused += n;
  }
  return out;
}

}  // namespace corral::agent
