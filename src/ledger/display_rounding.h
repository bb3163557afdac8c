// Display rounding for bills: a column of exact figures (GPU-milliseconds, micro-units of
// a currency) shown in coarser units (hundredths of a GPU-hour, cents) so that the shown
// rows add up exactly to the shown total.
//
// Rounding each row on its own does not: three rows of $0.016667 show $0.02 each, $0.06
// together, beside a total of $0.05. Here the total is rounded once (half away from zero)
// and the rows share it by largest remainder: each row gets its value rounded down, and
// the units left over go one each to the rows with the largest fractions (the first row
// on ties). Every row is then its exact value rounded down or up, never further off.
//
// Pure: no I/O, no state.
#pragma once

#include <cstdint>
#include <vector>

namespace corral::ledger {

struct RoundedColumn {
  std::vector<std::int64_t> rows;  // in units of `unit`
  std::int64_t total = 0;          // in units of `unit`; the sum of `rows`
};

// `values` (any sign) shown in units of `unit` (> 0): 10'000 micro-units is a cent,
// 36'000 ms a hundredth of a GPU-hour.
RoundedColumn round_to_total(const std::vector<std::int64_t>& values, std::int64_t unit);

}  // namespace corral::ledger
