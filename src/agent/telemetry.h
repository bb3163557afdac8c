// The agent's telemetry (docs/telemetry.md): a sampler reads every GPU every
// interval_ms into a bounded buffer; a sender posts what is buffered every flush_ms, in
// batches of at most max_batch, to POST /v1/agents/{node}/telemetry. Both run on threads
// of their own with their own HTTP connection (agent.cc), so the heartbeat and the long
// poll never wait for telemetry, and telemetry never for them.
//
// Best effort: while corrald cannot be reached a batch is kept and retried at the next
// flush, but the buffer holds at most max_buffered samples and drops the oldest beyond
// that; a batch corrald refuses for good (400, 403, fenced) is dropped.
//
// Thread safety: TelemetryBuffer is safe for concurrent use; the functions need only it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <set>
#include <vector>

#include "agent/faults.h"
#include "agent/inventory.h"
#include "core/agent_protocol.h"
#include "core/status.h"

namespace corral::agent {

struct TelemetryOptions {
  std::int64_t interval_ms = 5000;  // --telemetry-interval; 0 turns telemetry off
  std::int64_t flush_ms = 10000;    // --telemetry-flush
  std::size_t max_buffered = 20000;
  // Samples per POST: well under corrald's 1 MiB body limit (~150 bytes a sample).
  std::size_t max_batch = 2000;
};

class TelemetryBuffer {
 public:
  explicit TelemetryBuffer(std::size_t capacity) : capacity_(capacity) {}

  // Appends, dropping the oldest samples beyond capacity.
  void add(const std::vector<core::TelemetrySample>& samples);
  // Removes and returns up to `max` of the oldest samples.
  std::vector<core::TelemetrySample> take(std::size_t max);
  // Puts a batch that could not be sent back in front (it is older than what came since),
  // dropping the oldest beyond capacity.
  void put_back(const std::vector<core::TelemetrySample>& batch);

  std::size_t size() const;
  std::int64_t dropped() const;  // samples dropped for room, since the start

 private:
  void trim();  // REQUIRES: mu_ held

  const std::size_t capacity_;
  mutable std::mutex mu_;
  std::deque<core::TelemetrySample> samples_;
  std::int64_t dropped_ = 0;
};

// One sampling round: reads `inventory` (the caller holds whatever guards it) with the
// GPUs in `busy` loaded, overlays `faults` (simulated inventories only) and buffers the
// samples.
core::Status sample_telemetry(Inventory& inventory, std::int64_t now_ms,
                              const std::set<std::int32_t>& busy, const Faults* faults,
                              TelemetryBuffer& buffer);

using SendTelemetry = std::function<core::Status(const core::TelemetryBatch&)>;

// What one flush did.
struct FlushResult {
  std::int64_t sent = 0;     // samples corrald took (202)
  std::int64_t refused = 0;  // samples of batches refused for good, dropped
  core::Status last_error;   // the last failure, OK when none
};

// Sends the buffer's samples in batches of at most `max_batch` until it is empty or a
// send fails with Unavailable (that batch goes back; the rest waits for the next flush).
// Any other failure drops its batch and goes on with the next.
FlushResult flush_telemetry(TelemetryBuffer& buffer, std::size_t max_batch,
                            const SendTelemetry& send);

}  // namespace corral::agent
