// submit_load: acknowledged, durable job submissions per second against a running
// corrald, with N concurrent clients, and the latency of each acknowledgement.
//
//   submit_load --server 127.0.0.1:8470 --token TOKEN --clients 8 --seconds 10
//
// Every request carries an Idempotency-Key; a 201 means the job is committed (corrald
// answers only after its transaction commits). A 429 (the tenant is over its admission
// limit) is counted apart from errors and, like an error, not as acknowledged.
// Prints one JSON line:
//   {"clients", "seconds", "acknowledged", "per_second", "p50_ms", "p99_ms", "max_ms", "rejected",
//    "errors"}
// bench/run_submit_load.sh starts corrald on SQLite and on PostgreSQL and runs this;
// bench/compare_submit.sh and bench/run_tenant_flood.sh run it too.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <httplib.h>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

int main(int argc, char** argv) {
  CLI::App app("submit_load: durable submissions per second against corrald");
  std::string server = "127.0.0.1:8470";
  std::string token;
  int clients = 8;
  double seconds = 10;
  int gpus = 1;
  std::string tenant;
  std::string key_prefix = "load";
  app.add_option("--server", server, "host:port of corrald");
  app.add_option("--token", token, "bearer token")->required();
  app.add_option("--clients", clients, "concurrent clients (one connection each)");
  app.add_option("--seconds", seconds, "how long to submit");
  app.add_option("--gpus", gpus, "GPUs each job asks for");
  app.add_option("--tenant", tenant, "tenant of every job (default: the server's default)");
  app.add_option("--key-prefix", key_prefix, "Idempotency-Key prefix (distinct per process)");
  CLI11_PARSE(app, argc, argv);

  const std::string body =
      R"({"name":"load",)" + (tenant.empty() ? std::string() : R"("tenant":")" + tenant + R"(",)") +
      R"("resources":{"gpus":)" + std::to_string(gpus) + R"(},"command":["python","train.py"]})";
  std::atomic<bool> stop{false};
  std::atomic<long> errors{0};
  std::atomic<long> rejected{0};
  std::vector<std::vector<double>> latencies(static_cast<std::size_t>(clients));
  std::vector<std::thread> threads;
  const auto start = std::chrono::steady_clock::now();
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      httplib::Client client("http://" + server);
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);
      httplib::Headers headers{{"Authorization", "Bearer " + token}};
      auto& mine = latencies[static_cast<std::size_t>(c)];
      for (long i = 0; !stop; ++i) {
        headers.erase("Idempotency-Key");
        headers.emplace("Idempotency-Key",
                        key_prefix + "-" + std::to_string(c) + "-" + std::to_string(i));
        const auto t0 = std::chrono::steady_clock::now();
        auto r = client.Post("/v1/jobs", headers, body, "application/json");
        const auto t1 = std::chrono::steady_clock::now();
        if (r && r->status == 201) {
          mine.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        } else if (r && r->status == 429) {
          ++rejected;
        } else {
          // The first few are shown: an answer that is neither an acknowledgement nor a
          // refusal is a finding, not noise.
          // How long it took tells a read timeout (the client's 5 s) from a closed connection.
          if (++errors <= 5) {
            const double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
            std::fprintf(stderr, "submit_load: %s after %.1f ms\n",
                         r ? (std::to_string(r->status) + " " + r->body.substr(0, 300)).c_str()
                           : ("no answer: " + httplib::to_string(r.error())).c_str(),
                         ms);
          }
        }
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& t : threads) t.join();
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<double> all;
  for (const auto& v : latencies) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end());
  auto pct = [&](double p) {
    return all.empty()
               ? 0.0
               : all[std::min(all.size() - 1,
                              static_cast<std::size_t>(p * static_cast<double>(all.size())))];
  };
  std::printf(
      "{\"clients\": %d, \"seconds\": %.1f, \"acknowledged\": %zu, \"per_second\": %.0f, "
      "\"p50_ms\": %.2f, \"p99_ms\": %.2f, \"max_ms\": %.2f, \"rejected\": %ld, "
      "\"errors\": %ld}\n",
      clients, elapsed, all.size(), static_cast<double>(all.size()) / elapsed, pct(0.50), pct(0.99),
      all.empty() ? 0.0 : all.back(), rejected.load(), errors.load());
  return 0;
}
