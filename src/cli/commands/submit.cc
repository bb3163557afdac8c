// `corral submit -f spec.yaml [--idempotency-key K]`: sends a job spec (YAML, or JSON
// for *.json files and stdin starting with '{') and prints the new job (an array: its id
// and its tasks). `--workflow`: the file is a workflow ({steps: [spec, ...]}), each
// step printed with its job id.
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>

#include <CLI/CLI.hpp>

#include "cli/commands/remote.h"
#include "cli/commands/remote_commands.h"
#include "cli/commands/validate.h"

namespace corral::cli {

void add_submit_command(CLI::App& app, const CommandEnv& env) {
  auto file = std::make_shared<std::string>();
  auto key = std::make_shared<std::string>();
  auto workflow = std::make_shared<bool>(false);
  CLI::App* cmd = add_remote_command(
      app, env, "submit", "Submit a job spec file to corrald",
      [file, key, workflow](const RemoteOptions& o) {
        std::stringstream input;
        if (*file == "-") {
          input << std::cin.rdbuf();
        } else {
          std::ifstream in(*file);
          if (!in) {
            std::cerr << "corral submit: cannot read " << *file << "\n";
            return kExitUsage;
          }
          input << in.rdbuf();
        }
        const std::string body = input.str();
        const bool json = file->ends_with(".json") || body.starts_with("{");
        const Answer a = post_once(o, *workflow ? "/v1/workflows" : "/v1/jobs", body,
                                   json ? "application/json" : "application/yaml", *key);
        if (a.status != 201) return report_failure("submit", a, std::cerr);
        print_output(std::cout, o, a.body, [&](bool) {
          if (*workflow) {
            std::string lines;
            for (const auto& step : field(a.body, "steps")) {
              lines += "job " + text(field(step, "id")) + " submitted (" +
                       text(field(step, "name")) + ")\n";
            }
            return lines;
          }
          const nlohmann::json& sweep = field(field(a.body, "spec"), "sweep");
          if (sweep.is_object()) {
            return "sweep " + text(field(a.body, "id")) +
                   " submitted: " + text(field(sweep, "trials")) + " trials\n";
          }
          const nlohmann::json& array = field(field(a.body, "spec"), "array");
          if (array.is_object()) {
            return "array " + text(field(a.body, "id")) +
                   " submitted: " + text(field(array, "count")) + " tasks\n";
          }
          return "job " + text(field(a.body, "id")) + " submitted (" +
                 text(field(a.body, "phase")) + ")\n";
        });
        return kExitOk;
      });
  cmd->add_option("-f,--file", *file, "job spec (YAML or JSON); - reads standard input")
      ->required();
  cmd->add_option("--idempotency-key", *key, "retries with the same key create one job");
  cmd->add_flag("--workflow", *workflow,
                "the file is a workflow: {steps: [spec, ...]}, steps depending on one another by "
                "name, submitted as one");
}

}  // namespace corral::cli
