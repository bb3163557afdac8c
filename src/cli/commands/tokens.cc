// `corral tokens [-w]` lists API tokens (admin): who owns each, its role, when it was
// last used and when it expires; `corral token create` makes one and prints its secret
// once; `corral token revoke NAME` ends one.
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/commands/remote.h"
#include "cli/commands/remote_commands.h"
#include "cli/commands/validate.h"
#include "cli/views/tokens_view.h"
#include "core/units.h"

namespace corral::cli {
namespace {

using nlohmann::json;

struct NewToken {
  std::string name, role, tenant, node, owner, expires;
};

int create(const RemoteOptions& o, const NewToken& t) {
  json body = {{"name", t.name}, {"role", t.role}};
  if (!t.tenant.empty()) body["tenant"] = t.tenant;
  if (!t.node.empty()) body["node"] = t.node;
  if (!t.owner.empty()) body["owner"] = t.owner;
  if (!t.expires.empty()) {
    const auto d = core::parse_duration(t.expires);
    if (!d.ok() || d->count() < 1000) {
      return usage_error("token create",
                         "--expires: must be a duration of at least 1s, like "
                         "30d, 12h or 90m, got \"" +
                             t.expires + "\"");
    }
    body["expiresInSeconds"] = core::to_ms(*d) / 1000;
  }
  const Answer a = call(o, "POST", "/v1/tokens", body.dump());
  if (a.status != 201) return report_failure("token create", a, std::cerr);
  const TimeStyle style = time_style(o);
  print_output(std::cout, o, a.body, [&](bool) { return token_text(a.body, style); });
  return kExitOk;
}

}  // namespace

void add_tokens_commands(CLI::App& app, const CommandEnv& env) {
  add_remote_command(
      app, env, "tokens", "List API tokens (admin): owner, role, last use, expiry",
      [](const RemoteOptions& o) {
        return run_watched(o, [&](std::ostream& out) {
          const Answer a = call_list(o, "/v1/tokens", "tokens");
          if (a.status != 200) return report_failure("tokens", a, std::cerr);
          const TimeStyle style = time_style(o);
          print_output(out, o, a.body, [&](bool wide) {
            return table_text(tokens_table(a.body["tokens"], style, wide));
          });
          return kExitOk;
        });
      },
      nullptr, /*watchable=*/true);

  CLI::App* group = app.add_subcommand("token", "Create or revoke an API token (admin)");
  group->require_subcommand(1);
  auto t = std::make_shared<NewToken>();
  CLI::App* make =
      add_remote_command(*group, env, "create", "Create a token; its secret is printed this once",
                         [t](const RemoteOptions& o) { return create(o, *t); });
  make->add_option("--name", t->name, "a unique DNS label, e.g. ci-bot")->required();
  make->add_option("--role", t->role, "admin, member, agent or metrics")
      ->required()
      ->check(CLI::IsMember({"admin", "member", "agent", "metrics"}));
  make->add_option("--tenant", t->tenant, "the tenant of a member token");
  make->add_option("--node", t->node, "the node of an agent token");
  make->add_option("--owner", t->owner, "who it is for, e.g. an email address");
  make->add_option("--expires", t->expires, "lifetime, e.g. 30d or 12h (default: never)");

  auto name = std::make_shared<std::string>();
  add_remote_command(*group, env, "revoke", "Revoke a token: it is refused from now on",
                     [name](const RemoteOptions& o) {
                       const Answer a = call(o, "DELETE", "/v1/tokens/" + query_value(*name));
                       if (a.status != 200) return report_failure("token revoke", a, std::cerr);
                       const TimeStyle style = time_style(o);
                       print_output(std::cout, o, a.body,
                                    [&](bool) { return token_text(a.body, style); });
                       return kExitOk;
                     })
      ->add_option("name", *name, "token name")
      ->required();
}

}  // namespace corral::cli
