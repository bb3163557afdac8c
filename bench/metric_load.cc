// metric_load: training runs' metric reports against a running corrald (docs/runs.md):
// WORKERS running 1-GPU jobs, each reporting a batch of POINTS metric points every
// INTERVAL seconds to POST /v1/agents/{node}/runs, spread evenly over the interval, as
// their agents forward them.
//
//   metric_load --server 127.0.0.1:8470 --join-token JT --admin-token AT --workers 1000
//               --interval 10 --points 10 --seconds 20
//
// First WORKERS/8 simulated nodes of 8 GPUs join (as corral-agent would), WORKERS 1-GPU
// jobs are submitted and placed on them, and the nodes are cordoned: the fleet is full
// and takes no more placements, so a submit benchmark run beside it keeps its jobs
// pending, as without metrics. `--setup-only` stops after that; `--state FILE` keeps
// what the reports need (node, token, epoch, job, attempt) between runs.
// Prints one JSON line: {"workers", "seconds", "posted", "points_per_second", "errors",
//                        "p50_ms", "p99_ms"}
// bench/run_metric_load.sh runs it beside bench/submit_load.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <httplib.h>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace {

using nlohmann::json;

struct Worker {
  std::string node, token;
  long epoch = 0, job = 0, attempt = 0;
};

std::string node_name(int i) { return "ml" + std::to_string(i); }

json post(httplib::Client& c, const std::string& path, const std::string& token,
          const std::string& body, int want) {
  auto r = c.Post(path, {{"Authorization", "Bearer " + token}}, body, "application/json");
  if (!r || r->status != want) {
    std::fprintf(stderr, "metric_load: POST %s: %s\n", path.c_str(),
                 r ? (std::to_string(r->status) + " " + r->body.substr(0, 300)).c_str()
                   : httplib::to_string(r.error()).c_str());
    return nullptr;
  }
  return json::parse(r->body, nullptr, false);
}

// Joins the nodes, submits and places one 1-GPU job per worker, cordons the nodes.
bool set_up(const std::string& server, const std::string& join_token,
            const std::string& admin_token, int workers, std::vector<Worker>& out) {
  httplib::Client client("http://" + server);
  client.set_keep_alive(true);
  const int nodes = (workers + 7) / 8;
  std::vector<Worker> node_info(static_cast<std::size_t>(nodes));
  for (int n = 0; n < nodes; ++n) {
    json gpus = json::array();
    for (int g = 0; g < 8; ++g) {
      gpus.push_back({{"index", g},
                      {"uuid", "GPU-" + node_name(n) + "-" + std::to_string(g)},
                      {"type", "H100"},
                      {"nvlinkDomain", 0}});
    }
    const json body = {{"agentUrl", "http://127.0.0.1:1"},
                       {"node",
                        {{"id", node_name(n)},
                         {"labels",
                          {{"rack", "r" + std::to_string(n / 16)},
                           {"leaf", "l" + std::to_string(n / 32)},
                           {"spine", "s1"}}},
                         {"gpus", gpus}}},
                       {"inventory", {{"source", "simulated:metric_load"}}}};
    const json a = post(client, "/v1/agents/join", join_token, body.dump(), 200);
    if (!a.is_object()) return false;
    node_info[static_cast<std::size_t>(n)] = {
        .node = node_name(n), .token = a.value("token", ""), .epoch = a.value("epoch", 0L)};
  }
  for (int w = 0; w < workers; ++w) {
    const json spec = {{"name", "metrics-" + std::to_string(w)},
                       {"resources", {{"gpus", 1}, {"gpuTypes", {"H100"}}}},
                       {"command", {"/bin/true"}}};
    if (!post(client, "/v1/jobs", admin_token, spec.dump(), 201).is_object()) return false;
  }
  // Placed: every worker's job holds its GPU.
  json allocations;
  for (int tries = 0; tries < 600; ++tries) {
    auto r =
        client.Get("/v1/allocations?limit=10000", {{"Authorization", "Bearer " + admin_token}});
    allocations = r ? json::parse(r->body, nullptr, false) : json();
    if (allocations.is_object() &&
        allocations["allocations"].size() >= static_cast<std::size_t>(workers))
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!allocations.is_object() ||
      allocations["allocations"].size() < static_cast<std::size_t>(workers)) {
    std::fprintf(stderr, "metric_load: the jobs were not all placed\n");
    return false;
  }
  for (const json& a : allocations["allocations"]) {
    const std::string node = a["gpus"][0]["node"];
    const int n = std::stoi(node.substr(2));
    Worker w = node_info[static_cast<std::size_t>(n)];
    w.job = a["job"];
    w.attempt = a["attempt"];
    out.push_back(w);
  }
  for (int n = 0; n < nodes; ++n) {
    if (!post(client, "/v1/nodes/" + node_name(n) + "/cordon", admin_token, "{}", 200)
             .is_object()) {
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("metric_load: training runs' metric reports against corrald");
  std::string server = "127.0.0.1:8470", join_token, admin_token, state_file;
  int workers = 1000, clients = 8, points = 10;
  double interval = 10, seconds = 20;
  bool setup_only = false;
  app.add_option("--server", server, "host:port of corrald");
  app.add_option("--join-token", join_token, "corrald's join token")->required();
  app.add_option("--admin-token", admin_token, "an admin token")->required();
  app.add_option("--workers", workers, "reporting workers (one 1-GPU job each)");
  app.add_option("--points", points, "metric points a report");
  app.add_option("--interval", interval, "seconds between a worker's reports");
  app.add_option("--seconds", seconds, "how long to send");
  app.add_option("--clients", clients, "concurrent connections");
  app.add_option("--state", state_file, "file keeping the workers between runs");
  app.add_flag("--setup-only", setup_only, "set the workers up, then stop");
  CLI11_PARSE(app, argc, argv);

  std::vector<Worker> fleet;
  if (std::ifstream in(state_file); !state_file.empty() && in) {
    for (Worker w; in >> w.node >> w.token >> w.epoch >> w.job >> w.attempt;) fleet.push_back(w);
  }
  if (static_cast<int>(fleet.size()) != workers) {
    fleet.clear();
    if (!set_up(server, join_token, admin_token, workers, fleet)) return 1;
    if (!state_file.empty()) {
      std::ofstream out(state_file);
      for (const Worker& w : fleet) {
        out << w.node << " " << w.token << " " << w.epoch << " " << w.job << " " << w.attempt
            << "\n";
      }
    }
  }
  if (setup_only) return 0;

  std::atomic<long> posted{0}, errors{0};
  std::mutex mu;
  std::vector<double> latencies_ms;
  const auto start = std::chrono::steady_clock::now();
  const auto end = start + std::chrono::duration<double>(seconds);
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      httplib::Client client("http://" + server);
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);
      std::vector<std::size_t> mine;
      for (std::size_t w = static_cast<std::size_t>(c); w < fleet.size();
           w += static_cast<std::size_t>(clients)) {
        mine.push_back(w);
      }
      if (mine.empty()) return;
      const double gap = interval / static_cast<double>(mine.size());
      std::vector<double> mine_ms;
      for (long round = 0;; ++round) {
        for (std::size_t k = 0; k < mine.size(); ++k) {
          const auto at =
              start + std::chrono::duration<double>(interval * static_cast<double>(round) +
                                                    gap * static_cast<double>(k) +
                                                    gap * static_cast<double>(c) / clients);
          if (at >= end) {
            std::lock_guard lock(mu);
            latencies_ms.insert(latencies_ms.end(), mine_ms.begin(), mine_ms.end());
            return;
          }
          std::this_thread::sleep_until(at);
          const Worker& w = fleet[mine[k]];
          std::ostringstream body;
          body << R"({"epoch":)" << w.epoch << R"(,"job":)" << w.job << R"(,"attempt":)"
               << w.attempt << R"(,"rank":0,"metrics":[)";
          for (int p = 0; p < points; ++p) {
            body << (p ? "," : "") << R"({"name":"loss","step":)" << round * points + p
                 << R"(,"value":)" << 2.5 / (1.0 + static_cast<double>(round * points + p)) << "}";
          }
          body << "]}";
          const auto sent = std::chrono::steady_clock::now();
          auto r =
              client.Post("/v1/agents/" + w.node + "/runs",
                          {{"Authorization", "Bearer " + w.token}}, body.str(), "application/json");
          mine_ms.push_back(
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - sent)
                  .count());
          if (r && r->status == 200) {
            ++posted;
          } else if (++errors <= 5) {
            std::fprintf(stderr, "metric_load: %s\n",
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
  std::sort(latencies_ms.begin(), latencies_ms.end());
  const auto quantile = [&](double q) {
    return latencies_ms.empty() ? 0.0
                                : latencies_ms[static_cast<std::size_t>(
                                      q * static_cast<double>(latencies_ms.size() - 1))];
  };
  std::printf(
      "{\"workers\": %d, \"seconds\": %.1f, \"posted\": %ld, \"points_per_second\": %.0f, "
      "\"errors\": %ld, \"p50_ms\": %.1f, \"p99_ms\": %.1f}\n",
      workers, elapsed, posted.load(), static_cast<double>(posted.load() * points) / elapsed,
      errors.load(), quantile(0.5), quantile(0.99));
  return errors.load() == 0 ? 0 : 1;
}
