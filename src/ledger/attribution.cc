#include "ledger/attribution.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <string>
#include <tuple>

#include "ledger/apportion.h"

namespace corral::ledger {
namespace {

// Products of a month of a fleet's GPU-milliseconds and micro-dollars overflow 64 bits.
__extension__ typedef __int128 Wide;  // NOLINT(modernize-use-using): __extension__ needs it

}  // namespace

std::string_view to_string(Attribution mode) {
  switch (mode) {
    case Attribution::kNone:
      return "none";
    case Attribution::kProportional:
      return "proportional";
    case Attribution::kGuarantee:
      return "guarantee";
  }
  return "none";
}

std::optional<Attribution> attribution_from_string(std::string_view text) {
  for (const Attribution m :
       {Attribution::kNone, Attribution::kProportional, Attribution::kGuarantee}) {
    if (text == to_string(m)) return m;
  }
  return std::nullopt;
}

std::vector<TypeTotal> attribute(Attribution mode, const std::vector<TypeTotal>& totals,
                                 const std::vector<Guarantee>& guarantees, core::Duration window) {
  if (mode == Attribution::kNone) return {};
  std::map<core::GpuTypeId, TypeTotal> pools;
  std::map<core::GpuTypeId, std::map<core::TenantId, std::int64_t>> charged;
  for (const TypeTotal& t : totals) {
    if (t.tenant.value.empty()) {
      TypeTotal& p = pools[t.type];
      p.type = t.type;
      p.gpu_ms += t.gpu_ms;
      p.amount += t.amount;
    } else {
      charged[t.type][t.tenant] += t.gpu_ms;
    }
  }
  std::map<core::GpuTypeId, std::map<core::TenantId, std::int64_t>> guaranteed_ms;
  for (const Guarantee& g : guarantees) {
    if (g.milli > 0) guaranteed_ms[g.type][g.tenant] += g.milli * core::to_ms(window) / 1000;
  }
  std::vector<TypeTotal> out;
  for (const auto& [type, pool] : pools) {
    if (pool.gpu_ms <= 0) continue;
    std::vector<core::TenantId> tenants;
    std::vector<std::int64_t> weights;
    if (mode == Attribution::kProportional) {
      for (const auto& [tenant, ms] : charged[type]) {
        tenants.push_back(tenant);
        weights.push_back(ms);
      }
    } else {
      for (const auto& [tenant, ms] : guaranteed_ms[type]) {
        tenants.push_back(tenant);
        weights.push_back(std::max<std::int64_t>(0, ms - charged[type][tenant]));
      }
    }
    const std::int64_t weight = std::accumulate(weights.begin(), weights.end(), std::int64_t{0});
    if (weight == 0) continue;
    // Proportional spreads the whole pool; a guarantee covers at most its idle part.
    const std::int64_t covered_ms =
        mode == Attribution::kProportional ? pool.gpu_ms : std::min(weight, pool.gpu_ms);
    const auto covered_amount = static_cast<core::MicroDollars>(
        (static_cast<Wide>(pool.amount) * covered_ms + pool.gpu_ms / 2) / pool.gpu_ms);
    const std::vector<std::int64_t> ms = apportion(covered_ms, weights);
    const std::vector<std::int64_t> money = apportion(covered_amount, weights);
    for (std::size_t i = 0; i < tenants.size(); ++i) {
      if (ms[i] == 0 && money[i] == 0) continue;
      out.push_back({.tenant = tenants[i], .type = type, .gpu_ms = ms[i], .amount = money[i]});
    }
  }
  std::sort(out.begin(), out.end(), [](const TypeTotal& a, const TypeTotal& b) {
    return std::tie(a.tenant, a.type) < std::tie(b.tenant, b.type);
  });
  return out;
}

}  // namespace corral::ledger
