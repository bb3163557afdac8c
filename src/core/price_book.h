// The price book: what one GPU-hour costs, by GPU type and region, for chargeback.
//
// Money is integer micro-dollars (1e-6 USD) so sums are exact. Preemptible work is
// billed at a discount, because the tenant accepts that it may be stopped. A price has an
// effective date: a change applies from its date on, and what was billed before it stays
// at the old price.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/ids.h"
#include "core/result.h"
#include "core/time.h"

namespace corral::core {

using MicroDollars = std::int64_t;

class PriceBook {
 public:
  // REQUIRES: 0 <= discount_percent <= 100.
  explicit PriceBook(std::int32_t preemptible_discount_percent = 0);

  static constexpr Time kLatest = Time::max();

  // Sets the price of one GPU-hour of `type` in `region` ("*" matches any region) from
  // `from` on (the default: since always). A region's own prices take precedence over
  // "*" from the first of their dates.
  void set_price(const GpuTypeId& type, const std::string& region, MicroDollars per_gpu_hour,
                 Time from = Time{});

  // The price of one GPU-hour at `at`; NotFound when neither the region nor "*" has a
  // price in effect then.
  Result<MicroDollars> price_per_gpu_hour(const GpuTypeId& type, const std::string& region,
                                          bool preemptible, Time at = kLatest) const;

  // The cost of `gpu_ms` GPU-milliseconds at the price in effect at `at`, rounded to the
  // nearest micro-dollar.
  Result<MicroDollars> cost(const GpuTypeId& type, const std::string& region, bool preemptible,
                            std::int64_t gpu_ms, Time at = kLatest) const;

  // The dates in (from, to) at which the price of `type` in `region` changes, ascending:
  // where a bill for [from, to) must be cut.
  std::vector<Time> changes(const GpuTypeId& type, const std::string& region, Time from,
                            Time to) const;

  std::int32_t preemptible_discount_percent() const { return discount_percent_; }

 private:
  std::int32_t discount_percent_;
  // (type, region) -> effective date -> price per GPU-hour.
  std::map<std::pair<GpuTypeId, std::string>, std::map<Time, MicroDollars>> prices_;
};

}  // namespace corral::core
