#include "core/price_book.h"

#include <fmt/format.h>

namespace corral::core {

PriceBook::PriceBook(std::int32_t preemptible_discount_percent)
    : discount_percent_(preemptible_discount_percent) {
  CORRAL_CHECK(discount_percent_ >= 0 && discount_percent_ <= 100);
}

void PriceBook::set_price(const GpuTypeId& type, const std::string& region,
                          MicroDollars per_gpu_hour) {
  prices_[{type, region}] = per_gpu_hour;
}

Result<MicroDollars> PriceBook::price_per_gpu_hour(const GpuTypeId& type, const std::string& region,
                                                   bool preemptible) const {
  auto it = prices_.find({type, region});
  if (it == prices_.end()) it = prices_.find({type, "*"});
  if (it == prices_.end()) {
    return not_found(fmt::format("no price for GPU type {} in region {}", type.value, region));
  }
  if (!preemptible) return it->second;
  return it->second * (100 - discount_percent_) / 100;
}

Result<MicroDollars> PriceBook::cost(const GpuTypeId& type, const std::string& region,
                                     bool preemptible, std::int64_t gpu_ms) const {
  CORRAL_ASSIGN_OR_RETURN(const MicroDollars per_hour,
                          price_per_gpu_hour(type, region, preemptible));
  constexpr std::int64_t kMsPerHour = 3'600'000;
  // Whole hours first, then the remainder: per_hour * gpu_ms overflows 64 bits for a
  // year of a large fleet, while per_hour * (gpu_ms % 1h) cannot.
  const std::int64_t whole_hours = gpu_ms / kMsPerHour;
  const std::int64_t rest_ms = gpu_ms % kMsPerHour;
  return per_hour * whole_hours + (per_hour * rest_ms + kMsPerHour / 2) / kMsPerHour;
}

}  // namespace corral::core
