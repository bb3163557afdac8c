// `corral audit [--after SEQ] [-w]` lists the audit log (admin) with human times;
// `corral audit verify` checks its hash chain on the server and exits 1 when an entry
// was edited or deleted.
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/commands/remote.h"
#include "cli/commands/remote_commands.h"
#include "cli/commands/validate.h"
#include "cli/views/audit_view.h"

namespace corral::cli {

namespace {

int verify(const RemoteOptions& o) {
  const Answer a = call(o, "GET", "/v1/audit/verify");
  if (a.status != 200) return report_failure("audit verify", a, std::cerr);
  print_output(std::cout, o, a.body, [&](bool) {
    if (a.body.value("ok", false)) {
      return "audit log intact: " + text(field(a.body, "entries")) + " entries\n";
    }
    return "audit log TAMPERED at entry " + text(field(a.body, "firstBadSeq")) + ": " +
           text(field(a.body, "problem")) + "\n";
  });
  return a.body.value("ok", false) ? kExitOk : kExitInvalid;
}

int list(const RemoteOptions& o, const std::string& after, std::ostream& out) {
  const Answer a = call_list(o, "/v1/audit?after=" + query_value(after), "entries");
  if (a.status != 200) return report_failure("audit", a, std::cerr);
  const TimeStyle style = time_style(o);
  print_output(out, o, a.body,
               [&](bool wide) { return table_text(audit_table(a.body["entries"], style, wide)); });
  return kExitOk;
}

}  // namespace

void add_audit_command(CLI::App& app, const CommandEnv& env) {
  // One options object for `audit` and `audit verify`, so flags may go on either.
  auto options = std::make_shared<RemoteOptions>();
  auto after = std::make_shared<std::string>("0");
  auto verify_selected = std::make_shared<bool>(false);
  // CLI11 runs the subcommand's callback before its parent's, so the parent's function
  // dispatches on what was selected.
  CLI::App* cmd = add_remote_command(
      app, env, "audit", "List the audit log (admin); `audit verify` checks its hash chain",
      [after, verify_selected](const RemoteOptions& o) {
        if (*verify_selected) return verify(o);
        return run_watched(o, [&](std::ostream& out) { return list(o, *after, out); });
      },
      options, /*watchable=*/true);
  cmd->add_option("--after", *after, "entries after this sequence number");
  CLI::App* check = cmd->add_subcommand("verify",
                                        "Check the audit log's hash chain; exit 1 "
                                        "when an entry was edited or deleted");
  add_remote_flags(*check, *options);
  check->callback([verify_selected] { *verify_selected = true; });
}

}  // namespace corral::cli
