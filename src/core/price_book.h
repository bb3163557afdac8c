// The price book: what one GPU-hour costs, by GPU type and region, for chargeback.
//
// Money is integer micro-dollars (1e-6 USD) so sums are exact. Preemptible work is
// billed at a discount, because the tenant accepts that it may be stopped.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "core/ids.h"
#include "core/result.h"

namespace corral::core {

using MicroDollars = std::int64_t;

class PriceBook {
 public:
  // REQUIRES: 0 <= discount_percent <= 100.
  explicit PriceBook(std::int32_t preemptible_discount_percent = 0);

  // Sets the price of one GPU-hour of `type` in `region` ("*" matches any region).
  void set_price(const GpuTypeId& type, const std::string& region, MicroDollars per_gpu_hour);

  // The price of one GPU-hour; NotFound when neither the region nor "*" has a price.
  Result<MicroDollars> price_per_gpu_hour(const GpuTypeId& type, const std::string& region,
                                          bool preemptible) const;

  // The cost of `gpu_ms` GPU-milliseconds, rounded to the nearest micro-dollar.
  Result<MicroDollars> cost(const GpuTypeId& type, const std::string& region, bool preemptible,
                            std::int64_t gpu_ms) const;

  std::int32_t preemptible_discount_percent() const { return discount_percent_; }

 private:
  std::int32_t discount_percent_;
  std::map<std::pair<GpuTypeId, std::string>, MicroDollars> prices_;
};

}  // namespace corral::core
