#include "sim/billing.h"

#include <algorithm>
#include <vector>

namespace corral::sim {
namespace {

constexpr std::int64_t kHourMs = 3'600'000;

std::int64_t hour_floor(std::int64_t ms) {
  return ms >= 0 ? ms / kHourMs : -((-ms + kHourMs - 1) / kHourMs);
}

}  // namespace

core::Result<LedgerTotals> bill(const RunResult& run, const Fleet& fleet) {
  core::PriceBook prices = fleet.prices;
  for (const core::GpuType& t : fleet.gpu_types) {
    if (!prices.price_per_gpu_hour(t.id, fleet.region, false).ok()) prices.set_price(t.id, "*", 0);
  }
  const ledger::AccrualConfig config{.period = core::Duration(kHourMs), .region = fleet.region};
  const std::int64_t first = hour_floor(run.start_ms);
  // The end of the hour of the last event (that hour itself when it ends on the hour).
  const std::int64_t last = std::max(first + 1, -hour_floor(-run.end_ms));
  // One sweep over the hours, with the holds and spans that overlap the current one:
  // memory for what is live, not for every hour a long hold spans.
  std::vector<const ledger::Hold*> holds;
  for (const ledger::Hold& h : run.accrual.holds) holds.push_back(&h);
  std::sort(holds.begin(), holds.end(),
            [](const ledger::Hold* a, const ledger::Hold* b) { return a->start < b->start; });
  std::vector<const ledger::Span*> spans;
  for (const ledger::Span& s : run.accrual.unhealthy) spans.push_back(&s);
  std::sort(spans.begin(), spans.end(),
            [](const ledger::Span* a, const ledger::Span* b) { return a->start < b->start; });
  std::size_t next_hold = 0, next_span = 0;
  std::vector<const ledger::Hold*> live_holds;
  std::vector<const ledger::Span*> live_spans;
  LedgerTotals out;
  ledger::AccrualInput in{.gpus = run.accrual.gpus};
  for (std::int64_t p = first; p < last; ++p) {
    const core::Time from = core::time_from_ms(p * kHourMs);
    const core::Time to = core::time_from_ms((p + 1) * kHourMs);
    while (next_hold < holds.size() && holds[next_hold]->start < to) {
      live_holds.push_back(holds[next_hold++]);
    }
    while (next_span < spans.size() && spans[next_span]->start < to) {
      live_spans.push_back(spans[next_span++]);
    }
    std::erase_if(live_holds, [&](const ledger::Hold* h) { return h->end && *h->end <= from; });
    std::erase_if(live_spans, [&](const ledger::Span* s) { return s->end <= from; });
    in.holds.clear();
    in.unhealthy.clear();
    for (const ledger::Hold* h : live_holds) in.holds.push_back(*h);
    for (const ledger::Span* s : live_spans) in.unhealthy.push_back(*s);
    auto entries = ledger::accrue(in, prices, config, from);
    if (!entries.ok()) return core::internal_error(entries.status().to_string());
    std::int64_t billed = 0;
    for (const ledger::Entry& e : *entries) {
      out.gpu_ms[static_cast<std::size_t>(e.bucket)] += e.gpu_ms;
      out.amount[static_cast<std::size_t>(e.bucket)] += e.amount;
      billed += e.gpu_ms;
    }
    out.residual_ms += static_cast<std::int64_t>(in.gpus.size()) * kHourMs - billed;
    out.entries += static_cast<std::int64_t>(entries->size());
    ++out.periods;
  }
  return out;
}

}  // namespace corral::sim
