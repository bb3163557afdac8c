// `corral validate FILE...`: checks job spec files offline, as the server would on
// submit, and prints each valid spec in its normalized JSON form (defaults filled in,
// secrets masked) or every error found, one `FILE: path: reason` line each.
//
// Thread safety: not for concurrent use (writes to the streams it is given).
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

// CLI11's own namespace, declared here so this header does not pull in CLI11.
namespace CLI {  // NOLINT(readability-identifier-naming): CLI11 names it, not us
class App;
}  // namespace CLI

namespace corral::cli {

// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitInvalid = 1;  // the input was read but is not acceptable
inline constexpr int kExitUsage = 2;    // bad arguments, or an input that cannot be read

struct ValidateOptions {
  std::vector<std::string> files;  // "-" reads standard input
  bool quiet = false;              // print errors only
};

// Validates every file in `options`; returns the exit code. Files ending in .json are
// read as JSON, anything else (and stdin) as YAML, which also accepts JSON.
int run_validate(const ValidateOptions& options, std::istream& in, std::ostream& out,
                 std::ostream& err);

// Registers the `validate` subcommand on `app`. When the command line selects it,
// `run` is set to a function that runs it and returns the exit code.
void add_validate_command(CLI::App& app, std::function<int()>& run);

}  // namespace corral::cli
