// Splitting an integer total in proportion to integer weights, exactly: the ledger's way
// to divide GPU-milliseconds and micro-dollars without a residual (attribution of unused
// time, shares of a GPU in accrual).
#pragma once

#include <cstdint>
#include <vector>

namespace corral::ledger {

// `total` split in proportion to `weights` (not all zero), each part rounded down and the
// remainder given one unit at a time to the largest fractions (the first on ties): the
// parts always add up to `total`. Products are taken in 128 bits (a month of a fleet's
// GPU-milliseconds times micro-dollars overflows 64).
std::vector<std::int64_t> apportion(std::int64_t total, const std::vector<std::int64_t>& weights);

}  // namespace corral::ledger
