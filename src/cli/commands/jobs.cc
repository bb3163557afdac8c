// `corral jobs [--tenant T] [--phase P] [--gpu-type G]` lists jobs; `corral job ID`
// shows one job with its allocation, attempts and events.
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands/remote.h"
#include "cli/commands/remote_commands.h"
#include "cli/commands/validate.h"

namespace corral::cli {

namespace {

std::string query(const std::vector<std::pair<std::string, std::string>>& params) {
  std::string q;
  for (const auto& [k, v] : params) {
    if (v.empty()) continue;
    q += (q.empty() ? "?" : "&") + k + "=" + v;
  }
  return q;
}

// The GPUs a job asked for, and what it holds when that differs (an elastic job runs at
// any size of its range): "16", or "32 (asked 16)".
std::string gpus_text(const nlohmann::json& j) {
  const std::string asked = text(j["gpus"]);
  const std::int64_t held = j.value("heldGpus", std::int64_t{0});
  if (held <= 0 || std::to_string(held) == asked) return asked;
  return std::to_string(held) + " (asked " + asked + ")";
}

}  // namespace

void add_jobs_commands(CLI::App& app, std::function<int()>& run) {
  auto tenant = std::make_shared<std::string>();
  auto phase = std::make_shared<std::string>();
  auto gpu_type = std::make_shared<std::string>();
  CLI::App* jobs = add_remote_command(app, run, "jobs", "List jobs", [=](const RemoteOptions& o) {
    const Answer a = call_list(
        o, "/v1/jobs" + query({{"tenant", *tenant}, {"phase", *phase}, {"gpuType", *gpu_type}}),
        "jobs");
    if (a.status != 200) return report_failure("jobs", a, std::cerr);
    if (o.output == "json") {
      std::cout << a.body.dump(2) << "\n";
      return kExitOk;
    }
    std::vector<std::vector<std::string>> rows;
    for (const auto& j : a.body["jobs"]) {
      rows.push_back({text(j["id"]), text(j["name"]), text(j["tenant"]), gpus_text(j),
                      text(j["phase"]), text(j["reason"])});
    }
    print_table(std::cout, {"ID", "NAME", "TENANT", "GPUS", "PHASE", "REASON"}, rows);
    return kExitOk;
  });
  jobs->add_option("--tenant", *tenant, "only this tenant's jobs");
  jobs->add_option("--phase", *phase, "only jobs in this phase");
  jobs->add_option("--gpu-type", *gpu_type, "only jobs that accept this GPU type");

  auto id = std::make_shared<std::string>();
  CLI::App* job = add_remote_command(app, run, "job", "Show one job", [=](const RemoteOptions& o) {
    const Answer a = call(o, "GET", "/v1/jobs/" + *id);
    if (a.status != 200) return report_failure("job", a, std::cerr);
    const Answer e = call(o, "GET", "/v1/jobs/" + *id + "/events");
    if (o.output == "json") {
      nlohmann::json out = a.body;
      if (e.status == 200) out["events"] = e.body["events"];
      std::cout << out.dump(2) << "\n";
      return kExitOk;
    }
    const auto& j = a.body;
    std::cout << "job " << text(j["id"]) << " " << text(j["name"]) << " (tenant "
              << text(j["tenant"]) << ", " << text(j["priorityClass"]) << ")\n"
              << "phase:    " << text(j["phase"]) << "\n"
              << "reason:   " << text(j["reason"]) << "\n"
              << "gpus:     " << gpus_text(j) << "\n"
              << "attempt:  " << text(j["attempt"]) << "\n";
    if (j["allocation"].is_object()) {
      std::cout << "placed:   " << text(j["allocation"]["gpuType"]) << " on";
      for (const auto& g : j["allocation"]["gpus"]) {
        std::cout << " " << text(g["node"]) << "/" << text(g["index"]);
      }
      std::cout << " (epoch " << text(j["allocation"]["epoch"]) << ")\n";
    }
    if (j["lastCheckpoint"].is_object()) {
      std::cout << "checkpoint: step " << text(j["lastCheckpoint"]["step"]) << " at "
                << text(j["lastCheckpoint"]["uri"]) << "\n";
    }
    if (j["cost"].is_object()) {
      const auto& c = j["cost"];
      std::cout << "cost:     " << fmt::format("{:.2f}", c.value("gpuHours", 0.0)) << " GPU-hours, "
                << money_text(c.value("amountMicros", std::int64_t{0})) << " "
                << text(c["currency"]) << " so far\n";
    }
    if (e.status == 200) {
      std::cout << "events:\n";
      for (const auto& ev : e.body["events"]) {
        std::cout << "  " << date_text(ev["timeMs"]) << "  " << text(ev["kind"]) << "  "
                  << text(ev["message"]) << "\n";
      }
    }
    return kExitOk;
  });
  job->add_option("id", *id, "job id")->required();
}

}  // namespace corral::cli
