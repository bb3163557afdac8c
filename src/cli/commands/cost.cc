// `corral cost`: the chargeback report (GET /v1/chargeback) as a table, JSON or CSV: GPU-
// hours and money per tenant (or job, GPU type, day, bucket) for a window of the ledger.
#include <cstdio>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/commands/remote.h"
#include "cli/commands/remote_commands.h"
#include "cli/commands/validate.h"

namespace corral::cli {
namespace {

using nlohmann::json;

std::string hours(const json& money) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", money.value("gpuMs", std::int64_t{0}) / 3.6e6);
  return buf;
}

std::string amount(std::int64_t micros) { return money_text(micros); }
std::string amount(const json& money) {
  return money_text(money.value("amountMicros", std::int64_t{0}));
}

std::string bucket_hours(const json& row, const char* bucket) {
  const json& b = row["buckets"];
  return b.contains(bucket) ? hours(b[bucket]) : "0.00";
}

int print(const RemoteOptions& o, const json& body) {
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
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : body["rows"]) {
    std::string key = text(r[by]);
    if (key.empty()) key = "(nobody)";
    std::vector<std::string> row = {key,
                                    hours(r["charged"]),
                                    bucket_hours(r, "used"),
                                    bucket_hours(r, "allocated_idle"),
                                    bucket_hours(r, "preemption_lost"),
                                    bucket_hours(r, "restart_overhead"),
                                    bucket_hours(r, "reserved_idle"),
                                    amount(r["charged"])};
    if (by_tenant) {
      row.push_back(amount(r["attributed"]));
      row.push_back(amount(r.value("totalAmountMicros", std::int64_t{0})));
    }
    rows.push_back(std::move(row));
  }
  if (body.contains("unattributed") && by_tenant) {
    rows.push_back({"(unattributed)", hours(body["unattributed"]), "", "", "", "", "",
                    amount(body["unattributed"]), "", amount(body["unattributed"])});
  }
  if (body.contains("total")) {
    std::vector<std::string> total = {"TOTAL", hours(body["total"]), "", "", "", "",
                                      "",      amount(body["total"])};
    if (by_tenant) total.insert(total.end(), {"", amount(body["total"])});
    rows.push_back(std::move(total));
  }
  if (o.output == "csv") {
    print_csv(std::cout, headers, rows);
    return kExitOk;
  }
  std::cout << "Chargeback " << date_text(body["fromMs"]) << " to " << date_text(body["toMs"])
            << " in " << text(body["currency"]) << ", GPU-hours by bucket; unused time "
            << "attributed: " << text(body["attribution"]) << "\n";
  std::cout << "Ledger complete to " << date_text(body["accruedUntilMs"]) << "\n\n";
  print_table(std::cout, headers, rows);
  if (!body["unpricedGpuTypes"].empty()) {
    std::cout << "\nunpriced (billed at 0): " << body["unpricedGpuTypes"].dump() << "\n";
  }
  return kExitOk;
}

}  // namespace

void add_cost_command(CLI::App& app, std::function<int()>& run) {
  auto options = std::make_shared<RemoteOptions>();
  options->formats = {"table", "json", "csv"};
  auto from = std::make_shared<std::string>();
  auto to = std::make_shared<std::string>();
  auto by = std::make_shared<std::string>("tenant");
  auto attribution = std::make_shared<std::string>();
  auto tenant = std::make_shared<std::string>();
  CLI::App* cmd = add_remote_command(
      app, run, "cost", "Chargeback: GPU-hours and cost from the ledger, per tenant or other",
      [=](const RemoteOptions& o) {
        std::string path = "/v1/chargeback?groupBy=" + query_value(*by);
        for (const auto& [k, v] :
             {std::pair{"from", from}, std::pair{"to", to}, std::pair{"attribution", attribution},
              std::pair{"tenant", tenant}}) {
          if (!v->empty()) path += std::string("&") + k + "=" + query_value(*v);
        }
        const Answer a = call(o, "GET", path);
        if (a.status != 200) return report_failure("cost", a, std::cerr);
        if (o.output == "json") {
          std::cout << a.body.dump(2) << "\n";
          return kExitOk;
        }
        return print(o, a.body);
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
