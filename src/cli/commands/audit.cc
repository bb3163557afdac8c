// `corral audit` lists the audit log (admin); `corral audit verify` checks its hash
// chain on the server and exits 1 when an entry was edited or deleted.
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/commands/remote.h"
#include "cli/commands/remote_commands.h"
#include "cli/commands/validate.h"

namespace corral::cli {

namespace {

int verify(const RemoteOptions& o) {
  const Answer a = call(o, "GET", "/v1/audit/verify");
  if (a.status != 200) return report_failure("audit verify", a, std::cerr);
  if (o.output == "json") {
    std::cout << a.body.dump(2) << "\n";
  } else if (a.body.value("ok", false)) {
    std::cout << "audit log intact: " << text(a.body["entries"]) << " entries\n";
  } else {
    std::cout << "audit log TAMPERED at entry " << text(a.body["firstBadSeq"]) << ": "
              << text(a.body["problem"]) << "\n";
  }
  return a.body.value("ok", false) ? kExitOk : kExitInvalid;
}

int list(const RemoteOptions& o, const std::string& after) {
  const Answer a = call_list(o, "/v1/audit?after=" + after, "entries");
  if (a.status != 200) return report_failure("audit", a, std::cerr);
  if (o.output == "json") {
    std::cout << a.body.dump(2) << "\n";
    return kExitOk;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& e : a.body["entries"]) {
    rows.push_back({text(e["seq"]), date_text(e["timeMs"]), text(e["actor"]), text(e["action"]),
                    text(e["target"]), text(e["after"])});
  }
  print_table(std::cout, {"SEQ", "TIME", "ACTOR", "ACTION", "TARGET", "AFTER"}, rows);
  return kExitOk;
}

}  // namespace

void add_audit_command(CLI::App& app, std::function<int()>& run) {
  // One options object for `audit` and `audit verify`, so flags may go on either.
  auto options = std::make_shared<RemoteOptions>();
  auto after = std::make_shared<std::string>("0");
  auto verify_selected = std::make_shared<bool>(false);
  // CLI11 runs the subcommand's callback before its parent's, so the parent's function
  // dispatches on what was selected.
  CLI::App* cmd = add_remote_command(
      app, run, "audit", "List the audit log (admin); `audit verify` checks its hash chain",
      [after, verify_selected](const RemoteOptions& o) {
        return *verify_selected ? verify(o) : list(o, *after);
      },
      options);
  cmd->add_option("--after", *after, "entries after this sequence number");
  CLI::App* check = cmd->add_subcommand("verify",
                                        "Check the audit log's hash chain; exit 1 "
                                        "when an entry was edited or deleted");
  add_remote_flags(*check, *options);
  check->callback([verify_selected] { *verify_selected = true; });
}

}  // namespace corral::cli
