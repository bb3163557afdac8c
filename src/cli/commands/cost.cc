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

std::string hours(const json& money) {
  char buf[32];
  const json& ms = field(money, "gpuMs");
  std::snprintf(buf, sizeof buf, "%.2f", ms.is_number() ? ms.get<double>() / 3.6e6 : 0.0);
  return buf;
}

std::string amount(std::int64_t micros) { return money_text(micros); }
std::string amount(const json& money) {
  const json& micros = field(money, "amountMicros");
  return money_text(micros.is_number_integer() ? micros.get<std::int64_t>() : 0);
}

std::string bucket_hours(const json& row, const char* bucket) {
  const json& b = field(row, "buckets");
  return b.contains(bucket) ? hours(b[bucket]) : "0.00";
}

// The report's rows: one per group (tenant, job, ...), then unattributed and total.
Table chargeback_table(const json& body) {
  const std::string by = body.value("groupBy", "tenant");
  const bool by_tenant = by == "tenant";
  std::vector<std::string> headers = {by == "gpuType" ? "GPU TYPE"
                                      : by == "job"   ? "JOB"
                                                      : by,
                                      "GPU-HOURS",
                                      "USED",
                                      "IDLE",
                                      "LOST",
                                      "OVERHEAD",
                                      "RESERVED",
                                      "CHARGED"};
  for (auto& h : headers) {
    for (auto& ch : h) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  }
  if (by_tenant) {
    headers.push_back("ATTRIBUTED");
    headers.push_back("TOTAL");
  }
  Table t{.headers = headers};
  for (const auto& r : field(body, "rows")) {
    std::string key = text(field(r, by.c_str()));
    if (key.empty()) key = "(nobody)";
    std::vector<std::string> row = {key,
                                    hours(field(r, "charged")),
                                    bucket_hours(r, "used"),
                                    bucket_hours(r, "allocated_idle"),
                                    bucket_hours(r, "preemption_lost"),
                                    bucket_hours(r, "restart_overhead"),
                                    bucket_hours(r, "reserved_idle"),
                                    amount(field(r, "charged"))};
    if (by_tenant) {
      row.push_back(amount(field(r, "attributed")));
      row.push_back(amount(r.value("totalAmountMicros", std::int64_t{0})));
    }
    t.rows.push_back(std::move(row));
  }
  if (body.contains("unattributed") && by_tenant) {
    const json& u = body["unattributed"];
    t.rows.push_back({"(unattributed)", hours(u), "", "", "", "", "", amount(u), "", amount(u)});
  }
  if (body.contains("total")) {
    const json& total = body["total"];
    std::vector<std::string> row = {"TOTAL", hours(total), "", "", "", "", "", amount(total)};
    if (by_tenant) row.insert(row.end(), {"", amount(total)});
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::string chargeback_text(const RemoteOptions& o, const json& body) {
  const Zone zone = time_style(o).zone;
  std::string out =
      "Chargeback " + date_text(field(body, "fromMs"), zone) + " to " +
      date_text(field(body, "toMs"), zone) + " in " + text(field(body, "currency")) +
      ", GPU-hours by bucket; unused time attributed: " + text(field(body, "attribution")) + "\n";
  out += "Ledger complete to " + date_text(field(body, "accruedUntilMs"), zone) + "\n\n";
  out += table_text(chargeback_table(body));
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
        const Answer a = call(o, "GET", path);
        if (a.status != 200) return report_failure("cost", a, std::cerr);
        if (format_of(o) == Format::kCsv) {
          std::cout << csv_text(chargeback_table(a.body));
          return kExitOk;
        }
        print_output(std::cout, o, a.body, [&](bool) { return chargeback_text(o, a.body); });
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
