#include "server/billing/accrual_controller.h"

#include <algorithm>
#include <optional>
#include <set>

#include "server/base/log.h"
#include "server/billing/accrual_input.h"
#include "server/billing/lost_work.h"

namespace corral::server {
namespace {

using core::Result;
using core::Status;
using core::Time;

Result<std::vector<ledger::Entry>> accrue_input(const ledger::AccrualInput& input,
                                                const BillingSettings& settings, Time start) {
  std::set<core::GpuTypeId> types;
  for (const auto& g : input.gpus) types.insert(g.type);
  return ledger::accrue(input, settings.priced(types), settings.accrual(), start);
}

}  // namespace

Time period_start(Time t, core::Duration period) {
  const std::int64_t p = core::to_ms(period);
  const std::int64_t ms = core::to_ms(t);
  return core::time_from_ms(ms - ((ms % p) + p) % p);
}

store::LedgerRow ledger_row(const ledger::Entry& e) {
  return {.key = e.key,
          .node = e.node,
          .gpu_index = e.index,
          .gpu_type = e.type,
          .bucket = std::string(ledger::to_string(e.bucket)),
          .tenant = e.tenant,
          .job = e.job,
          .period_start = e.start,
          .period_end = e.end,
          .gpu_ms = e.gpu_ms,
          .amount_micros = e.amount};
}

Result<std::vector<ledger::Entry>> accrue_period(store::Tx& tx, SpecCache& specs,
                                                 const BillingSettings& settings,
                                                 const AccrualScope& scope) {
  CORRAL_ASSIGN_OR_RETURN(const ledger::AccrualInput input, read_accrual_input(tx, specs, scope));
  return accrue_input(input, settings, scope.start);
}

AccrualController::AccrualController(store::Store& store, const core::Clock& clock,
                                     SpecCache& specs, BillingSettings settings,
                                     LedgerCounters* ledger)
    : store_(store),
      clock_(clock),
      specs_(specs),
      settings_(std::move(settings)),
      ledger_(ledger) {}

AccrualController::~AccrualController() { stop(); }

Result<AccrualProgress> AccrualController::accrue_due(std::int64_t max_periods) {
  AccrualProgress progress;
  const Time now = clock_.now();
  for (std::int64_t i = 0; i < max_periods; ++i) {
    std::optional<Time> from;
    std::vector<store::LedgerRow> rows;
    std::size_t counted = 0;  // the rows before the adjustments (lost_work.h)
    CORRAL_RETURN_IF_ERROR(store_.read([&](store::Tx& tx) {
      from.reset();
      rows.clear();
      CORRAL_ASSIGN_OR_RETURN(Time until, tx.ledger().accrued_until());
      progress.accrued_until = until;
      if (core::to_ms(until) == 0) {
        // Nothing accrued yet: start at the period of the first node's registration.
        CORRAL_ASSIGN_OR_RETURN(const auto nodes, tx.nodes().list_nodes());
        if (nodes.empty()) return Status();
        Time first = nodes.front().created_at;
        for (const auto& n : nodes) first = std::min(first, n.created_at);
        until = period_start(first, settings_.period);
      }
      if (until + settings_.period + settings_.grace > now) return Status();
      from = until;
      CORRAL_ASSIGN_OR_RETURN(
          const ledger::AccrualInput input,
          read_accrual_input(tx, specs_, {.start = *from, .end = *from + settings_.period}));
      CORRAL_ASSIGN_OR_RETURN(const auto entries, accrue_input(input, settings_, *from));
      rows.reserve(entries.size());
      for (const auto& e : entries) rows.push_back(ledger_row(e));
      counted = rows.size();
      CORRAL_ASSIGN_OR_RETURN(const auto adjustments,
                              lost_work_adjustments(tx, specs_, settings_, input, *from));
      for (const auto& e : adjustments) rows.push_back(ledger_row(e));
      return Status();
    }));
    if (!from) break;
    std::int64_t written = 0;
    bool raced = false;
    CORRAL_RETURN_IF_ERROR(store_.transact([&](store::Tx& tx) {
      written = 0;
      // Another replica (or a call before a crash) may have got further meanwhile.
      CORRAL_ASSIGN_OR_RETURN(const Time until, tx.ledger().accrued_until());
      raced = core::to_ms(until) != 0 && until != *from;
      if (raced) return Status();
      CORRAL_ASSIGN_OR_RETURN(written, tx.ledger().append_ledger(rows));
      return tx.ledger().set_accrued_until(*from + settings_.period);
    }));
    if (raced) continue;
    // Counted once committed, and only what this call inserted. A period's entries are
    // written whole or not at all (the watermark moves in the same transaction), so a
    // count short of the rows is a replica that wrote the same keys first: it counts them.
    // Adjustments are not counted: they take time off a bucket, and a counter never goes
    // down (/metrics counts accrual as first written; the ledger has the adjustments).
    if (ledger_ != nullptr && written == static_cast<std::int64_t>(rows.size())) {
      for (std::size_t r = 0; r < counted; ++r) {
        ledger_->add(rows[r].tenant.value, rows[r].bucket, rows[r].gpu_ms, rows[r].amount_micros);
      }
    }
    ++progress.periods;
    progress.entries += written;
    progress.accrued_until = *from + settings_.period;
  }
  return progress;
}

void AccrualController::start() {
  // A look costs one small read when nothing is due, so look every second (a quarter
  // period when periods are shorter): a period is in the ledger about a second after its
  // grace, on the clock corrald runs on (tests advance a manual one).
  const auto every =
      std::clamp<core::Duration>(settings_.period / 4, core::Duration(250), core::seconds(1));
  thread_.start(every, [this] {
    const auto r = accrue_due();
    if (!r.ok()) {
      process_log().write(
          LogEvent("accrual_failed", LogLevel::kError).add("error", r.status().to_string()));
    }
  });
}

void AccrualController::stop() { thread_.stop(); }

}  // namespace corral::server
