// The accrual controller: turns what the store knows of each closed accrual period into
// ledger entries (ledger::accrue over read_accrual_input), one period per transaction
// that also moves the watermark (accrual_state), oldest period first.
//
// A period is accrued once it ended `grace` ago, so the reports that close it (a release,
// a checkpoint, an agent's "started") are in. Its facts are read in a read transaction
// (a large fleet's period is many rows, and SQLite has one writer: submissions must not
// wait behind it); the write re-checks the watermark, so a period is never written twice.
// Re-running a period writes nothing twice: entries are keyed, and a crash between periods leaves
// the watermark at the last period committed whole. Two replicas running it at once write the same
// keys; the store keeps one. The first period is the one holding the earliest node registration.
//
// Thread safety: accrue_due() may run on any one thread at a time; start()/stop() once.
#pragma once

#include "core/clock.h"
#include "core/result.h"
#include "server/base/metrics.h"
#include "server/base/periodic.h"
#include "server/base/spec_cache.h"
#include "server/billing/accrual_input.h"
#include "server/billing/billing_config.h"
#include "store/store.h"

namespace corral::server {

struct AccrualProgress {
  std::int64_t periods = 0;  // accrued by this call
  std::int64_t entries = 0;  // written by this call (new keys only)
  core::Time accrued_until;  // the watermark after it
};

class AccrualController {
 public:
  // `ledger`, when given, counts the entries this controller inserts (/metrics).
  AccrualController(store::Store& store, const core::Clock& clock, SpecCache& specs,
                    BillingSettings settings, LedgerCounters* ledger = nullptr);
  ~AccrualController();
  AccrualController(const AccrualController&) = delete;
  AccrualController& operator=(const AccrualController&) = delete;

  void start();
  void stop();
  // Accrues the closed periods not yet accrued, at most `max_periods` of them (a corrald
  // that was down for a week catches up over several calls instead of one long one).
  core::Result<AccrualProgress> accrue_due(std::int64_t max_periods = 48);

 private:
  store::Store& store_;
  const core::Clock& clock_;
  SpecCache& specs_;
  const BillingSettings settings_;
  LedgerCounters* const ledger_;

  Periodic thread_;
};

// The entries of one period from what `tx` holds (the controller's step, and what a job's
// cost so far is computed with when `scope.now` is set).
core::Result<std::vector<ledger::Entry>> accrue_period(store::Tx& tx, SpecCache& specs,
                                                       const BillingSettings& settings,
                                                       const AccrualScope& scope);

// The start of the period of length `period` that holds `t` (periods are aligned to
// their length from the epoch).
core::Time period_start(core::Time t, core::Duration period);

// ledger::Entry as the store keeps it.
store::LedgerRow ledger_row(const ledger::Entry& e);

}  // namespace corral::server
