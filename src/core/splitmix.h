// SplitMix64's step (Steele, Lea and Flood, OOPSLA 2014): a 64-bit mix whose output is the
// same on every platform and library, for draws a seed must decide everywhere (the
// simulator's, the simulated inventory's, a sweep's trials'); <random>'s distributions
// differ between standard libraries.
//
// Thread safety: a pure function.
#pragma once

#include <cstdint>

namespace corral::core {

// The output for state `x`; the generator's next state is x + 0x9e3779b97f4a7c15.
inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A uniform draw in [0, 1) from the top 53 bits of `bits`.
inline double unit_interval(std::uint64_t bits) {
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

}  // namespace corral::core
