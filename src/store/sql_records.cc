// RecordRepo over SQL: job_events, run_history, and telemetry (telemetry_raw and its
// rollups, telemetry_rollup_1m and telemetry_rollup_1h).
#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "store/internal/sql_rows.h"
#include "store/internal/sql_tx.h"

namespace corral::store::detail {
namespace {

using core::Result;
using core::Status;

constexpr std::string_view kEventColumns = "id, job_id, time, kind, message";
constexpr std::string_view kRunColumns = "tenant, name, job_id, run_ms, finished_at";

}  // namespace

Status SqlTx::append_job_event(const JobEventRow& e) {
  return q("INSERT INTO job_events (job_id, time, kind, message) VALUES ($1, $2, $3, $4)",
           {e.job.value, ms(e.time), e.kind, e.message})
      .status();
}

Result<std::vector<JobEventRow>> SqlTx::list_job_events(core::JobId job) {
  CORRAL_ASSIGN_OR_RETURN(
      auto res, q(cat("SELECT ", kEventColumns, " FROM job_events WHERE job_id = $1 ORDER BY id"),
                  {job.value}));
  return read_rows<JobEventRow>(res, "job_events", kEventColumns, [](RowReader& in) {
    return JobEventRow{.id = in.i64(0),
                       .job = core::JobId(in.i64(1)),
                       .time = in.time(2),
                       .kind = in.str(3),
                       .message = in.str(4)};
  });
}

Status SqlTx::insert_run(const RunRow& row, std::int32_t keep) {
  CORRAL_RETURN_IF_ERROR(
      q("INSERT INTO run_history (tenant, name, job_id, run_ms, finished_at) "
        "VALUES ($1, $2, $3, $4, $5)",
        {row.tenant.value, row.name, row.job.value, row.run.count(), ms(row.finished_at)})
          .status());
  return q("DELETE FROM run_history WHERE name = $1 AND tenant = $2 AND id NOT IN (SELECT id "
           "FROM run_history WHERE name = $1 AND tenant = $2 ORDER BY id DESC LIMIT $3)",
           {row.name, row.tenant.value, std::int64_t{keep}})
      .status();
}

Result<std::vector<RunRow>> SqlTx::list_runs(const std::vector<std::string>& names) {
  // In chunks, so a long queue of distinct names stays within any driver's parameter limit.
  constexpr std::size_t kChunk = 256;
  std::vector<RunRow> out;
  for (std::size_t at = 0; at < names.size(); at += kChunk) {
    std::string sql = cat("SELECT ", kRunColumns, " FROM run_history WHERE name IN (");
    std::vector<SqlValue> params;
    for (std::size_t i = at; i < std::min(names.size(), at + kChunk); ++i) {
      params.emplace_back(names[i]);
      sql += (i == at ? "$" : ", $") + std::to_string(params.size());
    }
    sql += ") ORDER BY name, tenant, id DESC";
    CORRAL_ASSIGN_OR_RETURN(auto res, q(sql, std::move(params)));
    for (const auto& r : res.rows) {
      RowReader in(r, "run_history", kRunColumns);
      out.push_back({.tenant = core::TenantId(in.str(0)),
                     .name = in.str(1),
                     .job = core::JobId(in.i64(2)),
                     .run = core::Duration(in.i64(3)),
                     .finished_at = in.time(4)});
      if (!in.ok()) return in.status();
    }
  }
  return out;
}

namespace {

constexpr std::string_view kRawColumns =
    "node, gpu_index, time, utilization, memory_used_mib, power_watts, temperature_c, throttle, "
    "ecc_corrected, ecc_uncorrected";
constexpr std::string_view kRollupColumns =
    "node, gpu_index, start_at, samples, sum_utilization, max_utilization, sum_power_watts, "
    "max_power_watts, max_temperature_c, max_memory_used_mib, throttled_samples, "
    "max_ecc_uncorrected";

// Doubles travel as their shortest exact text, so both drivers keep full precision.
SqlValue real(double d) { return fmt::format("{}", d); }

std::string join_reasons(const std::vector<std::string>& reasons) {
  std::string out;
  for (const auto& r : reasons) out += (out.empty() ? "" : ",") + r;
  return out;
}

std::vector<std::string> split_reasons(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::int64_t bucket_start(std::int64_t t_ms, std::int64_t len) {
  return t_ms - ((t_ms % len) + len) % len;
}

// The batch's contribution to one GPU's bucket.
struct RollupSum {
  std::int64_t samples = 0;
  double sum_util = 0, max_util = 0, sum_power = 0, max_power = 0;
  std::int64_t max_temp = INT32_MIN, max_mem = 0, throttled = 0, max_ecc = 0;
};

// cat() of any number of pieces.
template <typename... Piece>
std::string concat(const Piece&... pieces) {
  std::string out;
  (out.append(std::string_view(pieces)), ...);
  return out;
}

// "GREATEST" is PostgreSQL's and "MAX(a, b)" SQLite's: a CASE is both's.
std::string greater(std::string_view table, std::string_view column) {
  return concat(column, " = CASE WHEN excluded.", column, " > ", table, ".", column,
                " THEN excluded.", column, " ELSE ", table, ".", column, " END");
}

}  // namespace

Status SqlTx::insert_telemetry_batch(const std::vector<TelemetryRow>& batch) {
  // A sample is one GPU's reading at one time (migration 0023): one a batch, and none
  // that is stored already (an agent's retry), so that the rollups add each sample once.
  using SampleKey = std::tuple<std::string, std::int32_t, std::int64_t>;
  std::set<SampleKey> in_batch;
  std::vector<TelemetryRow> rows;
  for (const TelemetryRow& r : batch) {
    if (in_batch.insert({r.node.value, r.gpu_index, ms(r.time)}).second) rows.push_back(r);
  }
  std::set<SampleKey> inserted;
  // 1. Raw samples, many rows a statement (10 parameters each, well within SQLite's 999).
  constexpr std::size_t kChunk = 64;
  for (std::size_t at = 0; at < rows.size(); at += kChunk) {
    std::string sql = cat("INSERT INTO telemetry_raw (", kRawColumns, ") VALUES ");
    std::vector<SqlValue> params;
    for (std::size_t i = at; i < std::min(rows.size(), at + kChunk); ++i) {
      const TelemetryRow& r = rows[i];
      sql += i == at ? "(" : ", (";
      for (int c = 0; c < 10; ++c) {
        const std::size_t n = params.size() + 1 + static_cast<std::size_t>(c);
        const bool is_real = c == 3 || c == 5;
        sql +=
            (c == 0 ? "" : ", ") + (is_real ? "CAST($" + std::to_string(n) + " AS DOUBLE PRECISION)"
                                            : "$" + std::to_string(n));
      }
      sql += ")";
      params.insert(params.end(),
                    {r.node.value, std::int64_t{r.gpu_index}, ms(r.time), real(r.utilization),
                     r.memory_used_mib, real(r.power_watts), std::int64_t{r.temperature_c},
                     join_reasons(r.throttle), r.ecc_corrected, r.ecc_uncorrected});
    }
    sql += " ON CONFLICT (node, gpu_index, time) DO NOTHING RETURNING node, gpu_index, time";
    CORRAL_ASSIGN_OR_RETURN(auto res, q(sql, std::move(params)));
    for (const auto& row : res.rows) {
      RowReader in(row, "telemetry_raw", "node, gpu_index, time");
      inserted.insert({in.str(0), in.i32(1), in.i64(2)});
      if (!in.ok()) return in.status();
    }
  }
  std::erase_if(rows, [&](const TelemetryRow& r) {
    return !inserted.contains({r.node.value, r.gpu_index, ms(r.time)});
  });
  // 2. Rollups: the batch summed per (GPU, bucket) first, then one upsert each.
  for (const auto& [table, len] :
       {std::pair<std::string_view, std::int64_t>{"telemetry_rollup_1m", 60'000},
        {"telemetry_rollup_1h", 3'600'000}}) {
    std::map<std::tuple<std::string, std::int32_t, std::int64_t>, RollupSum> sums;
    for (const TelemetryRow& r : rows) {
      RollupSum& s = sums[{r.node.value, r.gpu_index, bucket_start(ms(r.time), len)}];
      const bool first = s.samples++ == 0;
      s.sum_util += r.utilization;
      s.max_util = first ? r.utilization : std::max(s.max_util, r.utilization);
      s.sum_power += r.power_watts;
      s.max_power = first ? r.power_watts : std::max(s.max_power, r.power_watts);
      s.max_temp = std::max<std::int64_t>(s.max_temp, r.temperature_c);
      s.max_mem = std::max(s.max_mem, r.memory_used_mib);
      s.throttled += r.throttle.empty() ? 0 : 1;
      s.max_ecc = std::max(s.max_ecc, r.ecc_uncorrected);
    }
    const std::string upsert = concat(
        "INSERT INTO ", table, " (", kRollupColumns,
        ") VALUES ($1, $2, $3, $4, CAST($5 AS DOUBLE PRECISION), CAST($6 AS DOUBLE "
        "PRECISION), CAST($7 AS DOUBLE PRECISION), CAST($8 AS DOUBLE PRECISION), $9, $10, "
        "$11, $12) ON CONFLICT (node, gpu_index, start_at) DO UPDATE SET samples = ",
        table, ".samples + excluded.samples, sum_utilization = ", table,
        ".sum_utilization + excluded.sum_utilization, sum_power_watts = ", table,
        ".sum_power_watts + excluded.sum_power_watts, throttled_samples = ", table,
        ".throttled_samples + excluded.throttled_samples, ", greater(table, "max_utilization"),
        ", ", greater(table, "max_power_watts"), ", ", greater(table, "max_temperature_c"), ", ",
        greater(table, "max_memory_used_mib"), ", ", greater(table, "max_ecc_uncorrected"));
    for (const auto& [key, s] : sums) {
      const auto& [node, gpu, start] = key;
      CORRAL_RETURN_IF_ERROR(q(upsert, {node, std::int64_t{gpu}, start, s.samples, real(s.sum_util),
                                        real(s.max_util), real(s.sum_power), real(s.max_power),
                                        s.max_temp, s.max_mem, s.throttled, s.max_ecc})
                                 .status());
    }
  }
  return Status();
}

Result<std::vector<TelemetryRow>> SqlTx::list_telemetry(const core::NodeId& node,
                                                        std::int32_t gpu_index, core::Time from,
                                                        core::Time to) {
  CORRAL_ASSIGN_OR_RETURN(
      auto res, q(cat("SELECT ", kRawColumns,
                      " FROM telemetry_raw WHERE node = $1 AND gpu_index = $2 AND time >= $3 "
                      "AND time < $4 ORDER BY time"),
                  {node.value, std::int64_t{gpu_index}, ms(from), ms(to)}));
  return read_rows<TelemetryRow>(res, "telemetry_raw", kRawColumns, [](RowReader& in) {
    return TelemetryRow{.node = core::NodeId(in.str(0)),
                        .gpu_index = in.i32(1),
                        .time = in.time(2),
                        .utilization = in.f64(3),
                        .memory_used_mib = in.i64(4),
                        .power_watts = in.f64(5),
                        .temperature_c = in.i32(6),
                        .throttle = split_reasons(in.str(7)),
                        .ecc_corrected = in.i64(8),
                        .ecc_uncorrected = in.i64(9)};
  });
}

Result<std::vector<TelemetryRollupRow>> SqlTx::list_telemetry_rollup(
    TelemetryResolution resolution, core::Time from, core::Time to,
    const std::optional<core::NodeId>& node) {
  const std::string_view table =
      resolution == TelemetryResolution::kMinute ? "telemetry_rollup_1m" : "telemetry_rollup_1h";
  std::vector<SqlValue> params = {ms(from), ms(to)};
  std::string where = "start_at >= $1 AND start_at < $2";
  if (node) {
    params.emplace_back(node->value);
    where += " AND node = $3";
  }
  CORRAL_ASSIGN_OR_RETURN(auto res, q(concat("SELECT ", kRollupColumns, " FROM ", table, " WHERE ",
                                             where, " ORDER BY node, gpu_index, start_at"),
                                      std::move(params)));
  std::vector<TelemetryRollupRow> out;
  out.reserve(res.rows.size());
  for (const auto& r : res.rows) {
    RowReader in(r, table, kRollupColumns);
    TelemetryRollupRow row{.node = core::NodeId(in.str(0)),
                           .gpu_index = in.i32(1),
                           .start = in.time(2),
                           .samples = in.i64(3),
                           .max_utilization = in.f64(5),
                           .max_power_watts = in.f64(7),
                           .max_temperature_c = in.i32(8),
                           .max_memory_used_mib = in.i64(9),
                           .throttled_samples = in.i64(10),
                           .max_ecc_uncorrected = in.i64(11)};
    const double sum_util = in.f64(4), sum_power = in.f64(6);
    if (!in.ok()) return in.status();
    if (row.samples > 0) {
      row.avg_utilization = sum_util / static_cast<double>(row.samples);
      row.avg_power_watts = sum_power / static_cast<double>(row.samples);
    }
    out.push_back(std::move(row));
  }
  return out;
}

Result<std::int64_t> SqlTx::delete_telemetry_before(const TelemetryCutoffs& cutoffs) {
  std::int64_t deleted = 0;
  for (const auto& [sql, cutoff] :
       {std::pair<std::string_view, core::Time>{"DELETE FROM telemetry_raw WHERE time < $1",
                                                cutoffs.raw},
        {"DELETE FROM telemetry_rollup_1m WHERE start_at < $1", cutoffs.minute},
        {"DELETE FROM telemetry_rollup_1h WHERE start_at < $1", cutoffs.hour}}) {
    CORRAL_ASSIGN_OR_RETURN(auto res, q(sql, {ms(cutoff)}));
    deleted += res.affected;
  }
  return deleted;
}

}  // namespace corral::store::detail

namespace corral::store::detail {
namespace {

constexpr std::string_view kUsageHistoryColumns =
    "time, tenant, gpus, allocated, borrowed, utilization, share, usage_gpus, pending, "
    "preemptions, restarts, placed, wait_ms_sum";

}  // namespace

Status SqlTx::insert_usage_samples(const std::vector<UsageSampleRow>& rows) {
  const std::string upsert = concat(
      "INSERT INTO usage_history (", kUsageHistoryColumns,
      ") VALUES ($1, $2, CAST($3 AS DOUBLE PRECISION), CAST($4 AS DOUBLE PRECISION), CAST($5 AS "
      "DOUBLE PRECISION), "
      "CAST($6 AS DOUBLE PRECISION), CAST($7 AS DOUBLE PRECISION), CAST($8 AS DOUBLE "
      "PRECISION), $9, $10, $11, $12, $13) ON CONFLICT (tenant, "
      "time) DO UPDATE SET gpus = excluded.gpus, allocated = excluded.allocated, borrowed = "
      "excluded.borrowed, utilization = excluded.utilization, share = excluded.share, usage_gpus "
      "= excluded.usage_gpus, pending = excluded.pending, preemptions = excluded.preemptions, "
      "restarts = excluded.restarts, placed = excluded.placed, wait_ms_sum = excluded.wait_ms_sum");
  for (const UsageSampleRow& r : rows) {
    CORRAL_RETURN_IF_ERROR(
        q(upsert, {ms(r.time), r.tenant, real(r.gpus), real(r.allocated), real(r.borrowed),
                   real(r.utilization), real(r.share), real(r.usage_gpus), r.pending, r.preemptions,
                   r.restarts, r.placed, r.wait_ms_sum})
            .status());
  }
  return Status();
}

Result<std::vector<UsageSampleRow>> SqlTx::list_usage_samples(
    core::Time from, core::Time to, const std::optional<std::string>& tenant) {
  std::vector<SqlValue> params = {ms(from), ms(to)};
  std::string where = "time >= $1 AND time < $2";
  if (tenant) {
    params.emplace_back(*tenant);
    where += " AND tenant = $3";
  }
  CORRAL_ASSIGN_OR_RETURN(
      auto res, q(concat("SELECT ", kUsageHistoryColumns, " FROM usage_history WHERE ", where,
                         " ORDER BY time, tenant"),
                  std::move(params)));
  return read_rows<UsageSampleRow>(res, "usage_history", kUsageHistoryColumns, [](RowReader& in) {
    return UsageSampleRow{.time = in.time(0),
                          .tenant = in.str(1),
                          .gpus = in.f64(2),
                          .allocated = in.f64(3),
                          .borrowed = in.f64(4),
                          .utilization = in.f64(5),
                          .share = in.f64(6),
                          .usage_gpus = in.f64(7),
                          .pending = in.i64(8),
                          .preemptions = in.i64(9),
                          .restarts = in.i64(10),
                          .placed = in.i64(11),
                          .wait_ms_sum = in.i64(12)};
  });
}

Result<std::int64_t> SqlTx::delete_usage_samples_before(core::Time before) {
  CORRAL_ASSIGN_OR_RETURN(auto res, q("DELETE FROM usage_history WHERE time < $1", {ms(before)}));
  return res.affected;
}

}  // namespace corral::store::detail
