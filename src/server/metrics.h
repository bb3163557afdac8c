// Counters and gauges for /metrics (Prometheus text format 0.0.4). Plain atomics: the
// API threads and the scheduler loop bump them without locks.
//
// Thread safety: safe for concurrent use.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

namespace corral::server {

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
  std::atomic<std::int64_t> sched_cycle_ms_total{0};
  std::atomic<std::int64_t> sched_placements{0};
  std::atomic<std::int64_t> sched_apply_conflicts{0};
  std::atomic<std::int64_t> sched_errors{0};
  std::atomic<std::int64_t> pending_jobs{0};  // as of the last cycle
  std::atomic<std::int64_t> running_jobs{0};  // holding GPUs, as of the last cycle
  std::atomic<std::int64_t> store_errors{0};
  std::atomic<std::int64_t> job_spec_decodes{0};  // stored specs decoded by SpecCache
  std::atomic<std::int64_t> polls_waiting{0};     // agents' long polls parked right now

  std::string render() const;
};

}  // namespace corral::server
