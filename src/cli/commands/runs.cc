// `corral runs [--status S] [--dataset ID@VERSION]` lists runs; `corral run get RUN`
// shows one (manifest, attempts, metrics, artifacts) and `corral run metrics RUN [--name
// N]` its points; `corral runs reproduce RUN` submits a job with the run's manifest
// pinned (docs/runs.md). `corral sweep ID` shows a sweep (docs/jobspec.md#sweeps).
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/commands/remote.h"
#include "cli/commands/remote_commands.h"
#include "cli/commands/validate.h"
#include "cli/views/runs_view.h"

namespace corral::cli {
namespace {

struct RunFilter {
  std::string status, dataset;
};

std::string run_path(const std::string& id) { return "/v1/runs/" + query_value(id); }

}  // namespace

void add_runs_commands(CLI::App& app, const CommandEnv& env) {
  auto filter = std::make_shared<RunFilter>();
  CLI::App* runs = add_remote_command(
      app, env, "runs", "List training runs: status, datasets, code, attempts",
      [filter](const RemoteOptions& o) {
        std::string path = "/v1/runs";
        std::string sep = "?";
        for (const auto& [name, value] :
             {std::pair<const char*, const std::string*>{"status", &filter->status},
              {"dataset", &filter->dataset}}) {
          if (value->empty()) continue;
          path += sep + name + "=" + query_value(*value);
          sep = "&";
        }
        const Answer a = call_list(o, path, "runs");
        if (a.status != 200) return report_failure("runs", a, std::cerr);
        const TimeStyle style = time_style(o);
        print_output(std::cout, o, a.body, [&](bool wide) {
          return table_text(runs_table(a.body["runs"], style, wide));
        });
        return kExitOk;
      });
  runs->add_option("--status", filter->status,
                   "only runs in this status (running, succeeded, ...)");
  runs->add_option("--dataset", filter->dataset, "only runs that used DATASET@VERSION");

  // `corral runs reproduce RUN`: the same manifest, pinned, as a new job.
  auto source = std::make_shared<std::string>();
  add_remote_command(*runs, env, "reproduce", "Submit a job with a run's manifest pinned",
                     [source](const RemoteOptions& o) {
                       const Answer a = post_once(o, run_path(*source) + "/reproduce", "{}");
                       if (a.status != 201) return report_failure("runs reproduce", a, std::cerr);
                       print_output(std::cout, o, a.body, [&](bool) {
                         return "run " + text(field(a.body, "id")) +
                                " submitted, reproducing run " + text(field(a.body, "reproduces")) +
                                " (" + text(field(a.body, "configHash")) + ")\n";
                       });
                       return kExitOk;
                     })
      ->add_option("run", *source, "the run to reproduce")
      ->required();

  CLI::App* group = app.add_subcommand("run", "Show a training run");
  group->require_subcommand(1);

  auto id = std::make_shared<std::string>();
  add_remote_command(*group, env, "get", "Show a run: manifest, attempts, metrics, artifacts",
                     [id](const RemoteOptions& o) {
                       const Answer a = call(o, "GET", run_path(*id));
                       if (a.status != 200) return report_failure("run get", a, std::cerr);
                       const TimeStyle style = time_style(o);
                       print_output(std::cout, o, a.body,
                                    [&](bool) { return run_text(a.body, style); });
                       return kExitOk;
                     })
      ->add_option("run", *id, "run id")
      ->required();

  auto metric = std::make_shared<std::pair<std::string, std::string>>();
  CLI::App* m = add_remote_command(
      *group, env, "metrics", "List a run's metric points", [metric](const RemoteOptions& o) {
        std::string path = run_path(metric->first) + "/metrics";
        if (!metric->second.empty()) path += "?name=" + query_value(metric->second);
        const Answer a = call_list(o, path, "points");
        if (a.status != 200) return report_failure("run metrics", a, std::cerr);
        const TimeStyle style = time_style(o);
        print_output(std::cout, o, a.body, [&](bool) {
          return table_text(metric_points_table(a.body["points"], style));
        });
        return kExitOk;
      });
  m->add_option("run", metric->first, "run id")->required();
  m->add_option("--name", metric->second, "only this metric");

  auto sweep = std::make_shared<std::string>();
  add_remote_command(app, env, "sweep",
                     "Show a sweep: its trials' parameters, metric and rungs, and the best trial "
                     "with its run",
                     [sweep](const RemoteOptions& o) {
                       const Answer a = call(o, "GET", "/v1/sweeps/" + query_value(*sweep));
                       if (a.status != 200) return report_failure("sweep", a, std::cerr);
                       print_output(std::cout, o, a.body, [&](bool) { return sweep_text(a.body); });
                       return kExitOk;
                     })
      ->add_option("id", *sweep, "the sweep's id (its first trial's job id)")
      ->required();
}

}  // namespace corral::cli
