// `corral session [-f spec.yaml | --gpus N --tenant T ... -- COMMAND...]`: starts an
// interactive session (priorityClass interactive, as Slurm's salloc), waits until it is
// placed and prints where it runs and how to reach it (views/session_view.h). While it
// waits, each new reason is printed to stderr; a session that ends before it is placed, or
// is still waiting after --timeout, exits 1 (the latter stays queued: its id is printed).
#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/commands/remote.h"
#include "cli/commands/remote_commands.h"
#include "cli/commands/validate.h"
#include "cli/views/session_view.h"
#include "core/job_spec_parse.h"
#include "core/priority.h"
#include "core/units.h"

namespace corral::cli {
namespace {

struct SessionArgs {
  std::string file;
  std::string name = "session";
  std::string tenant;
  int gpus = 1;
  std::string gpu_type;
  std::string idle_timeout;
  std::string timeout;  // how long to wait for the placement; empty: as long as it takes
  std::vector<std::string> command;
};

// The spec to submit, as JSON: the file's (which must be an interactive session's), or
// one made from the flags.
core::Result<std::string> session_spec(const SessionArgs& args) {
  if (!args.file.empty()) {
    std::ifstream in(args.file);
    if (!in) return core::invalid_argument("--file", "cannot read " + args.file);
    std::stringstream text;
    text << in.rdbuf();
    const core::ParseOutcome parsed = core::parse_job_spec(text.str(), core::SpecFormat::kYaml);
    if (!parsed.ok()) return core::invalid_fields(parsed.errors);
    if (parsed.spec->priority_class != core::kInteractiveClass) {
      return core::invalid_argument("priorityClass", "must be interactive for a session, got " +
                                                         parsed.spec->priority_class +
                                                         " (corral submit runs other jobs)");
    }
    return core::job_spec_to_json(*parsed.spec);
  }
  if (args.command.empty()) {
    return core::invalid_argument("COMMAND", "is required without -f (after --: what to run)");
  }
  nlohmann::json spec = {{"name", args.name},
                         {"priorityClass", std::string(core::kInteractiveClass)},
                         {"resources", {{"gpus", args.gpus}}},
                         {"command", args.command}};
  if (!args.tenant.empty()) spec["tenant"] = args.tenant;
  if (!args.gpu_type.empty())
    spec["resources"]["gpuTypes"] = nlohmann::json::array({args.gpu_type});
  if (!args.idle_timeout.empty()) spec["session"] = {{"idleTimeout", args.idle_timeout}};
  return spec.dump();
}

int start_session(const RemoteOptions& o, const SessionArgs& args) {
  const auto spec = session_spec(args);
  if (!spec.ok()) return usage_error("session", spec.status().to_string());
  core::Duration timeout{0};
  if (!args.timeout.empty()) {
    const auto parsed = core::parse_duration(args.timeout);
    if (!parsed.ok()) return usage_error("session", "--timeout: " + parsed.status().message());
    timeout = *parsed;
  }
  const Answer a = post_once(o, "/v1/jobs", *spec);
  if (a.status != 201) return report_failure("session", a, std::cerr);
  const std::string id = std::to_string(a.body.value("id", std::int64_t{0}));
  std::cerr << "session " << id << " submitted; waiting for its GPUs\n";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout);
  std::string shown;
  for (;;) {
    const Answer job = call(o, "GET", "/v1/jobs/" + id);
    if (job.status != 200) return report_failure("session", job, std::cerr);
    const std::string phase = job.body.value("phase", "");
    if (phase == "launching" || phase == "running") {
      print_output(std::cout, o, job.body, [&](bool) { return session_text(job.body); });
      return kExitOk;
    }
    if (phase != "pending") {
      std::cerr << "corral session: session " << id
                << " ended before it was placed: " << session_wait_text(job.body) << "\n";
      return kExitInvalid;
    }
    if (const std::string line = session_wait_text(job.body); line != shown) {
      std::cerr << line << "\n";
      shown = line;
    }
    if (timeout.count() > 0 && std::chrono::steady_clock::now() >= deadline) {
      std::cerr << "corral session: not placed within " << core::format_duration(timeout)
                << "; session " << id << " stays queued (corral cancel " << id << " drops it)\n";
      return kExitInvalid;
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

}  // namespace

void add_session_command(CLI::App& app, const CommandEnv& env) {
  auto args = std::make_shared<SessionArgs>();
  CLI::App* cmd = add_remote_command(
      app, env, "session",
      "Start an interactive session, wait until it is placed, print how to reach it",
      [args](const RemoteOptions& o) { return start_session(o, *args); });
  cmd->add_option("-f,--file", args->file,
                  "a session's job spec (priorityClass: interactive); else the flags below");
  cmd->add_option("--name", args->name, "the session's name (default session)");
  cmd->add_option("--tenant", args->tenant, "its tenant (default: the spec default)");
  cmd->add_option("--gpus", args->gpus, "GPUs (default 1)")->check(CLI::PositiveNumber);
  cmd->add_option("--gpu-type", args->gpu_type, "the GPU type it needs (default: any)");
  cmd->add_option("--idle-timeout", args->idle_timeout,
                  "idle this long, it is warned then reclaimed (default: corrald's)");
  cmd->add_option("--timeout", args->timeout,
                  "give up waiting after this long, e.g. 10m (the session stays queued)");
  cmd->add_option("command", args->command, "what to run, after --");
}

}  // namespace corral::cli
