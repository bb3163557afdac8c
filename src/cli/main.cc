// corral: the command-line client. Each subcommand lives in src/cli/commands/ and
// registers itself here; main only parses and dispatches.
#include <functional>

#include <CLI/CLI.hpp>

#include "cli/commands/validate.h"

int main(int argc, char** argv) {
  CLI::App app("corral: submit, inspect and manage training jobs on a Corral cluster");
  app.require_subcommand(1);
  std::function<int()> run;
  corral::cli::add_validate_command(app, run);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help exits 0; every other parse failure is a usage error.
    const int code = app.exit(e);
    return code == 0 ? 0 : corral::cli::kExitUsage;
  }
  return run ? run() : corral::cli::kExitUsage;
}
