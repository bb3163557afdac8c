#include "core/price_book.h"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

namespace corral::core {

PriceBook::PriceBook(std::int32_t preemptible_discount_percent)
    : discount_percent_(preemptible_discount_percent) {
  CORRAL_CHECK(discount_percent_ >= 0 && discount_percent_ <= 100);
}

namespace {

// The price in effect at `at` in one (type, region) series, if any.
const MicroDollars* in_effect(const std::map<Time, MicroDollars>& series, Time at) {
  auto it = series.upper_bound(at);
  if (it == series.begin()) return nullptr;
  return &std::prev(it)->second;
}

}  // namespace

void PriceBook::set_price(const GpuTypeId& type, const std::string& region,
                          MicroDollars per_gpu_hour, Time from) {
  prices_[{type, region}][from] = per_gpu_hour;
}

Result<MicroDollars> PriceBook::price_per_gpu_hour(const GpuTypeId& type, const std::string& region,
                                                   bool preemptible, Time at) const {
  const MicroDollars* price = nullptr;
  for (const std::string& r : {region, std::string("*")}) {
    const auto it = prices_.find({type, r});
    if (it != prices_.end()) price = in_effect(it->second, at);
    if (price != nullptr) break;
  }
  if (price == nullptr) {
    return not_found(at == kLatest
                         ? fmt::format("no price for GPU type {} in region {}", type.value, region)
                         : fmt::format("no price for GPU type {} in region {} at {} ms", type.value,
                                       region, to_ms(at)));
  }
  if (!preemptible) return *price;
  return *price * (100 - discount_percent_) / 100;
}

std::vector<Time> PriceBook::changes(const GpuTypeId& type, const std::string& region, Time from,
                                     Time to) const {
  std::vector<Time> out;
  for (const std::string& r : {region, std::string("*")}) {
    const auto it = prices_.find({type, r});
    if (it == prices_.end()) continue;
    for (auto p = it->second.upper_bound(from); p != it->second.end() && p->first < to; ++p) {
      out.push_back(p->first);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Result<MicroDollars> PriceBook::cost(const GpuTypeId& type, const std::string& region,
                                     bool preemptible, std::int64_t gpu_ms, Time at) const {
  CORRAL_ASSIGN_OR_RETURN(const MicroDollars per_hour,
                          price_per_gpu_hour(type, region, preemptible, at));
  constexpr std::int64_t kMsPerHour = 3'600'000;
  // Whole hours first, then the remainder: per_hour * gpu_ms overflows 64 bits for a
  // year of a large fleet, while per_hour * (gpu_ms % 1h) cannot.
  const std::int64_t whole_hours = gpu_ms / kMsPerHour;
  const std::int64_t rest_ms = gpu_ms % kMsPerHour;
  return per_hour * whole_hours + (per_hour * rest_ms + kMsPerHour / 2) / kMsPerHour;
}

}  // namespace corral::core
