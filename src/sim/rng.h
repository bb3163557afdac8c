// A small seeded PRNG (splitmix64) for the simulator's own draws: synthetic workloads
// and failure times. Ours rather than <random>'s distributions, whose output differs
// between standard libraries, so a seed gives the same run everywhere.
//
// Thread safety: a value type; needs external synchronization.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/splitmix.h"

namespace corral::sim {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}

  std::uint64_t next() {
    const std::uint64_t out = core::splitmix64(state_);
    state_ += 0x9e3779b97f4a7c15ULL;
    return out;
  }
  // Uniform in (0, 1): never 0, so log() is safe.
  double uniform() { return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53; }
  // Exponential with mean `mean`.
  double exponential(double mean) { return -mean * std::log(uniform()); }
  // Standard normal (Box-Muller; the second value is dropped to keep the state simple).
  double normal() {
    constexpr double kTwoPi = 6.283185307179586;
    return std::sqrt(-2.0 * std::log(uniform())) * std::cos(kTwoPi * uniform());
  }

 private:
  std::uint64_t state_;
};

}  // namespace corral::sim
