// telemetry_load: the telemetry of a fleet of simulated nodes against a running corrald:
// NODES agents of GPUS_PER_NODE GPUs each post one batch (a sample per GPU) every
// INTERVAL seconds to POST /v1/agents/{node}/telemetry, spread evenly over the interval.
//
//   telemetry_load --server 127.0.0.1:8470 --join-token JT --admin-token AT --nodes 1250
//                  --interval 10 --seconds 20
//
// First each node joins (as corral-agent would, with the join token) and is cordoned
// (admin), so the fleet exists, holds agent tokens and takes no placements: a submit
// benchmark run beside it keeps its jobs pending, as without telemetry. `--setup-only`
// stops after that; `--tokens FILE` keeps the node tokens between runs.
// Prints one JSON line: {"nodes", "gpus", "seconds", "posted", "samples_per_second",
//                        "accepted", "dropped", "errors"}
// bench/run_telemetry_load.sh runs it beside bench/submit_load.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <httplib.h>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

namespace {

std::string node_name(int i) { return "tl" + std::to_string(i); }

// The token in a join answer's {"token": "..."}; empty when there is none.
std::string token_of(const std::string& answer) {
  const std::string key = "\"token\":\"";
  const auto at = answer.find(key);
  if (at == std::string::npos) return "";
  const auto end = answer.find('"', at + key.size());
  return answer.substr(at + key.size(), end - at - key.size());
}

long number_after(const std::string& body, const std::string& key) {
  const auto at = body.find("\"" + key + "\":");
  return at == std::string::npos ? 0 : std::atol(body.c_str() + at + key.size() + 3);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("telemetry_load: a fleet's GPU telemetry against corrald");
  std::string server = "127.0.0.1:8470", join_token, admin_token, tokens_file;
  int nodes = 1250, gpus_per_node = 8, clients = 8;
  double interval = 10, seconds = 20;
  bool setup_only = false;
  app.add_option("--server", server, "host:port of corrald");
  app.add_option("--join-token", join_token, "corrald's join token")->required();
  app.add_option("--admin-token", admin_token, "an admin token (to cordon the nodes)")->required();
  app.add_option("--nodes", nodes, "simulated nodes");
  app.add_option("--gpus-per-node", gpus_per_node, "GPUs per node");
  app.add_option("--interval", interval, "seconds between a node's batches");
  app.add_option("--seconds", seconds, "how long to send");
  app.add_option("--clients", clients, "concurrent connections");
  app.add_option("--tokens", tokens_file, "file keeping the nodes' agent tokens between runs");
  app.add_flag("--setup-only", setup_only, "join and cordon the nodes, then stop");
  CLI11_PARSE(app, argc, argv);

  // 1. The fleet: joined (or the tokens of an earlier run) and cordoned.
  std::vector<std::string> tokens;
  if (!tokens_file.empty()) {
    std::ifstream in(tokens_file);
    for (std::string t; std::getline(in, t);) tokens.push_back(t);
  }
  if (static_cast<int>(tokens.size()) != nodes) {
    tokens.assign(static_cast<std::size_t>(nodes), "");
    httplib::Client client("http://" + server);
    client.set_keep_alive(true);
    for (int n = 0; n < nodes; ++n) {
      std::string gpus;
      for (int g = 0; g < gpus_per_node; ++g) {
        gpus += (g ? "," : "") + std::string(R"({"index":)") + std::to_string(g) +
                R"(,"uuid":"GPU-)" + node_name(n) + "-" + std::to_string(g) +
                R"(","type":"H100","nvlinkDomain":0})";
      }
      const std::string body = R"({"agentUrl":"http://127.0.0.1:1","node":{"id":")" + node_name(n) +
                               R"(","labels":{"rack":"r)" + std::to_string(n / 16) +
                               R"(","leaf":"l)" + std::to_string(n / 32) +
                               R"(","spine":"s1"},"gpus":[)" + gpus +
                               R"(]},"inventory":{"source":"simulated:telemetry_load"}})";
      auto r = client.Post("/v1/agents/join", {{"Authorization", "Bearer " + join_token}}, body,
                           "application/json");
      if (!r || r->status != 200) {
        std::fprintf(stderr, "telemetry_load: join of %s failed: %s\n", node_name(n).c_str(),
                     r ? r->body.substr(0, 300).c_str() : httplib::to_string(r.error()).c_str());
        return 1;
      }
      tokens[static_cast<std::size_t>(n)] = token_of(r->body);
      auto c = client.Post("/v1/nodes/" + node_name(n) + "/cordon",
                           {{"Authorization", "Bearer " + admin_token}}, "{}", "application/json");
      if (!c || c->status != 200) {
        std::fprintf(stderr, "telemetry_load: cordon of %s failed\n", node_name(n).c_str());
        return 1;
      }
    }
    if (!tokens_file.empty()) {
      std::ofstream out(tokens_file);
      for (const auto& t : tokens) out << t << "\n";
    }
  }
  if (setup_only) return 0;

  // 2. Each client sends for its share of the nodes, every node once per interval, at
  //    evenly spaced moments.
  std::atomic<long> posted{0}, accepted{0}, dropped{0}, errors{0};
  const auto start = std::chrono::steady_clock::now();
  const auto end = start + std::chrono::duration<double>(seconds);
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      httplib::Client client("http://" + server);
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);
      std::vector<int> mine;
      for (int n = c; n < nodes; n += clients) mine.push_back(n);
      if (mine.empty()) return;
      const double step = interval / static_cast<double>(mine.size());
      for (long round = 0;; ++round) {
        for (std::size_t k = 0; k < mine.size(); ++k) {
          const auto at =
              start + std::chrono::duration<double>(interval * static_cast<double>(round) +
                                                    step * static_cast<double>(k) +
                                                    step * static_cast<double>(c) / clients);
          if (at >= end) return;
          std::this_thread::sleep_until(at);
          const long now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count();
          std::string samples;
          for (int g = 0; g < gpus_per_node; ++g) {
            samples += (g ? "," : "") + std::string(R"({"gpu":)") + std::to_string(g) +
                       R"(,"timeMs":)" + std::to_string(now_ms) +
                       R"(,"utilization":0.93,"memoryUsedMib":61000,"powerW":612.5,)"
                       R"("temperatureC":71})";
          }
          const int n = mine[k];
          auto r = client.Post("/v1/agents/" + node_name(n) + "/telemetry",
                               {{"Authorization", "Bearer " + tokens[static_cast<std::size_t>(n)]}},
                               R"({"samples":[)" + samples + "]}", "application/json");
          if (r && r->status == 202) {
            ++posted;
            accepted += number_after(r->body, "accepted");
            dropped += number_after(r->body, "dropped");
          } else if (++errors <= 5) {
            std::fprintf(stderr, "telemetry_load: %s\n",
                         r ? (std::to_string(r->status) + " " + r->body.substr(0, 300)).c_str()
                           : ("no answer: " + httplib::to_string(r.error())).c_str());
          }
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "{\"nodes\": %d, \"gpus\": %d, \"seconds\": %.1f, \"posted\": %ld, "
      "\"samples_per_second\": %.0f, \"accepted\": %ld, \"dropped\": %ld, \"errors\": %ld}\n",
      nodes, nodes * gpus_per_node, elapsed, posted.load(),
      static_cast<double>(accepted.load()) / elapsed, accepted.load(), dropped.load(),
      errors.load());
  return errors.load() == 0 ? 0 : 1;
}
