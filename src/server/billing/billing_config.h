// corrald's `billing:` config section: what the ledger's accrual controller and the
// chargeback report need.
//
//   billing:
//     currency: USD                  # the unit of every amount (integer micro-units)
//     periodSeconds: 3600            # accrual period; divides a day
//     graceSeconds: 60               # a period is accrued this long after it ends
//     idleBelowPercent: 5            # held GPUs under this utilization: allocated_idle
//     attribution: none              # none | proportional | guarantee (ledger/attribution.h)
//     region: "*"                    # the price book's region for this cluster
//     preemptibleDiscountPercent: 30
//     prices:                        # per GPU-hour, each from its date on (default: always)
//       - {gpuType: H100, perGpuHour: 2.50}
//       - {gpuType: H100, perGpuHour: 2.10, from: 2027-01-01}
//
// A GPU type without a price is billed at 0 (its GPU-time still is in the ledger), and
// the chargeback report lists it as unpriced.
//
// Thread safety: a value type.
#pragma once

#include <set>
#include <string>

#include "core/ids.h"
#include "core/price_book.h"
#include "core/result.h"
#include "core/time.h"
#include "ledger/accrual.h"
#include "ledger/attribution.h"

namespace YAML {
class Node;
}  // namespace YAML

namespace corral::server {

struct BillingSettings {
  std::string currency = "USD";
  core::Duration period = core::seconds(3600);
  core::Duration grace = core::seconds(60);
  double idle_below = 0.05;
  ledger::Attribution attribution = ledger::Attribution::kNone;
  std::string region = "*";
  core::PriceBook prices;

  ledger::AccrualConfig accrual() const {
    return {.period = period, .idle_below = idle_below, .region = region};
  }
  // The price book with every type of `types` priced at 0 wherever no price covers it.
  core::PriceBook priced(const std::set<core::GpuTypeId>& types) const;
  // The types of `types` that have no price at all.
  std::set<core::GpuTypeId> unpriced(const std::set<core::GpuTypeId>& types) const;
};

// Reads the section; InvalidArgument names the key ("billing.prices[1].from").
core::Result<BillingSettings> parse_billing_section(const YAML::Node& section);

}  // namespace corral::server
