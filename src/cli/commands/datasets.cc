// `corral datasets` lists datasets; `corral dataset versions ID`, `get ID@VERSION`,
// `register ID -f FILE` and `status ID@VERSION passed|quarantined|pending --reason R`
// (docs/datasets.md).
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/commands/input_file.h"
#include "cli/commands/remote.h"
#include "cli/commands/remote_commands.h"
#include "cli/commands/validate.h"
#include "cli/views/datasets_view.h"
#include "core/dataset.h"

namespace corral::cli {
namespace {

using nlohmann::json;

// "/v1/datasets/ID/versions/VERSION" of ID@VERSION, or a usage error.
core::Result<std::string> version_path(const std::string& ref_text) {
  CORRAL_ASSIGN_OR_RETURN(const core::DatasetRef ref, core::parse_dataset_ref(ref_text, "dataset"));
  return "/v1/datasets/" + ref.dataset + "/versions/" + ref.version;
}

int print_version(const RemoteOptions& o, const char* command, const Answer& a, int want) {
  if (a.status != want && a.status != 200) return report_failure(command, a, std::cerr);
  const TimeStyle style = time_style(o);
  print_output(std::cout, o, a.body, [&](bool) { return dataset_version_text(a.body, style); });
  return kExitOk;
}

struct StatusMove {
  std::string ref, status, reason;
};

}  // namespace

void add_datasets_commands(CLI::App& app, const CommandEnv& env) {
  add_remote_command(
      app, env, "datasets", "List datasets: owner, versions, newest", [](const RemoteOptions& o) {
        const Answer a = call_list(o, "/v1/datasets", "datasets");
        if (a.status != 200) return report_failure("datasets", a, std::cerr);
        const TimeStyle style = time_style(o);
        print_output(std::cout, o, a.body,
                     [&](bool) { return table_text(datasets_table(a.body["datasets"], style)); });
        return kExitOk;
      });

  CLI::App* group = app.add_subcommand("dataset", "Register, show or move a dataset version");
  group->require_subcommand(1);

  auto id = std::make_shared<std::string>();
  add_remote_command(*group, env, "versions", "List a dataset's versions",
                     [id](const RemoteOptions& o) {
                       const Answer a = call_list(
                           o, "/v1/datasets/" + query_value(*id) + "/versions", "versions");
                       if (a.status != 200) return report_failure("dataset versions", a, std::cerr);
                       const TimeStyle style = time_style(o);
                       print_output(std::cout, o, a.body, [&](bool wide) {
                         return table_text(dataset_versions_table(a.body["versions"], style, wide));
                       });
                       return kExitOk;
                     })
      ->add_option("id", *id, "dataset id")
      ->required();

  auto ref = std::make_shared<std::string>();
  add_remote_command(*group, env, "get", "Show one version: content, lineage, status",
                     [ref](const RemoteOptions& o) {
                       const auto path = version_path(*ref);
                       if (!path.ok()) return usage_error("dataset get", path.status().to_string());
                       return print_version(o, "dataset get", call(o, "GET", *path), 200);
                     })
      ->add_option("ref", *ref, "DATASET@VERSION")
      ->required();

  auto reg = std::make_shared<std::pair<std::string, std::string>>();
  CLI::App* r = add_remote_command(
      *group, env, "register", "Register a version from a YAML or JSON file (docs/datasets.md)",
      [reg](const RemoteOptions& o) {
        const auto doc = read_document(reg->second);
        if (!doc.ok()) return usage_error("dataset register", doc.status().to_string());
        const Answer a =
            call(o, "POST", "/v1/datasets/" + query_value(reg->first) + "/versions", doc->dump());
        return print_version(o, "dataset register", a, 201);
      });
  r->add_option("id", reg->first, "dataset id")->required();
  r->add_option("-f,--file", reg->second, "the version: version, uri, digest, sizeBytes, ...")
      ->required();

  auto move = std::make_shared<StatusMove>();
  CLI::App* m = add_remote_command(
      *group, env, "status", "Move a version's quality status (a reason for quarantine)",
      [move](const RemoteOptions& o) {
        const auto path = version_path(move->ref);
        if (!path.ok()) return usage_error("dataset status", path.status().to_string());
        const json body = {{"status", move->status}, {"reason", move->reason}};
        return print_version(o, "dataset status", call(o, "POST", *path + "/status", body.dump()),
                             200);
      });
  m->add_option("ref", move->ref, "DATASET@VERSION")->required();
  m->add_option("status", move->status, "passed, quarantined or pending")
      ->required()
      ->check(CLI::IsMember({"passed", "quarantined", "pending"}));
  m->add_option("--reason", move->reason, "why (required into and out of quarantine)");
}

}  // namespace corral::cli
