// `corral cancel ID [--reason TEXT]`: cancels a job that has not ended.
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/commands/remote.h"
#include "cli/commands/remote_commands.h"
#include "cli/commands/validate.h"

namespace corral::cli {

void add_cancel_command(CLI::App& app, std::function<int()>& run) {
  auto id = std::make_shared<std::string>();
  auto reason = std::make_shared<std::string>();
  CLI::App* cmd =
      add_remote_command(app, run, "cancel", "Cancel a job", [=](const RemoteOptions& o) {
        const std::string body = reason->empty() ? "" : nlohmann::json{{"reason", *reason}}.dump();
        const Answer a = call(o, "POST", "/v1/jobs/" + *id + "/cancel", body);
        if (a.status != 200) return report_failure("cancel", a, std::cerr);
        if (o.output == "json") {
          std::cout << a.body.dump(2) << "\n";
        } else {
          std::cout << "job " << text(a.body["id"]) << " " << text(a.body["phase"]) << "\n";
        }
        return kExitOk;
      });
  cmd->add_option("id", *id, "job id")->required();
  cmd->add_option("--reason", *reason, "why, for the job's events and the audit log");
}

}  // namespace corral::cli
