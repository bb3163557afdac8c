// `corral nodes` lists nodes; `corral cordon|drain|undrain NODE` sets a node's admin
// state (admin only).
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/commands/remote.h"
#include "cli/commands/remote_commands.h"
#include "cli/commands/validate.h"

namespace corral::cli {

void add_nodes_commands(CLI::App& app, std::function<int()>& run) {
  add_remote_command(app, run, "nodes", "List nodes", [](const RemoteOptions& o) {
    const Answer a = call_list(o, "/v1/nodes", "nodes");
    if (a.status != 200) return report_failure("nodes", a, std::cerr);
    if (o.output == "json") {
      std::cout << a.body.dump(2) << "\n";
      return kExitOk;
    }
    std::vector<std::vector<std::string>> rows;
    for (const auto& n : a.body["nodes"]) {
      const auto& gpus = n["gpus"];
      const std::string type = gpus.empty() ? "" : text(gpus[0]["type"]);
      // Health: GPUs an agent reports unhealthy or hot; heartbeat: age of the agent's
      // last one ("-" for a node no agent ever joined, "lost" once it was fenced).
      int bad = 0;
      if (n.contains("observed") && n["observed"].contains("gpus")) {
        for (const auto& g : n["observed"]["gpus"]) bad += g.value("health", "ok") != "ok";
      }
      std::string heartbeat = "-";
      if (n.contains("agent") && n["agent"].is_object()) {
        heartbeat = n["agent"].value("lost", false)
                        ? "lost"
                        : std::to_string(n["agent"].value("heartbeatAgeMs", 0) / 1000) + "s";
      }
      std::string state = text(n["admin"]);
      if (!n.value("adminReason", "").empty() && n["admin"] != "active") {
        state += " (" + n.value("adminReason", "") + ")";
      }
      rows.push_back({text(n["id"]), state, type, std::to_string(gpus.size()),
                      std::to_string(n["allocated"].size()), text(n["labels"]["leaf"]),
                      bad == 0 ? "ok" : std::to_string(bad) + " bad", heartbeat});
    }
    print_table(std::cout,
                {"NODE", "STATE", "GPU", "GPUS", "ALLOCATED", "LEAF", "HEALTH", "HEARTBEAT"}, rows);
    return kExitOk;
  });
  for (const char* verb : {"cordon", "drain", "undrain"}) {
    auto node = std::make_shared<std::string>();
    const std::string v = verb;
    CLI::App* cmd = add_remote_command(
        app, run, v,
        v == "cordon"  ? "Stop placing new work on a node"
        : v == "drain" ? "Stop new work on a node and ask running work to leave"
                       : "Make a cordoned or draining node schedulable again",
        [node, v](const RemoteOptions& o) {
          const Answer a = call(o, "POST", "/v1/nodes/" + *node + "/" + v);
          if (a.status != 200) return report_failure(v, a, std::cerr);
          if (o.output == "json") {
            std::cout << a.body.dump(2) << "\n";
          } else {
            std::cout << "node " << text(a.body["id"]) << " " << text(a.body["admin"]) << "\n";
          }
          return kExitOk;
        });
    cmd->add_option("node", *node, "node name")->required();
  }
}

}  // namespace corral::cli
