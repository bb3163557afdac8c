// corral-agent: the per-node agent (docs/agent.md). main parses flags, picks the
// inventory and runs the Agent until SIGTERM/SIGINT; `--supervise` is the per-worker
// supervisor the agent re-executes itself as (launcher.h).
#include <algorithm>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <signal.h>
#include <thread>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include "agent/agent.h"
#include "agent/client.h"
#include "agent/emulated/emulated_fleet.h"
#include "agent/inventory.h"
#include "agent/launcher.h"

namespace {

constexpr int kExitUsage = 2;

std::string self_exe(const char* argv0) {
  std::error_code ec;
  const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(argv0) : p.string();
}

// corral-supervise next to this binary when it is there (cheaper to start, see
// supervise_main.cc), else this binary itself with --supervise.
std::string supervisor_exe(const char* argv0) {
  const std::string self = self_exe(argv0);
  const auto sibling = std::filesystem::path(self).parent_path() / "corral-supervise";
  return access(sibling.c_str(), X_OK) == 0 ? sibling.string() : self;
}

int fail(const corral::core::Status& s, int code = 1) {
  std::cerr << "corral-agent: " << s.to_string() << "\n";
  return code;
}

// Blocks SIGTERM and SIGINT in every thread and hands them to one that calls `stop`.
// Every other thread (and, through posix_spawn's reset, no worker) sees them blocked.
template <typename Stop>
void stop_on_signals(Stop stop) {
  static sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);
  std::thread([stop] {
    int sig = 0;
    sigwait(&set, &sig);
    stop();
  }).detach();  // exits with the process; it may still be waiting when run() returns
}

// --emulate N: the nodes of the agent's options, N of them in this process, shaped by
// `preset` or by the fleet file `fleet`.
int run_emulator(const corral::agent::AgentOptions& agent, const std::string& preset,
                 const std::string& fleet_file, std::int32_t count, std::int32_t threads) {
  corral::core::SystemClock clock;
  corral::agent::EmulatedFleet fleet(
      corral::agent::EmulatorOptions{
          .server_url = agent.server_url,
          .join_token = agent.join_token,
          .prefix = agent.node,
          .count = count,
          .preset = preset,
          .fleet = fleet_file,
          .labels = {.region = agent.labels.region, .cluster = agent.labels.cluster},
          .state_dir = agent.state_dir,
          .heartbeat_ms = agent.heartbeat_ms,
          .telemetry = agent.telemetry,
          .threads = threads},
      clock);
  stop_on_signals([&fleet] { fleet.shutdown(); });
  const corral::core::Status s = fleet.run();
  return s.ok() ? 0
                : fail(s, s.code() == corral::core::StatusCode::kInvalidArgument ? kExitUsage : 1);
}

int run_main(int argc, char** argv) {
  CLI::App app("corral-agent: runs a node's workers for corrald and reports its GPUs' health");
  std::string server, token_file, node, simulate, inventory_file, labels, state_dir, faults;
  std::string listen = "127.0.0.1:0";
  std::int64_t heartbeat_ms = 2000;
  app.add_option("--server", server,
                 "corrald's URL, http://HOST:PORT; several replicas: comma-separated")
      ->required();
  app.add_option("--join-token-file", token_file, "file holding corrald's join token")->required();
  app.add_option("--node", node, "this node's name in the cluster")->required();
  auto* sim = app.add_option("--simulate", simulate,
                             "simulated inventory preset: dgx-h100, dgx-a100, pcie-8gpu, "
                             "gb200-nvl72-tray");
  auto* inv = app.add_option("--inventory", inventory_file, "YAML inventory file (docs/agent.md)");
  sim->excludes(inv);
  auto* labels_opt =
      app.add_option("--labels", labels,
                     "topology: rack=r1,leaf=l1,spine=s1,region=..,cluster=..,nvlinkRack=..,"
                     "rackPowerCapW=..");
  app.add_option("--state-dir", state_dir, "run records and logs (default /tmp/corral-agent-NODE)");
  app.add_option("--listen", listen, "local server address, HOST:PORT (port 0: any)")
      ->capture_default_str();
  app.add_option("--heartbeat-ms", heartbeat_ms, "heartbeat period")
      ->check(CLI::Range(50, 60000))
      ->capture_default_str();
  app.add_option("--faults", faults, "injected faults file (default STATE_DIR/faults.json)");
  std::string mps_pipe_dir;
  app.add_option("--mps-pipe-dir", mps_pipe_dir,
                 "the NVIDIA MPS control daemon's pipe directory, given to workers with a share "
                 "of a GPU as CUDA_MPS_PIPE_DIRECTORY (default: MPS's, /tmp/nvidia-mps)");
  std::int32_t emulate = 0, emulate_threads = 0;
  auto* emulate_opt =
      app.add_option("--emulate", emulate,
                     "emulate N nodes in this process (--node is the names' prefix: "
                     "NODE1..NODEN; needs --simulate or --fleet): workers are timers, the wire "
                     "contract is a real agent's")
          ->check(CLI::Range(0, 100000))
          ->excludes(inv);
  std::string fleet_file;
  app.add_option("--fleet", fleet_file,
                 "with --emulate: node i has the shape and topology of the i-th node (in id "
                 "order) of this simulator fleet file (examples/fleets/*.yaml); --emulate 0: "
                 "every node of it")
      ->needs(emulate_opt)
      ->excludes(sim)
      ->excludes(inv)
      ->excludes(labels_opt);
  app.add_option("--emulate-threads", emulate_threads,
                 "with --emulate: threads sending heartbeats (default: one per 16 nodes)")
      ->check(CLI::Range(1, 4096));
  double telemetry_interval_s = 5, telemetry_flush_s = 10;
  app.add_option("--telemetry-interval", telemetry_interval_s,
                 "seconds between GPU telemetry samples (0: no telemetry)")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  app.add_option("--telemetry-flush", telemetry_flush_s,
                 "seconds between telemetry batches sent to corrald")
      ->check(CLI::Range(0.01, 3600.0))
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kExitUsage;
  }

  corral::agent::AgentOptions options{
      .server_url = server,
      .node = node,
      .state_dir = state_dir.empty() ? "/tmp/corral-agent-" + node : state_dir,
      .heartbeat_ms = heartbeat_ms,
      .telemetry = {.interval_ms = static_cast<std::int64_t>(telemetry_interval_s * 1000),
                    .flush_ms = std::max<std::int64_t>(
                        10, static_cast<std::int64_t>(telemetry_flush_s * 1000))},
      .faults_path = faults,
      .supervisor_exe = supervisor_exe(argv[0]),
      .mps_pipe_dir = mps_pipe_dir};
  if (node.empty() || node.find('/') != std::string::npos) {
    return fail(corral::core::invalid_argument("--node", "must be a non-empty name without '/'"),
                kExitUsage);
  }
  // A relative directory would be read from each worker's own working directory.
  if (!mps_pipe_dir.empty() && mps_pipe_dir.front() != '/') {
    return fail(corral::core::invalid_argument("--mps-pipe-dir", "must be an absolute path"),
                kExitUsage);
  }
  if (auto s = corral::agent::parse_labels(labels, options.labels, options.rack_power_cap_w);
      !s.ok()) {
    return fail(s, kExitUsage);
  }
  auto listen_at = corral::agent::parse_host_port(listen, "--listen");
  if (!listen_at.ok()) return fail(listen_at.status(), kExitUsage);
  options.listen_host = listen_at->first;
  options.listen_port = listen_at->second;
  if (auto c = corral::agent::CorraldClient::connect(server); !c.ok()) {
    return fail(c.status(), kExitUsage);
  }
  {
    std::ifstream in(token_file);
    if (!in || !std::getline(in, options.join_token) || options.join_token.empty()) {
      return fail(corral::core::invalid_argument("--join-token-file",
                                                 "cannot read a token from '" + token_file + "'"),
                  kExitUsage);
    }
    while (!options.join_token.empty() &&
           std::isspace(static_cast<unsigned char>(options.join_token.back()))) {
      options.join_token.pop_back();
    }
  }

  if (app.count("--emulate") > 0) {
    if (simulate.empty() && fleet_file.empty()) {
      return fail(corral::core::invalid_argument("--emulate", "needs --simulate or --fleet"),
                  kExitUsage);
    }
    if (emulate == 0 && fleet_file.empty()) {
      return fail(corral::core::invalid_argument(
                      "--emulate", "must be at least 1 (0 only with --fleet: all its nodes)"),
                  kExitUsage);
    }
    return run_emulator(options, simulate, fleet_file, emulate, emulate_threads);
  }

  corral::core::Result<std::unique_ptr<corral::agent::Inventory>> inventory =
      corral::core::internal_error("no inventory");
  if (!simulate.empty()) {
    inventory = corral::agent::open_preset_inventory(simulate, node);
    if (!inventory.ok()) return fail(inventory.status(), kExitUsage);
  } else if (!inventory_file.empty()) {
    inventory = corral::agent::open_file_inventory(inventory_file, node);
    if (!inventory.ok()) return fail(inventory.status(), kExitUsage);
  } else {
    inventory = corral::agent::open_nvml_inventory();
    if (!inventory.ok()) {
      std::cerr << "corral-agent: NVML not available (" << inventory.status().message()
                << "): pass --simulate PRESET or --inventory FILE\n";
      return 2;
    }
  }

  corral::core::SystemClock clock;
  corral::agent::Agent agent(std::move(options), std::move(*inventory), clock);
  stop_on_signals([&agent] { agent.shutdown(); });
  const corral::core::Status s = agent.run();
  if (!s.ok()) return fail(s);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--supervise") == 0) {
    return corral::agent::supervise_main(argc - 1, argv + 1);
  }
  try {
    return run_main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "corral-agent: " << e.what() << "\n";
    return 1;
  }
}
