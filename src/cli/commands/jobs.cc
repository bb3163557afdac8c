// `corral jobs [selectors] [-w]` lists jobs with where and how long they run (an array as
// one row); `corral job ID` shows one job with its placement, times and events (and for an
// array's id, its tasks); `corral queue [-w]` the
// pending jobs in queue order.
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/commands/job_selector.h"
#include "cli/commands/remote.h"
#include "cli/commands/remote_commands.h"
#include "cli/commands/validate.h"
#include "cli/views/jobs_view.h"

namespace corral::cli {
namespace {

using nlohmann::json;

int list_jobs(const RemoteOptions& o, const JobSelector& selector, std::ostream& out) {
  Answer a = call_list(o, selector.list_path(), "jobs");
  if (a.status != 200) return report_failure("jobs", a, std::cerr);
  json jobs = json::array();
  for (auto& j : a.body["jobs"]) {
    if (selector.matches(j)) jobs.push_back(std::move(j));
  }
  a.body["jobs"] = jobs;
  // Where each job runs now: the table's NODES and RUN (a list's jobs carry no placement).
  json allocations = json::array();
  if (format_of(o) == Format::kTable || format_of(o) == Format::kWide) {
    const Answer placed = call_list(o, "/v1/allocations", "allocations");
    if (placed.status == 200) allocations = placed.body["allocations"];
  }
  const TimeStyle style = time_style(o);
  print_output(out, o, a.body,
               [&](bool wide) { return table_text(jobs_table(jobs, allocations, style, wide)); });
  return kExitOk;
}

int show_job(const RemoteOptions& o, const std::string& id_text) {
  const auto id = parse_job_id(id_text);
  if (!id.ok()) return usage_error("job", id.status().message());
  const std::string path = "/v1/jobs/" + std::to_string(*id);
  const Answer a = call(o, "GET", path);
  if (a.status != 200) return report_failure("job", a, std::cerr);
  const Answer e = call_list(o, path + "/events", "events");
  json doc = a.body;
  if (e.status == 200) doc["events"] = e.body["events"];
  // An array's id (its first task's) shows the array's tasks too.
  json array = nullptr;
  const json& member = field(a.body, "array");
  if (member.is_object() && member.value("job", std::int64_t{0}) == *id) {
    const Answer t = call(o, "GET", "/v1/arrays/" + std::to_string(*id));
    if (t.status == 200) array = doc["arrayTasks"] = t.body;
  }
  const TimeStyle style = time_style(o);
  print_output(std::cout, o, doc, [&](bool) {
    return job_text(a.body, e.status == 200 ? e.body["events"] : json(nullptr), style) +
           (array.is_object() ? array_text(array, style) : "");
  });
  return kExitOk;
}

}  // namespace

void add_jobs_commands(CLI::App& app, const CommandEnv& env) {
  auto selector = std::make_shared<JobSelector>();
  CLI::App* jobs = add_remote_command(
      app, env, "jobs", "List jobs (like squeue, kubectl get jobs)",
      [selector](const RemoteOptions& o) {
        if (const core::Status s = selector->check(); !s.ok()) {
          return usage_error("jobs", s.to_string());
        }
        return run_watched(o, [&](std::ostream& out) { return list_jobs(o, *selector, out); });
      },
      nullptr, /*watchable=*/true);
  selector->add_flags(*jobs);
  jobs->add_flag("--all,-A", selector->all, "finished jobs too (without --state: unfinished only)");

  auto id = std::make_shared<std::string>();
  CLI::App* job = add_remote_command(app, env, "job",
                                     "Show one job: placement, times, checkpoint, cost and events",
                                     [id](const RemoteOptions& o) { return show_job(o, *id); });
  job->add_option("id", *id, "job id")->required();

  add_remote_command(
      app, env, "queue", "Show pending jobs in queue order, how long each waited and why",
      [](const RemoteOptions& o) {
        return run_watched(o, [&](std::ostream& out) {
          const Answer a = call_list(o, "/v1/queue", "queue");
          if (a.status != 200) return report_failure("queue", a, std::cerr);
          const TimeStyle style = time_style(o);
          print_output(out, o, a.body, [&](bool wide) {
            return table_text(queue_table(a.body["queue"], style, wide));
          });
          return kExitOk;
        });
      },
      nullptr, /*watchable=*/true);
}

}  // namespace corral::cli
