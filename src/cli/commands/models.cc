// `corral models` lists models; `corral model get ID`, `register ID -f FILE`, `approve ID
// VERSION NAME [--reason R]`, `promote ID ALIAS VERSION [--reason R] [--canary V --weight
// W] [--endpoint URL]`, `rollback ID ALIAS [--reason R]` and `history ID ALIAS`
// (docs/models.md).
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/commands/input_file.h"
#include "cli/commands/remote.h"
#include "cli/commands/remote_commands.h"
#include "cli/commands/validate.h"
#include "cli/views/models_view.h"

namespace corral::cli {
namespace {

using nlohmann::json;

struct AliasMove {
  std::string model, alias, version, reason, canary, endpoint;
  double weight = 0;
};

std::string alias_path(const std::string& model, const std::string& alias) {
  return "/v1/models/" + query_value(model) + "/aliases/" + query_value(alias);
}

struct ApprovalArgs {
  std::string model, version, name, reason;
};

// A version as register and approve answer it: 201 when this call added it, 200 when it
// was there already (a retry).
int print_model_version(const RemoteOptions& o, const char* command, const Answer& a,
                        const std::string& added, const std::string& already) {
  if (a.status != 200 && a.status != 201) return report_failure(command, a, std::cerr);
  const TimeStyle style = time_style(o);
  print_output(std::cout, o, a.body, [&](bool) {
    return model_version_text(a.body, a.status == 201 ? added : already, style);
  });
  return kExitOk;
}

int print_alias(const RemoteOptions& o, const char* command, const Answer& a) {
  if (a.status != 200 && a.status != 201) return report_failure(command, a, std::cerr);
  print_output(std::cout, o, a.body, [&](bool) {
    return "alias " + text(field(a.body, "alias")) + " of " + text(field(a.body, "model")) +
           " points at " + text(field(a.body, "version")) + "\n";
  });
  return kExitOk;
}

}  // namespace

void add_models_commands(CLI::App& app, const CommandEnv& env) {
  add_remote_command(
      app, env, "models", "List models: owner, versions, newest", [](const RemoteOptions& o) {
        const Answer a = call_list(o, "/v1/models", "models");
        if (a.status != 200) return report_failure("models", a, std::cerr);
        const TimeStyle style = time_style(o);
        print_output(std::cout, o, a.body,
                     [&](bool) { return table_text(models_table(a.body["models"], style)); });
        return kExitOk;
      });

  CLI::App* group = app.add_subcommand(
      "model", "Show a model, register or approve a version, promote or roll back an alias");
  group->require_subcommand(1);

  auto id = std::make_shared<std::string>();
  add_remote_command(*group, env, "get", "Show a model's versions and aliases",
                     [id](const RemoteOptions& o) {
                       const Answer a = call(o, "GET", "/v1/models/" + query_value(*id));
                       if (a.status != 200) return report_failure("model get", a, std::cerr);
                       const TimeStyle style = time_style(o);
                       print_output(std::cout, o, a.body,
                                    [&](bool) { return model_text(a.body, style); });
                       return kExitOk;
                     })
      ->add_option("model", *id, "model id")
      ->required();

  auto reg = std::make_shared<std::pair<std::string, std::string>>();
  CLI::App* g = add_remote_command(
      *group, env, "register",
      "Register a version from an artifact its run reported (a YAML or JSON file)",
      [reg](const RemoteOptions& o) {
        const auto doc = read_document(reg->second);
        if (!doc.ok()) return usage_error("model register", doc.status().to_string());
        const Answer a =
            call(o, "POST", "/v1/models/" + query_value(reg->first) + "/versions", doc->dump());
        return print_model_version(o, "model register", a, "registered",
                                   "already registered with this content");
      });
  g->add_option("model", reg->first, "model id")->required();
  g->add_option("-f,--file", reg->second,
                "the version: version, run, artifactUri, digest, inputSchema, outputSchema, "
                "gates; - reads standard input")
      ->required();

  auto approval = std::make_shared<ApprovalArgs>();
  CLI::App* ap = add_remote_command(
      *group, env, "approve", "Record an approval a version's gates ask for",
      [approval](const RemoteOptions& o) {
        json body = {{"name", approval->name}};
        if (!approval->reason.empty()) body["reason"] = approval->reason;
        const std::string path = "/v1/models/" + query_value(approval->model) + "/versions/" +
                                 query_value(approval->version) + "/approvals";
        return print_model_version(o, "model approve", call(o, "POST", path, body.dump()),
                                   "approval " + approval->name + " recorded",
                                   "approval " + approval->name + " was recorded already");
      });
  ap->add_option("model", approval->model, "model id")->required();
  ap->add_option("version", approval->version, "the version")->required();
  ap->add_option("name", approval->name, "the approval, as its gates name it (safety, legal, ...)")
      ->required();
  ap->add_option("--reason", approval->reason, "why, kept with the approval and in the audit log");

  auto move = std::make_shared<AliasMove>();
  CLI::App* p = add_remote_command(
      *group, env, "promote", "Point an alias at a version (a gated alias checks its gates)",
      [move](const RemoteOptions& o) {
        json body = {{"version", move->version}, {"reason", move->reason}};
        if (!move->endpoint.empty()) body["endpoint"] = move->endpoint;
        if (!move->canary.empty())
          body["canary"] = {{"version", move->canary}, {"weight", move->weight}};
        return print_alias(o, "model promote",
                           call(o, "POST", alias_path(move->model, move->alias), body.dump()));
      });
  p->add_option("model", move->model, "model id")->required();
  p->add_option("alias", move->alias, "production, canary or any name")->required();
  p->add_option("version", move->version, "the version it points at")->required();
  p->add_option("--reason", move->reason, "why, kept in the history");
  p->add_option("--canary", move->canary, "a second version taking a share of traffic");
  p->add_option("--weight", move->weight, "the canary's share, above 0 and below 1");
  p->add_option("--endpoint", move->endpoint, "where the serving side serves it");

  auto back = std::make_shared<AliasMove>();
  CLI::App* r = add_remote_command(
      *group, env, "rollback", "Move an alias back to its previous version",
      [back](const RemoteOptions& o) {
        const json body = {{"reason", back->reason}};
        return print_alias(
            o, "model rollback",
            call(o, "POST", alias_path(back->model, back->alias) + "/rollback", body.dump()));
      });
  r->add_option("model", back->model, "model id")->required();
  r->add_option("alias", back->alias, "the alias")->required();
  r->add_option("--reason", back->reason, "why, kept in the history");

  auto hist = std::make_shared<AliasMove>();
  CLI::App* h = add_remote_command(
      *group, env, "history", "Every move of an alias: who, when, from, to, why",
      [hist](const RemoteOptions& o) {
        const Answer a = call(o, "GET", alias_path(hist->model, hist->alias) + "/history");
        if (a.status != 200) return report_failure("model history", a, std::cerr);
        const TimeStyle style = time_style(o);
        print_output(std::cout, o, a.body,
                     [&](bool) { return table_text(alias_history_table(a.body["moves"], style)); });
        return kExitOk;
      });
  h->add_option("model", hist->model, "model id")->required();
  h->add_option("alias", hist->alias, "the alias")->required();
}

}  // namespace corral::cli
