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
  const std::int64_t last = hour_floor(run.end_ms) + 1;  // periods [first, last)
  // Each hold and span, in every period it overlaps.
  const auto periods_of = [&](core::Time start, core::Time end) {
    const std::int64_t from = std::max(first, hour_floor(core::to_ms(start)));
    const std::int64_t to =
        std::min(last - 1, hour_floor(std::min(core::to_ms(end), last * kHourMs) - 1));
    return std::pair{from, to};
  };
  std::vector<ledger::AccrualInput> by_period(static_cast<std::size_t>(last - first));
  for (const ledger::Hold& h : run.accrual.holds) {
    const auto [from, to] = periods_of(h.start, h.end.value_or(core::Time::max()));
    for (std::int64_t p = from; p <= to; ++p) by_period[p - first].holds.push_back(h);
  }
  for (const ledger::Span& s : run.accrual.unhealthy) {
    const auto [from, to] = periods_of(s.start, s.end);
    for (std::int64_t p = from; p <= to; ++p) by_period[p - first].unhealthy.push_back(s);
  }
  LedgerTotals out;
  for (std::int64_t p = first; p < last; ++p) {
    ledger::AccrualInput& in = by_period[p - first];
    in.gpus = run.accrual.gpus;
    auto entries = ledger::accrue(in, prices, config, core::time_from_ms(p * kHourMs));
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
    in = {};  // this period's copy is done with
  }
  return out;
}

}  // namespace corral::sim
