// `corral cancel ID [ID...] [--reason TEXT]` cancels jobs by id (an array's id: every
// task of the array); `corral cancel
// --tenant T --state S --label K=V [--yes]` cancels every unfinished job the selectors
// match (scancel's -A/-t/-n), after listing them and asking (y/N on stdin) unless --yes.
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/commands/job_selector.h"
#include "cli/commands/remote.h"
#include "cli/commands/remote_commands.h"
#include "cli/commands/validate.h"
#include "cli/views/jobs_view.h"
#include "core/job_phase.h"

namespace corral::cli {
namespace {

using nlohmann::json;

struct CancelArgs {
  std::vector<std::string> ids;
  std::string reason;
  bool yes = false;
  JobSelector selector;
};

// Cancels each job; prints one line per job (or, with -o json|yaml, the jobs as they
// are now). Exit 1 when any was refused, after trying them all.
int cancel_each(const RemoteOptions& o, const std::vector<std::int64_t>& ids,
                const std::string& reason) {
  const std::string body = reason.empty() ? "" : json{{"reason", reason}}.dump();
  json done = json::array();
  std::string lines;
  int code = kExitOk;
  for (const std::int64_t id : ids) {
    const std::string job = "/v1/jobs/" + std::to_string(id);
    // An array's id (its first task's) cancels the whole array, as scancel does.
    const Answer seen = call(o, "GET", job);
    const json& array = seen.status == 200 ? field(seen.body, "array") : json(nullptr);
    if (array.is_object() && array.value("job", std::int64_t{0}) == id) {
      const Answer a = call(o, "POST", "/v1/arrays/" + std::to_string(id) + "/cancel", body);
      if (a.status != 200) {
        code = std::max(code, report_failure("cancel", a, std::cerr));
        continue;
      }
      done.push_back(a.body);
      lines += "array " + text(field(a.body, "id")) + ": " + text(field(a.body, "cancelled")) +
               " of " + text(field(a.body, "count")) + " tasks cancelled\n";
      continue;
    }
    const Answer a = call(o, "POST", job + "/cancel", body);
    if (a.status != 200) {
      code = std::max(code, report_failure("cancel", a, std::cerr));
      continue;
    }
    done.push_back(a.body);
    lines += "job " + text(field(a.body, "id")) + " " + text(field(a.body, "phase")) + "\n";
  }
  print_output(std::cout, o, json{{"jobs", done}}, [&](bool) { return lines; });
  return code;
}

// The unfinished jobs the selectors match, listed, then cancelled once confirmed.
int cancel_selected(const RemoteOptions& o, CancelArgs& args) {
  Answer a = call_list(o, args.selector.list_path(), "jobs");
  if (a.status != 200) return report_failure("cancel", a, std::cerr);
  json matched = json::array();
  std::vector<std::int64_t> ids;
  for (auto& j : a.body["jobs"]) {
    const auto phase = core::job_phase_from_string(j.value("phase", ""));
    if (!args.selector.matches(j) || (phase && core::is_terminal(*phase))) continue;
    ids.push_back(j.value("id", std::int64_t{0}));
    matched.push_back(std::move(j));
  }
  if (ids.empty()) {
    std::cerr << "corral cancel: no unfinished job matches\n";
    return kExitOk;
  }
  if (!args.yes) {
    std::cerr << table_text(jobs_table(matched, json::array(), time_style(o), false))
              << "Cancel these " << ids.size() << " job" << (ids.size() == 1 ? "" : "s")
              << "? [y/N] " << std::flush;
    std::string answer;
    std::getline(std::cin, answer);
    if (answer != "y" && answer != "Y" && answer != "yes") {
      std::cerr << "corral cancel: not confirmed; nothing cancelled\n";
      return kExitInvalid;
    }
  }
  return cancel_each(o, ids, args.reason);
}

int run_cancel(const RemoteOptions& o, CancelArgs& args) {
  if (const core::Status s = args.selector.check(); !s.ok()) {
    return usage_error("cancel", s.to_string());
  }
  if (args.ids.empty() == args.selector.empty()) {
    return usage_error("cancel",
                       args.ids.empty()
                           ? "give job ids, or selectors (--tenant, --state, --label, --gpu-type)"
                           : "give job ids or selectors, not both");
  }
  if (args.selector.empty()) {
    std::vector<std::int64_t> ids;
    for (const auto& text_id : args.ids) {
      const auto id = parse_job_id(text_id);
      if (!id.ok()) return usage_error("cancel", id.status().message());
      ids.push_back(*id);
    }
    return cancel_each(o, ids, args.reason);
  }
  return cancel_selected(o, args);
}

}  // namespace

void add_cancel_command(CLI::App& app, const CommandEnv& env) {
  auto args = std::make_shared<CancelArgs>();
  CLI::App* cmd = add_remote_command(
      app, env, "cancel", "Cancel jobs by id, or every unfinished job the selectors match",
      [args](const RemoteOptions& o) { return run_cancel(o, *args); });
  cmd->add_option("ids", args->ids, "job ids");
  cmd->add_option("--reason", args->reason, "why, for the jobs' events and the audit log");
  cmd->add_flag("--yes,-y", args->yes, "cancel what the selectors match without asking");
  args->selector.add_flags(*cmd);
}

}  // namespace corral::cli
