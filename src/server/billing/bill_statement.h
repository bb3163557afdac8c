// A chargeback report (chargeback.h) as a bill: one table schema for every reader. The
// JSON answer of GET /v1/chargeback carries it as `statement` (`corral cost` prints it as
// a table), and GET /v1/chargeback?format=csv is it as CSV (`corral cost -o csv` and the
// dashboard's export download that), so the CLI and the dashboard cannot disagree.
//
// Each figure is rounded once, for its column: a column's rows are shown in hundredths of
// a GPU-hour or cents and share the column's rounded total by largest remainder
// (ledger/display_rounding.h), so the shown rows add up to the TOTAL row exactly.
//
// By tenant, the time attribution moves from nobody to a tenant is a column of its own,
// in GPU-hours beside its money: positive on the tenants that pay it, and the same amount
// taken off the (unattributed) row, so each column still adds up to the ledger.
//
// Thread safety: free functions without state.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/time.h"
#include "ledger/attribution.h"
#include "server/billing/chargeback.h"

namespace corral::server {

struct StatementColumn {
  enum class Unit { kKey, kGpuHours, kMoney };
  std::string name;   // the CSV header: "tenant", "used_gpu_hours", "charged_USD", ...
  std::string title;  // the table header: "TENANT", "USED", "CHARGED", ...
  Unit unit = Unit::kKey;
  bool detail = false;  // shown in CSV and wide tables only (money per bucket)
};

struct Statement {
  // "# currency=USD,from=...,to=...": what the figures are in and which window.
  std::string preamble;
  std::vector<StatementColumn> columns;
  std::vector<std::vector<std::string>> rows;  // cells as shown; the last is TOTAL
};

struct StatementScope {
  GroupBy group_by = GroupBy::kTenant;
  ledger::Attribution attribution = ledger::Attribution::kNone;
  std::string currency;
  core::Time from;
  core::Time to;
  core::Time accrued_until;
  // The report narrowed to these rows' keys (a member's own tenant): no (unattributed)
  // row, and TOTAL is theirs. Empty: every row.
  std::vector<std::string> only;
};

Statement bill_statement(const Chargeback& report, const StatementScope& scope);

nlohmann::json statement_json(const Statement& s);
// The preamble line, the header and the rows, CRLF-terminated (RFC 4180).
std::string statement_csv(const Statement& s);

}  // namespace corral::server
