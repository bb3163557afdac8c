// `corral nodes [-w]` lists nodes (sinfo -N, kubectl get nodes); `corral node NAME` shows
// one with a row per GPU (scontrol show node); `corral cordon|drain NODE --reason TEXT`
// and `corral undrain NODE` set its admin state (admin only; Slurm also requires a
// reason, which `corral nodes` then shows); `corral node delete NODE` removes it
// (scontrol delete nodename). `corral racks` lists racks' power caps and the watts in use.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/commands/remote.h"
#include "cli/commands/remote_commands.h"
#include "cli/commands/validate.h"
#include "cli/views/nodes_view.h"
#include "cli/views/racks_view.h"

namespace corral::cli {
namespace {

using nlohmann::json;

int list_nodes(const RemoteOptions& o, std::ostream& out) {
  const Answer a = call_list(o, "/v1/nodes", "nodes");
  if (a.status != 200) return report_failure("nodes", a, std::cerr);
  const TimeStyle style = time_style(o);
  print_output(out, o, a.body,
               [&](bool wide) { return table_text(nodes_table(a.body["nodes"], style, wide)); });
  return kExitOk;
}

int list_racks(const RemoteOptions& o, std::ostream& out) {
  const Answer a = call(o, "GET", "/v1/racks");
  if (a.status != 200) return report_failure("racks", a, std::cerr);
  print_output(out, o, a.body, [&](bool) { return table_text(racks_table(a.body["racks"])); });
  return kExitOk;
}

int show_node(const RemoteOptions& o, const std::string& name) {
  const Answer a = call(o, "GET", "/v1/nodes/" + query_value(name));
  if (a.status != 200) return report_failure("node", a, std::cerr);
  const TimeStyle style = time_style(o);
  print_output(std::cout, o, a.body, [&](bool wide) { return node_text(a.body, style, wide); });
  return kExitOk;
}

int set_admin(const RemoteOptions& o, const std::string& verb, const std::string& node,
              const std::string& reason) {
  const std::string body = reason.empty() ? "{}" : json{{"reason", reason}}.dump();
  const Answer a = call(o, "POST", "/v1/nodes/" + query_value(node) + "/" + verb, body);
  if (a.status != 200) return report_failure(verb, a, std::cerr);
  print_output(std::cout, o, a.body, [&](bool) {
    const std::string why = text(field(a.body, "adminReason"));
    return "node " + text(field(a.body, "id")) + " " + node_state(a.body) +
           (why.empty() ? "" : " (" + why + ")") + "\n";
  });
  return kExitOk;
}

// `corral node delete NAME`: the node leaves the fleet (admin; refused while it holds
// work or its agent is connected).
int delete_node(const RemoteOptions& o, const std::string& name) {
  const Answer a = call(o, "DELETE", "/v1/nodes/" + query_value(name));
  if (a.status != 200) return report_failure("node delete", a, std::cerr);
  print_output(std::cout, o, a.body, [&](bool) { return "node " + name + " deleted\n"; });
  return kExitOk;
}

}  // namespace

void add_nodes_commands(CLI::App& app, const CommandEnv& env) {
  add_remote_command(
      app, env, "nodes", "List nodes: state, GPUs, place in the network, health, heartbeat",
      [](const RemoteOptions& o) {
        return run_watched(o, [&](std::ostream& out) { return list_nodes(o, out); });
      },
      nullptr, /*watchable=*/true);

  add_remote_command(
      app, env, "racks", "List racks: power cap, watts in use and free, nodes and GPUs",
      [](const RemoteOptions& o) {
        return run_watched(o, [&](std::ostream& out) { return list_racks(o, out); });
      },
      nullptr, /*watchable=*/true);

  // `node NAME` shows it; `node delete NAME` deletes it (a node named delete is still
  // shown by `node delete`).
  auto args = std::make_shared<std::vector<std::string>>();
  CLI::App* node = add_remote_command(
      app, env, "node",
      "Show one node with each GPU's health, telemetry and job; `node delete NAME` removes it",
      [args](const RemoteOptions& o) {
        if (args->size() == 2 && (*args)[0] == "delete") return delete_node(o, (*args)[1]);
        if (args->size() != 1) return usage_error("node", "expected NAME or delete NAME");
        return show_node(o, (*args)[0]);
      });
  node->add_option("name", *args, "node name, or delete NAME")->required()->expected(1, 2);

  for (const char* verb : {"cordon", "drain", "undrain"}) {
    auto target = std::make_shared<std::string>();
    auto reason = std::make_shared<std::string>();
    const std::string v = verb;
    CLI::App* cmd = add_remote_command(
        app, env, v,
        v == "cordon"  ? "Stop placing new work on a node (--reason required)"
        : v == "drain" ? "Stop new work on a node and move its work off (--reason required)"
                       : "Make a cordoned, draining or drained node schedulable again",
        [target, reason, v](const RemoteOptions& o) { return set_admin(o, v, *target, *reason); });
    cmd->add_option("node", *target, "node name")->required();
    CLI::Option* why = cmd->add_option("--reason", *reason, "why, shown in `corral nodes`");
    if (v != "undrain") why->required();
  }
}

}  // namespace corral::cli
