// `corral logs JOB [--rank N] [--attempt A] [--tail BYTES]`: prints one rank's log, which
// corrald fetches from the agent that ran it (GET /v1/jobs/{id}/logs). With -o json or
// yaml the text comes wrapped as {"job", "rank", "attempt", "log"}: the job as a number,
// the attempt the one read (the job's current one unless --attempt).
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/commands/job_selector.h"
#include "cli/commands/remote.h"
#include "cli/commands/remote_commands.h"
#include "cli/commands/validate.h"

namespace corral::cli {
namespace {

struct LogsArgs {
  std::string id;
  int rank = 0;
  int attempt = -1;
  long long tail = 1 << 20;
};

int print_log(const RemoteOptions& o, const LogsArgs& args) {
  const auto id = parse_job_id(args.id);
  if (!id.ok()) return usage_error("logs", id.status().message());
  std::int64_t attempt = args.attempt;
  if (attempt < 0 && format_of(o) != Format::kTable && format_of(o) != Format::kWide) {
    // The document names the attempt it holds: the job's current one.
    const Answer job = call(o, "GET", "/v1/jobs/" + std::to_string(*id));
    if (job.status != 200) return report_failure("logs", job, std::cerr);
    attempt = job.body.value("attempt", std::int64_t{0});
  }
  std::string path = "/v1/jobs/" + std::to_string(*id) + "/logs?rank=" + std::to_string(args.rank) +
                     "&tailBytes=" + std::to_string(args.tail);
  if (attempt >= 0) path += "&attempt=" + std::to_string(attempt);
  const Answer a = call(o, "GET", path);
  if (a.status != 200) return report_failure("logs", a, std::cerr);
  const std::string log = a.body.is_string() ? a.body.get<std::string>() : a.body.dump();
  const nlohmann::json doc = {
      {"job", *id}, {"rank", args.rank}, {"attempt", attempt}, {"log", log}};
  print_output(std::cout, o, doc, [&](bool) { return log; });
  return kExitOk;
}

}  // namespace

void add_logs_command(CLI::App& app, const CommandEnv& env) {
  auto args = std::make_shared<LogsArgs>();
  CLI::App* cmd =
      add_remote_command(app, env, "logs", "Print a rank's log (stdout and stderr)",
                         [args](const RemoteOptions& o) { return print_log(o, *args); });
  cmd->add_option("job", args->id, "job id")->required();
  cmd->add_option("--rank", args->rank, "rank (default 0)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--attempt", args->attempt, "attempt (default: the current one)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--tail", args->tail, "at most this many bytes from the end")
      ->check(CLI::NonNegativeNumber);
}

}  // namespace corral::cli
