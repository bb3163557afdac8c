#include "server/billing/chargeback.h"

#include <algorithm>

#include "core/units.h"

namespace corral::server {
namespace {

std::string key_of(const store::LedgerSum& s, GroupBy g) {
  switch (g) {
    case GroupBy::kTenant:
      return s.tenant.value;
    case GroupBy::kJob:
      return std::to_string(s.job.value);
    case GroupBy::kGpuType:
      return s.gpu_type.value;
    case GroupBy::kDay:
      return core::format_utc(s.day).substr(0, 10);
    case GroupBy::kBucket:
      return s.bucket;
  }
  return "";
}

}  // namespace

std::optional<GroupBy> group_by_from_string(std::string_view text) {
  for (const GroupBy g :
       {GroupBy::kTenant, GroupBy::kJob, GroupBy::kGpuType, GroupBy::kDay, GroupBy::kBucket}) {
    if (text == to_string(g)) return g;
  }
  return std::nullopt;
}

std::string_view to_string(GroupBy g) {
  switch (g) {
    case GroupBy::kTenant:
      return "tenant";
    case GroupBy::kJob:
      return "job";
    case GroupBy::kGpuType:
      return "gpuType";
    case GroupBy::kDay:
      return "day";
    case GroupBy::kBucket:
      return "bucket";
  }
  return "tenant";
}

Chargeback build_chargeback(const std::vector<store::LedgerSum>& sums, GroupBy group_by,
                            ledger::Attribution attribution,
                            const std::vector<ledger::Guarantee>& guarantees,
                            core::Duration window) {
  Chargeback out;
  std::map<std::string, ChargebackRow> rows;
  std::map<std::pair<core::TenantId, core::GpuTypeId>, ledger::TypeTotal> per_type;
  for (const auto& s : sums) {
    out.total.add(s.gpu_ms, s.amount_micros);
    auto& t = per_type[{s.tenant, s.gpu_type}];
    t.tenant = s.tenant;
    t.type = s.gpu_type;
    t.gpu_ms += s.gpu_ms;
    t.amount += s.amount_micros;
    // By tenant, nobody's time is not a row: it is what stays unattributed.
    if (group_by == GroupBy::kTenant && s.tenant.value.empty()) {
      out.unattributed.add(s.gpu_ms, s.amount_micros);
      out.nobody.charged.add(s.gpu_ms, s.amount_micros);
      out.nobody.buckets[s.bucket].add(s.gpu_ms, s.amount_micros);
      continue;
    }
    ChargebackRow& row = rows[key_of(s, group_by)];
    row.key = key_of(s, group_by);
    row.charged.add(s.gpu_ms, s.amount_micros);
    row.buckets[s.bucket].add(s.gpu_ms, s.amount_micros);
  }
  if (group_by == GroupBy::kTenant) {
    std::vector<ledger::TypeTotal> totals;
    for (const auto& [k, t] : per_type) totals.push_back(t);
    for (const auto& share : ledger::attribute(attribution, totals, guarantees, window)) {
      ChargebackRow& row = rows[share.tenant.value];
      row.key = share.tenant.value;
      row.attributed.add(share.gpu_ms, share.amount);
      out.unattributed.add(-share.gpu_ms, -share.amount);
    }
  }
  for (auto& [k, row] : rows) out.rows.push_back(std::move(row));
  return out;
}

nlohmann::json money_json(const Money& m) {
  return {{"gpuMs", m.gpu_ms},
          {"gpuHours", static_cast<double>(m.gpu_ms) / 3.6e6},
          {"amountMicros", m.amount}};
}

}  // namespace corral::server
