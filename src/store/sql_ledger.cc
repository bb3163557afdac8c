// LedgerRepo over SQL: ledger_entries with their daily sums (ledger_daily), the accrual
// watermark (accrual_state) and the GPU state history (gpu_state_spans).
#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "store/internal/sql_rows.h"
#include "store/internal/sql_tx.h"

namespace corral::store::detail {
namespace {

using core::Result;
using core::Status;

constexpr std::int64_t kDayMs = 86'400'000;
constexpr std::string_view kEntryColumns =
    "idempotency_key, node, gpu_index, gpu_type, bucket, tenant, job_id, period_start, "
    "period_end, gpu_ms, amount_micros";
constexpr std::string_view kSpanColumns = "node, gpu_index, kind, reason, start_at, end_at";

std::int64_t day_of(std::int64_t t_ms) { return t_ms - ((t_ms % kDayMs) + kDayMs) % kDayMs; }

using SumKey = std::tuple<std::int64_t, std::string, std::int64_t, std::string, std::string>;

// " AND tenant = $n AND job_id = $m" for the query's filters, with their parameters.
std::string filters(const LedgerQuery& query, std::vector<SqlValue>& params) {
  std::string out;
  if (query.tenant) {
    params.emplace_back(query.tenant->value);
    out += " AND tenant = $" + std::to_string(params.size());
  }
  if (query.job) {
    params.emplace_back(query.job->value);
    out += " AND job_id = $" + std::to_string(params.size());
  }
  return out;
}

}  // namespace

Result<std::int64_t> SqlTx::append_ledger(const std::vector<LedgerRow>& rows) {
  std::map<SumKey, std::pair<std::int64_t, std::int64_t>> daily;  // only the new entries
  std::int64_t fresh = 0;
  for (const LedgerRow& e : rows) {
    CORRAL_ASSIGN_OR_RETURN(
        auto res, q(cat("INSERT INTO ledger_entries (", kEntryColumns,
                        ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT "
                        "(idempotency_key) DO NOTHING"),
                    {e.key, e.node.value, std::int64_t{e.gpu_index}, e.gpu_type.value, e.bucket,
                     e.tenant.value, e.job.value, ms(e.period_start), ms(e.period_end), e.gpu_ms,
                     e.amount_micros}));
    if (res.affected != 1) continue;
    ++fresh;
    auto& sum = daily[{day_of(ms(e.period_start)), e.tenant.value, e.job.value, e.gpu_type.value,
                       e.bucket}];
    sum.first += e.gpu_ms;
    sum.second += e.amount_micros;
  }
  for (const auto& [k, sum] : daily) {
    const auto& [day, tenant, job, type, bucket] = k;
    CORRAL_RETURN_IF_ERROR(
        q("INSERT INTO ledger_daily (day, tenant, job_id, gpu_type, bucket, gpu_ms, "
          "amount_micros) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (day, tenant, job_id, "
          "gpu_type, bucket) DO UPDATE SET gpu_ms = ledger_daily.gpu_ms + excluded.gpu_ms, "
          "amount_micros = ledger_daily.amount_micros + excluded.amount_micros",
          {day, tenant, job, type, bucket, sum.first, sum.second})
            .status());
  }
  return fresh;
}

Result<std::vector<LedgerRow>> SqlTx::list_ledger(const LedgerQuery& query) {
  std::vector<SqlValue> params = {ms(query.from), ms(query.to)};
  const std::string where = filters(query, params);
  CORRAL_ASSIGN_OR_RETURN(
      auto res, q(cat("SELECT ", kEntryColumns,
                      cat(" FROM ledger_entries WHERE period_start >= $1 AND period_start < $2",
                          where, " ORDER BY period_start, node, gpu_index, idempotency_key")),
                  std::move(params)));
  return read_rows<LedgerRow>(res, "ledger_entries", kEntryColumns, [](RowReader& in) {
    return LedgerRow{.key = in.str(0),
                     .node = core::NodeId(in.str(1)),
                     .gpu_index = in.i32(2),
                     .gpu_type = core::GpuTypeId(in.str(3)),
                     .bucket = in.str(4),
                     .tenant = core::TenantId(in.str(5)),
                     .job = core::JobId(in.i64(6)),
                     .period_start = in.time(7),
                     .period_end = in.time(8),
                     .gpu_ms = in.i64(9),
                     .amount_micros = in.i64(10)};
  });
}

Result<std::vector<LedgerSum>> SqlTx::sum_ledger(const LedgerQuery& query) {
  const std::int64_t from = ms(query.from);
  const std::int64_t to = ms(query.to);
  std::map<SumKey, std::pair<std::int64_t, std::int64_t>> sums;
  const auto add = [&](const SqlResult& res, std::string_view table) -> Status {
    constexpr std::string_view kCols = "day, tenant, job_id, gpu_type, bucket, gpu_ms, amount";
    for (const auto& r : res.rows) {
      RowReader in(r, table, kCols);
      auto& sum = sums[{in.i64(0), in.str(1), in.i64(2), in.str(3), in.str(4)}];
      sum.first += in.i64(5);
      sum.second += in.i64(6);
      if (!in.ok()) return in.status();
    }
    return Status();
  };
  // Whole days [first, last) from the daily sums; the cut days at either end from the
  // entries themselves.
  const std::int64_t first = std::min(day_of(from + kDayMs - 1), std::max(from, to));
  const std::int64_t last = std::max(first, day_of(to));
  if (first < last) {
    std::vector<SqlValue> params = {first, last};
    const std::string where = filters(query, params);
    CORRAL_ASSIGN_OR_RETURN(
        auto res, q(cat("SELECT day, tenant, job_id, gpu_type, bucket, gpu_ms, amount_micros FROM "
                        "ledger_daily WHERE day >= $1 AND day < $2",
                        where),
                    std::move(params)));
    CORRAL_RETURN_IF_ERROR(add(res, "ledger_daily"));
  }
  for (const auto& [a, b] : {std::pair(from, first), std::pair(last, to)}) {
    if (a >= b) continue;
    std::vector<SqlValue> params = {a, b};
    const std::string where = filters(query, params);
    CORRAL_ASSIGN_OR_RETURN(
        auto res,
        q(cat("SELECT period_start - (period_start % 86400000), tenant, job_id, gpu_type, "
              "bucket, SUM(gpu_ms), SUM(amount_micros) FROM ledger_entries WHERE period_start "
              ">= $1 AND period_start < $2",
              where,
              " GROUP BY period_start - (period_start % 86400000), tenant, job_id, "
              "gpu_type, bucket"),
          std::move(params)));
    CORRAL_RETURN_IF_ERROR(add(res, "ledger_entries"));
  }
  std::vector<LedgerSum> out;
  out.reserve(sums.size());
  for (const auto& [k, sum] : sums) {
    const auto& [day, tenant, job, type, bucket] = k;
    out.push_back({.day = core::time_from_ms(day),
                   .tenant = core::TenantId(tenant),
                   .job = core::JobId(job),
                   .gpu_type = core::GpuTypeId(type),
                   .bucket = bucket,
                   .gpu_ms = sum.first,
                   .amount_micros = sum.second});
  }
  return out;
}

Result<core::Time> SqlTx::accrued_until() {
  CORRAL_ASSIGN_OR_RETURN(auto res,
                          q("SELECT accrued_until FROM accrual_state WHERE name = 'ledger'", {}));
  if (res.rows.empty()) return core::Time{};
  RowReader in(res.rows[0], "accrual_state", "accrued_until");
  const core::Time until = in.time(0);
  if (!in.ok()) return in.status();
  return until;
}

Status SqlTx::set_accrued_until(core::Time until) {
  // Never backwards: a replica that lags behind cannot undo another's progress.
  return q("INSERT INTO accrual_state (name, accrued_until) VALUES ('ledger', $1) ON CONFLICT "
           "(name) DO UPDATE SET accrued_until = CASE WHEN excluded.accrued_until > "
           "accrual_state.accrued_until THEN excluded.accrued_until ELSE "
           "accrual_state.accrued_until END",
           {ms(until)})
      .status();
}

Status SqlTx::open_gpu_state(const GpuStateSpan& s) {
  return q("INSERT INTO gpu_state_spans (node, gpu_index, kind, reason, start_at) SELECT $1, $2, "
           "$3, $4, $5 WHERE NOT EXISTS (SELECT 1 FROM gpu_state_spans WHERE node = $1 AND "
           "gpu_index = $2 AND kind = $3 AND end_at IS NULL)",
           {s.node.value, std::int64_t{s.gpu_index}, s.kind, s.reason, ms(s.start)})
      .status();
}

Status SqlTx::close_gpu_state(const core::NodeId& node, std::int32_t gpu_index,
                              const std::string& kind, core::Time end) {
  return q("UPDATE gpu_state_spans SET end_at = $4 WHERE node = $1 AND gpu_index = $2 AND kind "
           "= $3 AND end_at IS NULL",
           {node.value, std::int64_t{gpu_index}, kind, ms(end)})
      .status();
}

Result<std::vector<GpuStateSpan>> SqlTx::list_gpu_states(core::Time from, core::Time to) {
  CORRAL_ASSIGN_OR_RETURN(
      auto res, q(cat("SELECT ", kSpanColumns,
                      " FROM gpu_state_spans WHERE start_at < $2 AND (end_at IS NULL OR end_at > "
                      "$1) ORDER BY node, gpu_index, start_at, id"),
                  {ms(from), ms(to)}));
  return read_rows<GpuStateSpan>(res, "gpu_state_spans", kSpanColumns, [](RowReader& in) {
    return GpuStateSpan{.node = core::NodeId(in.str(0)),
                        .gpu_index = in.i32(1),
                        .kind = in.str(2),
                        .reason = in.str(3),
                        .start = in.time(4),
                        .end = in.optional_time(5)};
  });
}

}  // namespace corral::store::detail
