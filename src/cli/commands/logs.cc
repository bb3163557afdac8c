// `corral logs JOB [--rank N] [--attempt A] [--tail BYTES]`: prints one rank's log, which
// corrald fetches from the agent that ran it (GET /v1/jobs/{id}/logs). With -o json the
// text comes wrapped as {"job", "rank", "attempt", "log"}.
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/commands/remote.h"
#include "cli/commands/remote_commands.h"
#include "cli/commands/validate.h"

namespace corral::cli {

void add_logs_command(CLI::App& app, std::function<int()>& run) {
  auto id = std::make_shared<std::string>();
  auto rank = std::make_shared<int>(0);
  auto attempt = std::make_shared<int>(-1);
  auto tail = std::make_shared<long long>(1 << 20);
  CLI::App* cmd = add_remote_command(
      app, run, "logs", "Print a rank's log (stdout and stderr)", [=](const RemoteOptions& o) {
        std::string path = "/v1/jobs/" + *id + "/logs?rank=" + std::to_string(*rank) +
                           "&tailBytes=" + std::to_string(*tail);
        if (*attempt >= 0) path += "&attempt=" + std::to_string(*attempt);
        const Answer a = call(o, "GET", path);
        if (a.status != 200) return report_failure("logs", a, std::cerr);
        const std::string log = a.body.is_string() ? a.body.get<std::string>() : a.body.dump();
        if (o.output == "json") {
          nlohmann::json out = {{"job", *id}, {"rank", *rank}, {"log", log}};
          out["attempt"] = *attempt >= 0 ? nlohmann::json(*attempt) : nlohmann::json(nullptr);
          std::cout << out.dump(2) << "\n";
        } else {
          std::cout << log;
        }
        return kExitOk;
      });
  cmd->add_option("job", *id, "job id")->required();
  cmd->add_option("--rank", *rank, "rank (default 0)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--attempt", *attempt, "attempt (default: the current one)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--tail", *tail, "at most this many bytes from the end")
      ->check(CLI::NonNegativeNumber);
}

}  // namespace corral::cli
