// corral: the command-line client. Each subcommand lives in src/cli/commands/ and
// registers itself here; main only parses and dispatches.
#include <exception>
#include <functional>
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/commands/remote_commands.h"
#include "cli/commands/validate.h"
#include "core/clock.h"

namespace {

int run_main(int argc, char** argv) {
  CLI::App app("corral: submit, inspect and manage training jobs on a Corral cluster");
  app.require_subcommand(1);
  std::function<int()> run;
  const corral::core::SystemClock clock;  // the one clock: what "3m ago" is measured from
  corral::cli::add_validate_command(app, run);
  corral::cli::add_remote_commands(app, corral::cli::CommandEnv{.run = run, .clock = clock});
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help exits 0; every other parse failure is a usage error.
    const int code = app.exit(e);
    return code == 0 ? 0 : corral::cli::kExitUsage;
  }
  return run ? run() : corral::cli::kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  // Commands return exit codes; anything thrown (an allocation failure, a stream
  // error) still ends with a message and a non-zero status, never std::terminate.
  try {
    return run_main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "corral: " << e.what() << "\n";
    return corral::cli::kExitUsage;
  }
}
