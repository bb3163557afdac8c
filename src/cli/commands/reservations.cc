// `corral reservations`: reservations the caller may see.
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/commands/remote.h"
#include "cli/commands/remote_commands.h"
#include "cli/commands/validate.h"

namespace corral::cli {

void add_reservations_command(CLI::App& app, std::function<int()>& run) {
  add_remote_command(app, run, "reservations", "List reservations", [](const RemoteOptions& o) {
    const Answer a = call_list(o, "/v1/reservations", "reservations");
    if (a.status != 200) return report_failure("reservations", a, std::cerr);
    if (o.output == "json") {
      std::cout << a.body.dump(2) << "\n";
      return kExitOk;
    }
    std::vector<std::vector<std::string>> rows;
    for (const auto& r : a.body["reservations"]) {
      rows.push_back({text(r["id"]), text(r["tenant"]), text(r["gpuType"]), text(r["count"]),
                      r["nodes"].dump(), date_text(r["startMs"]), date_text(r["endMs"])});
    }
    print_table(std::cout, {"ID", "TENANT", "GPU", "COUNT", "NODES", "START", "END"}, rows);
    return kExitOk;
  });
}

}  // namespace corral::cli
