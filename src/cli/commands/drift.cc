// `corral drift reports MODEL VERSION` lists a version's drift reports; `corral drift
// report MODEL VERSION -f FILE` posts current samples ({features, segment}) and prints the
// report they made; `corral drift reference MODEL VERSION -f FILE` sets its reference
// ({features} or {window}, with thresholds); `corral drift retraining MODEL` shows the model's
// retraining template, its tenant's retraining budget and the jobs its drift submitted, `-f
// JOB_FILE` sets the template from a job spec and `--delete` removes it (docs/drift.md).
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/commands/input_file.h"
#include "cli/commands/remote.h"
#include "cli/commands/remote_commands.h"
#include "cli/commands/validate.h"
#include "cli/views/drift_view.h"

namespace corral::cli {
namespace {

using nlohmann::json;

struct DriftArgs {
  std::string model, version, file;
  bool remove = false;
};

std::string version_path(const DriftArgs& d) {
  return "/v1/models/" + query_value(d.model) + "/versions/" + query_value(d.version) + "/drift";
}

int show_retraining(const RemoteOptions& o, const DriftArgs& d) {
  const Answer a = call(o, "GET", "/v1/models/" + query_value(d.model) + "/retraining");
  if (a.status != 200) return report_failure("drift retraining", a, std::cerr);
  const TimeStyle style = time_style(o);
  print_output(std::cout, o, a.body, [&](bool) { return retraining_text(a.body, style); });
  return kExitOk;
}

int change_retraining(const RemoteOptions& o, const DriftArgs& d) {
  const std::string path = "/v1/models/" + query_value(d.model) + "/retraining";
  if (d.remove) {
    const Answer a = call(o, "DELETE", path);
    if (a.status != 200) return report_failure("drift retraining", a, std::cerr);
    std::cout << "model " << d.model << " has no retraining template now\n";
    return kExitOk;
  }
  const auto job = read_document(d.file);
  if (!job.ok()) return usage_error("drift retraining", job.status().to_string());
  const Answer a = call(o, "PUT", path, json{{"job", *job}}.dump());
  if (a.status != 200) return report_failure("drift retraining", a, std::cerr);
  print_output(std::cout, o, a.body, [&](bool) {
    return "drift of " + d.model + " submits job " + text(field(field(a.body, "job"), "name")) +
           " now\n";
  });
  return kExitOk;
}

}  // namespace

void add_drift_commands(CLI::App& app, const CommandEnv& env) {
  CLI::App* group = app.add_subcommand(
      "drift", "A model version's drift reports, its reference, and retraining on drift");
  group->require_subcommand(1);

  auto list = std::make_shared<DriftArgs>();
  CLI::App* l =
      add_remote_command(*group, env, "reports", "List a version's drift reports, newest first",
                         [list](const RemoteOptions& o) {
                           const Answer a = call(o, "GET", version_path(*list));
                           if (a.status != 200)
                             return report_failure("drift reports", a, std::cerr);
                           const TimeStyle style = time_style(o);
                           print_output(std::cout, o, a.body, [&](bool) {
                             return table_text(drift_reports_table(a.body["reports"], style));
                           });
                           return kExitOk;
                         });
  l->add_option("model", list->model, "model id")->required();
  l->add_option("version", list->version, "the version")->required();

  // One report per invocation: a retry after no answer is the same request under the same
  // key, so it neither keeps a second report nor submits a second retraining job.
  auto post = std::make_shared<DriftArgs>();
  CLI::App* p = add_remote_command(
      *group, env, "report",
      "Judge current samples against the version's reference and keep the report (a YAML or "
      "JSON file)",
      [post](const RemoteOptions& o) {
        const auto doc = read_document(post->file);
        if (!doc.ok()) return usage_error("drift report", doc.status().to_string());
        const Answer a = post_once(o, version_path(*post), doc->dump());
        if (a.status != 201) return report_failure("drift report", a, std::cerr);
        const TimeStyle style = time_style(o);
        print_output(std::cout, o, a.body, [&](bool) { return drift_report_text(a.body, style); });
        return kExitOk;
      });
  p->add_option("model", post->model, "model id")->required();
  p->add_option("version", post->version, "the version")->required();
  p->add_option("-f,--file", post->file,
                "{features: {NAME: [values] or {edges, counts}}, segment: LABEL}; - reads "
                "standard input")
      ->required();

  auto ref = std::make_shared<DriftArgs>();
  CLI::App* r = add_remote_command(
      *group, env, "reference", "Set a version's reference from a YAML or JSON file",
      [ref](const RemoteOptions& o) {
        const auto doc = read_document(ref->file);
        if (!doc.ok()) return usage_error("drift reference", doc.status().to_string());
        const Answer a = call(o, "POST", version_path(*ref) + "/reference", doc->dump());
        if (a.status != 200) return report_failure("drift reference", a, std::cerr);
        print_output(std::cout, o, a.body, [&](bool) {
          std::string out = "reference of " + ref->model + "@" + ref->version + ":";
          for (const auto& [name, n] : a.body["features"].items()) {
            out += " " + name + " (" + text(n) + " values)";
          }
          return out + "\n";
        });
        return kExitOk;
      });
  r->add_option("model", ref->model, "model id")->required();
  r->add_option("version", ref->version, "the version")->required();
  r->add_option("-f,--file", ref->file, "{features: {NAME: [values]}} or {window: {fromMs, toMs}}")
      ->required();

  auto retrain = std::make_shared<DriftArgs>();
  CLI::App* t = add_remote_command(
      *group, env, "retraining",
      "Show the model's retraining template, budget and jobs; -f sets the template",
      [retrain](const RemoteOptions& o) {
        if (retrain->remove || !retrain->file.empty()) return change_retraining(o, *retrain);
        return show_retraining(o, *retrain);
      });
  t->add_option("model", retrain->model, "model id")->required();
  auto* file =
      t->add_option("-f,--file", retrain->file, "the job spec drift submits (YAML or JSON)");
  t->add_flag("--delete", retrain->remove, "drift submits nothing any more")->excludes(file);
}

}  // namespace corral::cli
