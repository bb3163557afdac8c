// `corral cost`: the chargeback report (GET /v1/chargeback) as a table, JSON or CSV: GPU-
// hours and money per tenant (or job, GPU type, day, bucket) for a window of the ledger.
#include <cstdio>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/commands/remote.h"
#include "cli/commands/remote_commands.h"
#include "cli/commands/validate.h"
#include "cli/format/table.h"

namespace corral::cli {
namespace {

using nlohmann::json;

// The report's statement (corrald rounds it: its rows add up to its TOTAL row), as a
// table: per-bucket money only when wide. The same figures as `-o csv`, which is the
// statement's CSV as corrald writes it.
Table chargeback_table(const json& body, bool wide) {
  const json& statement = field(body, "statement");
  std::vector<std::size_t> shown;
  Table t;
  const json& columns = field(statement, "columns");
  for (std::size_t c = 0; c < columns.size(); ++c) {
    if (!wide && columns[c].value("detail", false)) continue;
    shown.push_back(c);
    t.headers.push_back(text(field(columns[c], "title")));
  }
  for (const auto& r : field(statement, "rows")) {
    std::vector<std::string> row;
    for (const std::size_t c : shown) row.push_back(c < r.size() ? text(r[c]) : "");
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::string chargeback_text(const RemoteOptions& o, const json& body, bool wide) {
  const Zone zone = time_style(o).zone;
  std::string out = "Chargeback " + date_text(field(body, "fromMs"), zone) + " to " +
                    date_text(field(body, "toMs"), zone) + " in " + text(field(body, "currency")) +
                    ", GPU-hours by bucket (ATTRIB: unused time attributed, by " +
                    text(field(body, "attribution")) + ")\n";
  out += "Ledger complete to " + date_text(field(body, "accruedUntilMs"), zone) + "\n\n";
  if (!body.contains("statement")) {
    // A corrald older than this CLI: its figures are in -o json.
    return out + "(this corrald sends no statement table; see -o json)\n";
  }
  out += table_text(chargeback_table(body, wide));
  if (!field(body, "unpricedGpuTypes").empty()) {
    out += "\nunpriced (billed at 0): " + body["unpricedGpuTypes"].dump() + "\n";
  }
  return out;
}

}  // namespace

void add_cost_command(CLI::App& app, const CommandEnv& env) {
  auto options = std::make_shared<RemoteOptions>();
  options->formats = {"table", "wide", "json", "yaml", "csv"};
  auto from = std::make_shared<std::string>();
  auto to = std::make_shared<std::string>();
  auto by = std::make_shared<std::string>("tenant");
  auto attribution = std::make_shared<std::string>();
  auto tenant = std::make_shared<std::string>();
  CLI::App* cmd = add_remote_command(
      app, env, "cost", "Chargeback: GPU-hours and cost from the ledger, per tenant or other",
      [=](const RemoteOptions& o) {
        std::string path = "/v1/chargeback?groupBy=" + query_value(*by);
        for (const auto& [k, v] :
             {std::pair{"from", from}, std::pair{"to", to}, std::pair{"attribution", attribution},
              std::pair{"tenant", tenant}}) {
          if (!v->empty()) path += std::string("&") + k + "=" + query_value(*v);
        }
        // CSV is corrald's, byte for byte: the dashboard's export downloads the same.
        const bool csv = format_of(o) == Format::kCsv;
        const Answer a = call(o, "GET", path + (csv ? "&format=csv" : ""));
        if (a.status != 200) return report_failure("cost", a, std::cerr);
        if (csv) {
          std::cout << (a.body.is_string() ? a.body.get<std::string>() : std::string());
          return kExitOk;
        }
        print_output(std::cout, o, a.body,
                     [&](bool wide) { return chargeback_text(o, a.body, wide); });
        return kExitOk;
      },
      options);
  cmd->add_option("--from", *from, "start: a UTC date or date-time (default: 30 days before --to)");
  cmd->add_option("--to", *to, "end (default: as far as the ledger is complete)");
  cmd->add_option("--by", *by, "group by")
      ->check(CLI::IsMember({"tenant", "job", "gpuType", "day", "bucket"}));
  cmd->add_option("--attribution", *attribution, "who pays for unused time (default: config)")
      ->check(CLI::IsMember({"none", "proportional", "guarantee"}));
  cmd->add_option("--tenant", *tenant, "one tenant only");
}

}  // namespace corral::cli
