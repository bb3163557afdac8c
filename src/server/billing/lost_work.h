// Work lost in periods already accrued (issue 38): an attempt's hold that a preemption or
// a failure ends loses the work since its last checkpoint (lost_from, accrual_input.h).
// When that reaches back before the period being accrued, the earlier periods were billed
// while the hold still ran, as used (or idle); this moves that time to preemption_lost.
//
// Each earlier period the loss reaches is accrued again for the job, with the facts known
// now, and compared with what the ledger holds for the job in that period (its entries
// and any earlier adjustments): the differences are adjustment entries of that period,
// keyed by the period being accrued, so accruing it twice writes them once. Per GPU the
// adjustments net to zero, in milliseconds and in money (the rounding residual of the
// re-priced entries goes on the largest one), so the ledger's conservation holds in every
// period: a GPU whose re-accrued time does not net to zero (its facts changed otherwise)
// is left as it was. Adjustments move time between buckets of one tenant's job: the
// tenant's money stays what it was billed.
//
// Thread safety: a function of the transaction it reads.
#pragma once

#include <vector>

#include "core/result.h"
#include "core/time.h"
#include "ledger/accrual.h"
#include "server/base/spec_cache.h"
#include "server/billing/billing_config.h"
#include "store/store.h"

namespace corral::server {

// How far back a loss is adjusted, in periods (a checkpoint older than this is rare, and
// the re-accrual reads one period at a time).
inline constexpr std::int64_t kMaxAdjustedPeriods = 1'000;

// The adjustments for the holds in `input` (the period starting at `accruing`) that ended
// in it and lost work from before it.
core::Result<std::vector<ledger::Entry>> lost_work_adjustments(store::Tx& tx, SpecCache& specs,
                                                               const BillingSettings& settings,
                                                               const ledger::AccrualInput& input,
                                                               core::Time accruing);

}  // namespace corral::server
