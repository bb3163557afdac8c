// Chargeback: the ledger's daily sums (store::LedgerSum) for a window, grouped by tenant,
// job, GPU type, day or bucket, with the unattributed cost spread by an attribution mode
// (ledger/attribution.h) when grouped by tenant. Every figure is a sum of ledger entries,
// so a tenant's month is its entries' sum to the micro-unit; attribution only adds the
// separate attributed figures beside it.
//
// Thread safety: free functions without state.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/time.h"
#include "ledger/attribution.h"
#include "store/store.h"

namespace corral::server {

enum class GroupBy { kTenant, kJob, kGpuType, kDay, kBucket };
std::optional<GroupBy> group_by_from_string(std::string_view text);
std::string_view to_string(GroupBy g);

struct Money {
  std::int64_t gpu_ms = 0;
  std::int64_t amount = 0;  // micro-units of the currency
  void add(std::int64_t ms, std::int64_t micros) {
    gpu_ms += ms;
    amount += micros;
  }
  friend bool operator==(const Money&, const Money&) = default;
};

struct ChargebackRow {
  std::string key;  // the tenant, job id, GPU type, day (UTC date) or bucket
  Money charged;    // the ledger's entries
  std::map<std::string, Money> buckets;
  Money attributed;  // grouped by tenant: its share of the unattributed cost
};

struct Chargeback {
  std::vector<ChargebackRow> rows;  // by key
  Money unattributed;               // on nobody (by tenant: after attribution took its shares)
  // By tenant: nobody's entries as the ledger has them, before attribution, by bucket.
  ChargebackRow nobody;
  Money total;  // every entry summed
};

// `sums` are the window's (all tenants' when attribution needs them).
Chargeback build_chargeback(const std::vector<store::LedgerSum>& sums, GroupBy group_by,
                            ledger::Attribution attribution,
                            const std::vector<ledger::Guarantee>& guarantees,
                            core::Duration window);

nlohmann::json money_json(const Money& m);

}  // namespace corral::server
