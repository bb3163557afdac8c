// GET /v1/chargeback (docs/ledger.md#chargeback), and a job's cost so far for its view.
#include <algorithm>
#include <httplib.h>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/units.h"
#include "server/api/api_routes.h"
#include "server/api/api_views.h"
#include "server/base/http_status.h"
#include "server/base/stored_documents.h"
#include "server/billing/accrual_controller.h"
#include "server/billing/bill_statement.h"
#include "server/billing/chargeback.h"

namespace corral::server {
namespace {

using core::Result;
using core::Status;
using core::Time;
using nlohmann::json;

constexpr core::Duration kDefaultWindow = core::seconds(30 * 86400);
constexpr core::Duration kMaxWindow = core::seconds(400 * 86400);

// A time parameter: milliseconds since the epoch, or a UTC date or date-time.
json time_json(Time t) { return core::to_ms(t); }

Result<std::vector<ledger::Guarantee>> guarantees(store::TenantRepo& tenants) {
  CORRAL_ASSIGN_OR_RETURN(const auto rows, tenants.list_tenants());
  std::vector<ledger::Guarantee> out;
  for (const TenantConfig& cfg : stored_tenants(rows)) {
    for (const auto& [type, q] : cfg.tenant.quotas) {
      if (q.guaranteed_milli > 0) out.push_back({cfg.tenant.id, type, q.guaranteed_milli});
    }
  }
  return out;
}

json row_json(const ChargebackRow& row, GroupBy g) {
  json buckets = json::object();
  for (const auto& [b, m] : row.buckets) buckets[b] = money_json(m);
  json out = {{to_string(g), row.key}, {"charged", money_json(row.charged)}, {"buckets", buckets}};
  if (g == GroupBy::kTenant) {
    out["attributed"] = money_json(row.attributed);
    out["totalAmountMicros"] = row.charged.amount + row.attributed.amount;
  }
  return out;
}

Result<Reply> chargeback(ApiContext& api, const Call& c, store::Tx& tx) {
  const BillingSettings& billing = api.billing;
  for (const auto& [name, value] : c.req.params) {
    static const std::set<std::string> kKnown = {"from",        "to",     "groupBy",
                                                 "attribution", "tenant", "format"};
    if (kKnown.count(name) == 0) {
      return core::invalid_argument(name,
                                    "unknown parameter (from, to, groupBy, attribution, "
                                    "tenant, format)");
    }
  }
  const std::string format = c.query("format").value_or("json");
  if (format != "json" && format != "csv") {
    return core::invalid_argument("format", "must be json or csv");
  }
  CORRAL_ASSIGN_OR_RETURN(const Time accrued, tx.ledger().accrued_until());
  Time to = accrued;
  if (const auto v = c.query("to")) {
    CORRAL_ASSIGN_OR_RETURN(to, time_param("to", *v));
  }
  Time from = to - kDefaultWindow;
  if (const auto v = c.query("from")) {
    CORRAL_ASSIGN_OR_RETURN(from, time_param("from", *v));
  }
  if (to <= from) return core::invalid_argument("to", "must be after from");
  if (to - from > kMaxWindow)
    return core::invalid_argument("from", "the window is at most 400 days");
  GroupBy group_by = GroupBy::kTenant;
  if (const auto v = c.query("groupBy")) {
    const auto g = group_by_from_string(*v);
    if (!g) return core::invalid_argument("groupBy", "must be tenant, job, gpuType, day or bucket");
    group_by = *g;
  }
  ledger::Attribution attribution = billing.attribution;
  if (const auto v = c.query("attribution")) {
    const auto a = ledger::attribution_from_string(*v);
    if (!a) return core::invalid_argument("attribution", "must be none, proportional or guarantee");
    attribution = *a;
  }
  // A member sees its own tenant only; an admin may narrow to one.
  std::optional<core::TenantId> only;
  if (c.who.role != Role::kAdmin) only = core::TenantId(c.who.tenant);
  if (const auto v = c.query("tenant")) {
    if (!valid_name(*v)) return core::invalid_argument("tenant", "must be a tenant name");
    if (!can_see_tenant(c.who, *v)) return permission_denied("may not see tenant " + *v);
    only = core::TenantId(*v);
  }
  // Spreading nobody's cost needs every tenant's use; the rows are narrowed after.
  const bool spread = group_by == GroupBy::kTenant && attribution != ledger::Attribution::kNone;
  CORRAL_ASSIGN_OR_RETURN(
      const auto sums,
      tx.ledger().sum_ledger({.from = from, .to = to, .tenant = spread ? std::nullopt : only}));
  CORRAL_ASSIGN_OR_RETURN(const auto gs, guarantees(tx.tenants()));
  const Chargeback report = build_chargeback(sums, group_by, attribution, gs, to - from);

  json rows = json::array();
  for (const auto& row : report.rows) {
    if (only && group_by == GroupBy::kTenant && row.key != only->value) continue;
    rows.push_back(row_json(row, group_by));
  }
  // A member's report by tenant holds its own row only (the rows of other groupings are
  // its own already: the sums were narrowed to it).
  StatementScope scope{.group_by = group_by,
                       .attribution = attribution,
                       .currency = billing.currency,
                       .from = from,
                       .to = to,
                       .accrued_until = accrued};
  if (only && group_by == GroupBy::kTenant) scope.only = {only->value};
  const Statement statement = bill_statement(report, scope);
  if (format == "csv") {
    Reply reply;
    reply.body = statement_csv(statement);
    reply.content_type = "text/csv; charset=utf-8";
    return reply;
  }
  std::set<core::GpuTypeId> types;
  for (const auto& s : sums) types.insert(s.gpu_type);
  json unpriced = json::array();
  for (const auto& t : billing.unpriced(types)) unpriced.push_back(t.value);
  json out = {{"fromMs", time_json(from)},
              {"toMs", time_json(to)},
              {"accruedUntilMs", time_json(accrued)},
              {"periodMs", core::to_ms(billing.period)},
              {"groupBy", to_string(group_by)},
              {"attribution", ledger::to_string(attribution)},
              {"currency", billing.currency},
              {"unpricedGpuTypes", unpriced},
              {"rows", rows},
              {"statement", statement_json(statement)}};
  if (!only) {
    out["unattributed"] = money_json(report.unattributed);
    out["total"] = money_json(report.total);
  }
  return json_reply(out);
}

}  // namespace

Result<json> job_cost_json(ApiContext& api, store::Tx& tx, const store::JobRow& job) {
  const BillingSettings& billing = api.billing;
  CORRAL_ASSIGN_OR_RETURN(const Time accrued, tx.ledger().accrued_until());
  Money ledger_part, so_far;
  std::map<std::string, Money> buckets;
  if (core::to_ms(accrued) > 0) {
    CORRAL_ASSIGN_OR_RETURN(const auto sums,
                            tx.ledger().sum_ledger({.from = Time{}, .to = accrued, .job = job.id}));
    for (const auto& s : sums) {
      ledger_part.add(s.gpu_ms, s.amount_micros);
      buckets[s.bucket].add(s.gpu_ms, s.amount_micros);
    }
  }
  so_far = ledger_part;
  // The periods not in the ledger yet, accrued for this job alone up to now: what its
  // bill will say once they close, as far as the facts so far go.
  const Time now = api.now();
  Time start = accrued;
  if (core::to_ms(start) == 0) start = period_start(job.created_at, billing.period);
  for (int i = 0; i < 48 && start < now; ++i, start += billing.period) {
    CORRAL_ASSIGN_OR_RETURN(
        const auto entries,
        accrue_period(tx, api.specs, billing,
                      {.start = start, .end = start + billing.period, .now = now, .job = job.id}));
    for (const auto& e : entries) {
      if (e.job != job.id) continue;
      so_far.add(e.gpu_ms, e.amount);
      buckets[std::string(ledger::to_string(e.bucket))].add(e.gpu_ms, e.amount);
    }
  }
  json by_bucket = json::object();
  for (const auto& [b, m] : buckets) by_bucket[b] = money_json(m);
  json out = money_json(so_far);
  out["currency"] = billing.currency;
  out["buckets"] = by_bucket;
  out["ledger"] = money_json(ledger_part);  // of the periods accrued so far
  out["accruedUntilMs"] = core::to_ms(accrued);
  return out;
}

std::vector<Route> billing_routes(ApiContext& api) {
  return {read_route("GET", "/v1/chargeback", kUsers, bind_api(api, chargeback))};
}

}  // namespace corral::server
