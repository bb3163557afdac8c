// The simulator's bill: a run's holds and unhealthy spans (RunResult::accrual) through
// ledger::accrue(), one hour at a time, from the hour of the first submission to the end
// of the hour of the last event. It is the accrual corrald runs, so a simulated month is
// billed the way a real one is.
//
// Thread safety: a pure function.
#pragma once

#include <array>
#include <cstdint>

#include "core/price_book.h"
#include "core/result.h"
#include "ledger/accrual.h"
#include "sim/engine.h"
#include "sim/fleet.h"

namespace corral::sim {

struct LedgerTotals {
  std::array<std::int64_t, ledger::kBucketCount> gpu_ms{};        // by ledger::Bucket
  std::array<core::MicroDollars, ledger::kBucketCount> amount{};  // by ledger::Bucket
  std::int64_t periods = 0;
  std::int64_t entries = 0;
  // Σ over GPUs and periods of (period length − Σ of its entries): 0 when every
  // GPU-millisecond is billed exactly once.
  std::int64_t residual_ms = 0;
};

// A GPU type the fleet has no price for is billed at 0 (the report says prices are
// missing). Internal when the holds contradict each other (a GPU held twice at once).
core::Result<LedgerTotals> bill(const RunResult& run, const Fleet& fleet);

}  // namespace corral::sim
