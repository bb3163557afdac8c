// `corral tenants`: tenants the caller may see, with weights and pending counts.
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/commands/remote.h"
#include "cli/commands/remote_commands.h"
#include "cli/commands/validate.h"

namespace corral::cli {

void add_tenants_command(CLI::App& app, std::function<int()>& run) {
  add_remote_command(app, run, "tenants", "List tenants", [](const RemoteOptions& o) {
    const Answer a = call_list(o, "/v1/tenants", "tenants");
    if (a.status != 200) return report_failure("tenants", a, std::cerr);
    if (o.output == "json") {
      std::cout << a.body.dump(2) << "\n";
      return kExitOk;
    }
    std::vector<std::vector<std::string>> rows;
    for (const auto& t : a.body["tenants"]) {
      rows.push_back({text(t["name"]), text(t["parent"]), text(t["weight"]),
                      text(t["maxPendingJobs"]), text(t["submitRatePerSecond"]),
                      t["quotas"].dump()});
    }
    print_table(std::cout, {"TENANT", "PARENT", "WEIGHT", "MAX PENDING", "SUBMIT/S", "QUOTAS"},
                rows);
    return kExitOk;
  });
}

}  // namespace corral::cli
