#include "server/billing/billing_config.h"

#include <cmath>
#include <string>

#include <yaml-cpp/yaml.h>

#include "core/units.h"

namespace corral::server {
namespace {

using core::Result;

Result<double> number(const YAML::Node& node, const std::string& field, double lo, double hi) {
  double v = 0;
  if (!YAML::convert<double>::decode(node, v) || !(v >= lo && v <= hi)) {
    return core::invalid_argument(
        field, "must be a number from " + std::to_string(lo) + " to " + std::to_string(hi));
  }
  return v;
}

Result<std::string> text(const YAML::Node& node, const std::string& field) {
  if (!node.IsScalar() || node.Scalar().empty()) {
    return core::invalid_argument(field, "must be a non-empty string");
  }
  return node.Scalar();
}

}  // namespace

core::PriceBook BillingSettings::priced(const std::set<core::GpuTypeId>& types) const {
  core::PriceBook book = prices;
  // Zero from the beginning of time fills only what no price covers: a type priced from
  // a date on is free before it.
  for (const auto& t : types) {
    if (!prices.price_per_gpu_hour(t, region, false, core::Time{}).ok()) book.set_price(t, "*", 0);
  }
  return book;
}

std::set<core::GpuTypeId> BillingSettings::unpriced(const std::set<core::GpuTypeId>& types) const {
  std::set<core::GpuTypeId> out;
  for (const auto& t : types) {
    if (!prices.price_per_gpu_hour(t, region, false).ok()) out.insert(t);
  }
  return out;
}

Result<BillingSettings> parse_billing_section(const YAML::Node& section) {
  if (!section.IsMap()) return core::invalid_argument("billing", "must be a map");
  BillingSettings b;
  std::int64_t discount = 0;
  YAML::Node prices;
  for (const auto& kv : section) {
    const std::string k = kv.first.as<std::string>();
    const std::string field = "billing." + k;
    const YAML::Node& v = kv.second;
    if (k == "currency") {
      CORRAL_ASSIGN_OR_RETURN(b.currency, text(v, field));
    } else if (k == "periodSeconds") {
      CORRAL_ASSIGN_OR_RETURN(const double s, number(v, field, 1, 86400));
      if (s != std::floor(s) || 86400 % static_cast<std::int64_t>(s) != 0) {
        return core::invalid_argument(field,
                                      "must be a whole number of seconds that divides a day");
      }
      b.period = core::seconds(static_cast<std::int64_t>(s));
    } else if (k == "graceSeconds") {
      CORRAL_ASSIGN_OR_RETURN(const double s, number(v, field, 0, 86400));
      b.grace = core::Duration(static_cast<std::int64_t>(s * 1000));
    } else if (k == "idleBelowPercent") {
      CORRAL_ASSIGN_OR_RETURN(const double p, number(v, field, 0, 100));
      b.idle_below = p / 100;
    } else if (k == "attribution") {
      CORRAL_ASSIGN_OR_RETURN(const std::string mode, text(v, field));
      const auto a = ledger::attribution_from_string(mode);
      if (!a) return core::invalid_argument(field, "must be none, proportional or guarantee");
      b.attribution = *a;
    } else if (k == "region") {
      CORRAL_ASSIGN_OR_RETURN(b.region, text(v, field));
    } else if (k == "preemptibleDiscountPercent") {
      CORRAL_ASSIGN_OR_RETURN(const double p, number(v, field, 0, 100));
      discount = static_cast<std::int64_t>(p);
    } else if (k == "prices") {
      if (!v.IsSequence()) return core::invalid_argument(field, "must be a list");
      prices = v;
    } else {
      return core::invalid_argument(field, "unknown field");
    }
  }
  b.prices = core::PriceBook(static_cast<std::int32_t>(discount));
  for (std::size_t i = 0; prices && i < prices.size(); ++i) {
    const std::string at = "billing.prices[" + std::to_string(i) + "]";
    const YAML::Node& p = prices[i];
    if (!p.IsMap()) return core::invalid_argument(at, "must be {gpuType, perGpuHour, from}");
    std::string type, region = "*";
    double per_hour = -1;
    core::Time from{};
    for (const auto& kv : p) {
      const std::string k = kv.first.as<std::string>();
      if (k == "gpuType") {
        CORRAL_ASSIGN_OR_RETURN(type, text(kv.second, at + ".gpuType"));
      } else if (k == "perGpuHour") {
        CORRAL_ASSIGN_OR_RETURN(per_hour, number(kv.second, at + ".perGpuHour", 0, 1e6));
      } else if (k == "region") {
        CORRAL_ASSIGN_OR_RETURN(region, text(kv.second, at + ".region"));
      } else if (k == "from") {
        CORRAL_ASSIGN_OR_RETURN(const std::string when, text(kv.second, at + ".from"));
        auto t = core::parse_utc(when);
        if (!t.ok()) return core::invalid_argument(at + ".from", t.status().message());
        from = *t;
      } else {
        return core::invalid_argument(at + "." + k, "unknown field");
      }
    }
    if (type.empty()) return core::invalid_argument(at + ".gpuType", "is required");
    if (per_hour < 0) return core::invalid_argument(at + ".perGpuHour", "is required");
    b.prices.set_price(core::GpuTypeId(type), region,
                       static_cast<core::MicroDollars>(std::llround(per_hour * 1e6)), from);
  }
  return b;
}

}  // namespace corral::server
