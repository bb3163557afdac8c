#include "ledger/display_rounding.h"

#include <algorithm>
#include <numeric>

namespace corral::ledger {
namespace {

// Floor division and its remainder in [0, unit), for either sign of `v`.
std::int64_t floor_div(std::int64_t v, std::int64_t unit) {
  const std::int64_t q = v / unit;
  return (v % unit != 0 && v < 0) ? q - 1 : q;
}

}  // namespace

RoundedColumn round_to_total(const std::vector<std::int64_t>& values, std::int64_t unit) {
  RoundedColumn out;
  out.rows.resize(values.size());
  std::int64_t exact = 0;
  std::int64_t floors = 0;
  std::vector<std::pair<std::int64_t, std::size_t>> fractions;  // remainder, row
  for (std::size_t i = 0; i < values.size(); ++i) {
    exact += values[i];
    out.rows[i] = floor_div(values[i], unit);
    floors += out.rows[i];
    fractions.push_back({values[i] - out.rows[i] * unit, i});
  }
  // Half away from zero, as a single figure would be shown.
  const std::int64_t half = unit / 2;
  out.total = exact >= 0 ? floor_div(exact + half, unit) : -floor_div(-exact + half, unit);
  // The units the floors left over: as the remainders are each under one unit, this is
  // between 0 and the number of rows.
  std::int64_t left = out.total - floors;
  std::stable_sort(fractions.begin(), fractions.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t k = 0; left > 0 && k < fractions.size(); ++k, --left) {
    ++out.rows[fractions[k].second];
  }
  return out;
}

}  // namespace corral::ledger
