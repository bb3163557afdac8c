#include "server/billing/bill_statement.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include <fmt/format.h>

#include "core/csv.h"
#include "ledger/accrual.h"
#include "ledger/display_rounding.h"

namespace corral::server {
namespace {

using Unit = StatementColumn::Unit;

constexpr std::int64_t kHundredthHourMs = 36'000;
constexpr std::int64_t kCentMicros = 10'000;

constexpr ledger::Bucket kStatementBuckets[] = {
    ledger::Bucket::kUsed,
    ledger::Bucket::kAllocatedIdle,
    ledger::Bucket::kReservedIdle,
    ledger::Bucket::kPreemptionLost,
    ledger::Bucket::kRestartOverhead,
    ledger::Bucket::kUnhealthy,
    ledger::Bucket::kDrained,
    ledger::Bucket::kUnallocated,
};
static_assert(std::size(kStatementBuckets) == ledger::kBucketCount, "a bucket without a column");

std::string statement_bucket_title(ledger::Bucket b) {
  switch (b) {
    case ledger::Bucket::kUsed:
      return "USED";
    case ledger::Bucket::kAllocatedIdle:
      return "IDLE";
    case ledger::Bucket::kReservedIdle:
      return "RESERVED";
    case ledger::Bucket::kPreemptionLost:
      return "LOST";
    case ledger::Bucket::kRestartOverhead:
      return "OVERHEAD";
    case ledger::Bucket::kUnhealthy:
      return "UNHEALTHY";
    case ledger::Bucket::kDrained:
      return "DRAINED";
    case ledger::Bucket::kUnallocated:
      return "FREE";
  }
  return "?";
}

// Hundredths (of a GPU-hour, of a currency unit) as "12.34".
std::string hundredths_text(std::int64_t n) {
  const std::int64_t a = std::llabs(n);
  return fmt::format("{}{}.{:02}", n < 0 ? "-" : "", a / 100, a % 100);
}

std::string statement_key_title(GroupBy g) {
  switch (g) {
    case GroupBy::kTenant:
      return "TENANT";
    case GroupBy::kJob:
      return "JOB";
    case GroupBy::kGpuType:
      return "GPU TYPE";
    case GroupBy::kDay:
      return "DAY";
    case GroupBy::kBucket:
      return "BUCKET";
  }
  return "";
}

Money statement_bucket(const ChargebackRow& row, ledger::Bucket b) {
  const auto it = row.buckets.find(std::string(ledger::to_string(b)));
  return it == row.buckets.end() ? Money{} : it->second;
}

// "2026-05-28T20:26:00Z": the window as a spreadsheet or a script reads it (format_utc is
// for people and drops the seconds).
std::string statement_iso_time(core::Time t) {
  const auto second = std::chrono::floor<std::chrono::seconds>(t);
  const auto day = std::chrono::floor<std::chrono::days>(second);
  const std::chrono::year_month_day date{day};
  const std::int64_t in_day =
      std::chrono::duration_cast<std::chrono::seconds>(second - day).count();
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", static_cast<int>(date.year()),
                     static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                     in_day / 3600, in_day / 60 % 60, in_day % 60);
}

// A row's exact figures, in the columns' order after the key.
struct ExactRow {
  std::string key;
  std::vector<std::int64_t> values;
};

}  // namespace

Statement bill_statement(const Chargeback& report, const StatementScope& scope) {
  const bool by_tenant = scope.group_by == GroupBy::kTenant;
  const std::string& cur = scope.currency;
  Statement s;
  s.preamble = "# currency=" + cur + ",from=" + statement_iso_time(scope.from) +
               ",to=" + statement_iso_time(scope.to) + ",accruedUntil=" +
               (core::to_ms(scope.accrued_until) == 0 ? "none"  // nothing accrued yet
                                                      : statement_iso_time(scope.accrued_until)) +
               ",groupBy=" + std::string(to_string(scope.group_by)) +
               ",attribution=" + std::string(ledger::to_string(scope.attribution));
  s.columns.push_back(
      {std::string(to_string(scope.group_by)), statement_key_title(scope.group_by)});
  s.columns.push_back({"gpu_hours", "GPU-HOURS", Unit::kGpuHours});
  for (const ledger::Bucket b : kStatementBuckets) {
    s.columns.push_back({std::string(ledger::to_string(b)) + "_gpu_hours",
                         statement_bucket_title(b), Unit::kGpuHours});
  }
  if (by_tenant) s.columns.push_back({"attributed_gpu_hours", "ATTRIB", Unit::kGpuHours});
  s.columns.push_back({"charged_" + cur, "CHARGED", Unit::kMoney});
  for (const ledger::Bucket b : kStatementBuckets) {
    s.columns.push_back({std::string(ledger::to_string(b)) + "_" + cur,
                         statement_bucket_title(b) + " " + cur, Unit::kMoney, true});
  }
  if (by_tenant) {
    s.columns.push_back({"attributed_" + cur, "ATTRIBUTED", Unit::kMoney});
    s.columns.push_back({"total_" + cur, "TOTAL", Unit::kMoney});
  }

  // `attributed`: what attribution added to the row (negative: took off it).
  const auto exact = [&](std::string key, const ChargebackRow& row, const Money& attributed) {
    ExactRow r{std::move(key), {}};
    r.values.push_back(row.charged.gpu_ms + attributed.gpu_ms);
    for (const ledger::Bucket b : kStatementBuckets)
      r.values.push_back(statement_bucket(row, b).gpu_ms);
    if (by_tenant) r.values.push_back(attributed.gpu_ms);
    r.values.push_back(row.charged.amount);
    for (const ledger::Bucket b : kStatementBuckets)
      r.values.push_back(statement_bucket(row, b).amount);
    if (by_tenant) {
      r.values.push_back(attributed.amount);
      r.values.push_back(row.charged.amount + attributed.amount);
    }
    return r;
  };
  std::vector<ExactRow> rows;
  for (const ChargebackRow& row : report.rows) {
    if (!scope.only.empty() &&
        std::find(scope.only.begin(), scope.only.end(), row.key) == scope.only.end()) {
      continue;
    }
    rows.push_back(
        exact(row.key.empty() ? "(nobody)" : row.key, row, by_tenant ? row.attributed : Money{}));
  }
  if (by_tenant && scope.only.empty()) {
    // Nobody's time as the ledger has it, less what attribution gave to the tenants.
    const Money moved{report.unattributed.gpu_ms - report.nobody.charged.gpu_ms,
                      report.unattributed.amount - report.nobody.charged.amount};
    rows.push_back(exact("(unattributed)", report.nobody, moved));
  }

  // Round each column once, for its total; the rows share it.
  s.rows.assign(rows.size() + 1, std::vector<std::string>(s.columns.size()));
  for (std::size_t i = 0; i < rows.size(); ++i) s.rows[i][0] = rows[i].key;
  s.rows.back()[0] = "TOTAL";
  for (std::size_t c = 1; c < s.columns.size(); ++c) {
    std::vector<std::int64_t> column;
    for (const ExactRow& r : rows) column.push_back(r.values[c - 1]);
    const auto rounded = ledger::round_to_total(
        column, s.columns[c].unit == Unit::kMoney ? kCentMicros : kHundredthHourMs);
    for (std::size_t i = 0; i < rows.size(); ++i) s.rows[i][c] = hundredths_text(rounded.rows[i]);
    s.rows.back()[c] = hundredths_text(rounded.total);
  }
  return s;
}

nlohmann::json statement_json(const Statement& s) {
  nlohmann::json columns = nlohmann::json::array();
  for (const StatementColumn& c : s.columns) {
    columns.push_back({{"name", c.name},
                       {"title", c.title},
                       {"unit", c.unit == Unit::kKey        ? "key"
                                : c.unit == Unit::kGpuHours ? "gpuHours"
                                                            : "money"},
                       {"detail", c.detail}});
  }
  return {{"preamble", s.preamble}, {"columns", columns}, {"rows", s.rows}};
}

std::string statement_csv(const Statement& s) {
  std::string out = s.preamble + "\r\n";
  std::vector<std::string> names;
  for (const StatementColumn& c : s.columns) names.push_back(c.name);
  core::append_csv_row(out, names);
  for (const auto& row : s.rows) core::append_csv_row(out, row);
  return out;
}

}  // namespace corral::server
