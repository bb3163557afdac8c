#include "sim/replay_cli.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/status.h"
#include "cycle/capture.h"
#include "cycle/replay.h"
#include "cycle/scheduler_config.h"

namespace corral::sim {
namespace {

int fail(const std::string& file, const core::Status& s) {
  std::fprintf(stderr, "corral-sim replay: %s: %s\n", file.c_str(), s.to_string().c_str());
  return 1;
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return std::move(text).str();
}

// A few bytes either side of `at`, for a person to see what differs.
std::string around(std::string_view s, std::size_t at) {
  constexpr std::size_t kBefore = 24, kLength = 72;
  const std::size_t from = at > kBefore ? at - kBefore : 0;
  return std::string(s.substr(std::min(from, s.size()), kLength));
}

}  // namespace

int replay_command(int argc, char** argv) {
  CLI::App app{
      "corral-sim replay: decide captured scheduling cycles again and print the "
      "decisions, one line per file",
      "corral-sim replay"};
  std::vector<std::string> files;
  std::string config_path;
  bool check = false;
  app.add_option("files", files, "captured cycle files (corrald writes them)")->required();
  auto* config =
      app.add_option("--config", config_path,
                     "YAML whose scheduler: section is applied over each file's captured config "
                     "(corrald's --config will do)");
  app.add_flag("--check", check,
               "compare with the captured decisions byte for byte; exit 1 naming each file "
               "that differs")
      ->excludes(config);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

  std::size_t identical = 0;
  for (const std::string& file : files) {
    // 1. Read the capture and the config it is to be decided under.
    const std::optional<std::string> text = read_file(file);
    if (!text) return fail(file, core::invalid_argument("", "cannot read the file"));
    auto captured = cycle::parse_captured_cycle(*text);
    if (!captured.ok()) return fail(file, captured.status());
    sched::SchedulerConfig decide_config = captured->config;
    if (!config_path.empty()) {
      auto applied = cycle::load_scheduler_config(config_path, captured->config);
      if (!applied.ok()) return fail(config_path, applied.status());
      decide_config = std::move(*applied);
    }
    // 2. Decide again and print.
    auto decisions = cycle::replay_decisions(*captured, decide_config);
    if (!decisions.ok()) return fail(file, decisions.status());
    std::fwrite(decisions->data(), 1, decisions->size(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
    // 3. Compare with what the capturing process decided.
    if (!check) continue;
    const std::string& was = captured->decisions_json;
    if (was.empty()) {
      std::fprintf(stderr,
                   "corral-sim replay: %s: decisions: the file holds no captured decisions to "
                   "check against\n",
                   file.c_str());
    } else if (const auto at = cycle::first_difference(was, *decisions)) {
      std::fprintf(stderr,
                   "corral-sim replay: %s: differs from the captured decisions at byte %zu\n"
                   "  captured: ...%s...\n  replayed: ...%s...\n",
                   file.c_str(), *at, around(was, *at).c_str(), around(*decisions, *at).c_str());
    } else {
      ++identical;
    }
  }
  if (!check) return 0;
  std::fprintf(stderr, "corral-sim replay: %zu of %zu files identical to the captured decisions\n",
               identical, files.size());
  return identical == files.size() ? 0 : 1;
}

}  // namespace corral::sim
