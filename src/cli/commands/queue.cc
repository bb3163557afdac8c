// `corral queue`: pending jobs in queue order with the reason each is waiting.
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/commands/remote.h"
#include "cli/commands/remote_commands.h"
#include "cli/commands/validate.h"

namespace corral::cli {

void add_queue_command(CLI::App& app, std::function<int()>& run) {
  add_remote_command(
      app, run, "queue", "Show pending jobs, their positions and reasons",
      [](const RemoteOptions& o) {
        const Answer a = call_list(o, "/v1/queue", "queue");
        if (a.status != 200) return report_failure("queue", a, std::cerr);
        if (o.output == "json") {
          std::cout << a.body.dump(2) << "\n";
          return kExitOk;
        }
        std::vector<std::vector<std::string>> rows;
        for (const auto& q : a.body["queue"]) {
          rows.push_back({text(q["position"]), text(q["job"]), text(q["name"]), text(q["tenant"]),
                          text(q["kind"]), text(q["reason"])});
        }
        print_table(std::cout, {"POS", "JOB", "NAME", "TENANT", "KIND", "REASON"}, rows);
        return kExitOk;
      });
}

}  // namespace corral::cli
