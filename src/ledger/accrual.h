// Accrual: what every GPU did with every millisecond of one accrual period, as ledger
// entries. The input is what the store (or the simulator) knows of the period: which
// attempt held each GPU and how that hold ended, when GPUs were unhealthy or their node
// drained, which free GPUs a reservation held, and utilization samples. The output puts
// each GPU-millisecond in exactly one bucket (docs/ledger.md), so per GPU the entries add
// up to the period's length with zero residual, and prices each entry by the price book.
//
// A GPU-millisecond goes to the first of these that holds for it:
//   unhealthy        the GPU was unhealthy
//   drained          its node was draining or cordoned, and no job held the GPU
//   restart_overhead held by an attempt, inside the start-up and restore time at its start,
//                    or after a stop was asked of it (checkpointing on its way out)
//   preemption_lost  held by an attempt that a preemption or failure ended, after the
//                    attempt's last checkpoint (the work thrown away)
//   allocated_idle   held, and the last utilization sample of the attempt was under the
//                    idle threshold (of samples at one time, the last in the input)
//   used             held (busy, or no sample yet: telemetry is best effort, and its
//                    absence must not turn a tenant's work into idle time)
//   reserved_idle    free, but held back for a reservation (its tenant pays for it)
//   unallocated      free
// A drained node's GPUs that a job still holds (it is checkpointing out) stay the job's.
//
// A GPU held by shares (Hold::share_milli) splits each stretch of time by their shares:
// each share's part goes to its own bucket by the rules above, and the part no share holds
// to the free GPU's (drained, reserved_idle, unallocated). Each stretch's milliseconds are
// split exactly (largest remainders), so the GPU still adds up with zero residual.
//
// Entries are per (GPU, bucket, job) for the period, with an idempotency key made of those
// and the period, so accruing the same period twice (a retry after a crash, two replicas)
// gives the same keys and the store keeps one of each. Periods are aligned to their length.
//
// Money: an entry's amount is its milliseconds at each price in effect during the period
// (the price book's effective dates cut the period where a GPU type's price changes),
// each stretch of one price rounded once to the micro-dollar.
//
// Pure: no I/O, no clock; the same input gives the same entries, in the same order.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ids.h"
#include "core/price_book.h"
#include "core/result.h"
#include "core/time.h"

namespace corral::ledger {

enum class Bucket {
  kUsed,
  kAllocatedIdle,
  kReservedIdle,
  kPreemptionLost,
  kRestartOverhead,
  kUnhealthy,
  kDrained,
  kUnallocated,
};
std::string_view to_string(Bucket bucket);
inline constexpr int kBucketCount = 8;

struct Gpu {
  core::NodeId node;
  std::int32_t index = 0;
  core::GpuTypeId type;
  // When the GPU joined the fleet: a node registered mid-period is accounted from then,
  // so its entries add up to the part of the period it existed.
  core::Time since{};
  friend auto operator<=>(const Gpu&, const Gpu&) = default;
};

// One attempt's hold of one GPU, [start, end); no end: still held.
struct Hold {
  core::NodeId node;
  std::int32_t index = 0;
  core::JobId job;
  std::int32_t attempt = 0;
  core::TenantId tenant;
  bool preemptible = false;  // billed at the price book's preemptible discount
  core::Time start;
  std::optional<core::Time> end;
  core::Duration overhead{0};  // start-up and restore at its start: restart_overhead
  // A share of the GPU in thousandths (1-999; the shares holding a GPU at once add up to at
  // most 1000); 0: the whole GPU.
  std::int32_t share_milli = 0;
  // Set when a stop was asked of the attempt (a preemption, a drain): from here to its end
  // it was checkpointing and stopping, restart_overhead.
  std::optional<core::Time> stopping_from;
  // Set when a preemption or a failure ended the hold: the work from here to its end (the
  // attempt's last checkpoint, or its start) was lost.
  std::optional<core::Time> lost_from;
};

// A span [start, end) of one GPU: unhealthy, on a drained node, or held for a reservation.
struct Span {
  core::NodeId node;
  std::int32_t index = 0;
  core::Time start;
  core::Time end;
  core::TenantId tenant;  // reservations: who pays for the time left unused
};

struct Sample {
  core::NodeId node;
  std::int32_t index = 0;
  core::Time time;
  double utilization = 0;  // 0 to 1
};

struct AccrualInput {
  std::vector<Gpu> gpus;  // every GPU of the fleet during the period
  std::vector<Hold> holds;
  std::vector<Span> unhealthy;
  std::vector<Span> drained;
  std::vector<Span> reserved;
  std::vector<Sample> samples;
};

struct AccrualConfig {
  core::Duration period = core::seconds(3600);
  double idle_below = 0.05;  // utilization under this is allocated_idle
  std::string region = "*";  // for the price book
};

struct Entry {
  std::string key;  // idempotency: node/gpu/period start ms/bucket/job/tenant
  core::NodeId node;
  std::int32_t index = 0;
  core::GpuTypeId type;
  Bucket bucket = Bucket::kUnallocated;
  core::TenantId tenant;  // empty: nobody (unallocated, unhealthy, drained)
  core::JobId job;        // 0: no job
  core::Time start;       // the period
  core::Time end;
  std::int64_t gpu_ms = 0;
  core::MicroDollars amount = 0;
  friend bool operator==(const Entry&, const Entry&) = default;
};

// The entries of the period starting at `start` (a multiple of config.period), by GPU
// (node, index), then bucket, then job. InvalidArgument for a misaligned period, a hold
// of a GPU the input does not list, a GPU held whole by one hold while another holds it,
// shares of one GPU adding up to more than it, or a GPU type without a price.
core::Result<std::vector<Entry>> accrue(const AccrualInput& input, const core::PriceBook& prices,
                                        const AccrualConfig& config, core::Time start);

}  // namespace corral::ledger
