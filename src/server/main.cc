// corrald: the Corral control plane. Flags only; everything else is run_corrald().
//   corrald --data-dir DIR --listen 127.0.0.1:PORT [--store postgresql://...] [--config FILE]
#include <cstdio>
#include <exception>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <sys/stat.h>

#include "core/clock.h"
#include "server/base/model_json.h"
#include "server/server.h"

int main(int argc, char** argv) {
  try {
    CLI::App app("corrald: the Corral control plane (API, scheduler loop, durable store)");
    corral::server::ServerOptions options;
    app.add_option("--data-dir", options.data_dir,
                   "directory for the SQLite store, admin.token and corrald.addr")
        ->required();
    app.add_option("--listen", options.listen, "host:port to serve on (port 0: any free port)")
        ->capture_default_str();
    app.add_option("--store", options.store,
                   "postgresql://user@host:port/db (default: SQLite file in --data-dir)");
    app.add_option("--config", options.config_path, "YAML config: tenants, scheduler knobs");
    app.add_option("--replica", options.replica,
                   "this replica's name, unique among the corrald on one PostgreSQL")
        ->check([](const std::string& v) {
          return corral::server::valid_name(v) ? std::string() : "--replica: not a valid name";
        });
    app.add_option("--http-threads", options.http_threads,
                   "API worker threads kept ready (more start while all are busy)")
        ->check(CLI::Range(1, 100000))
        ->capture_default_str();
    app.add_option("--http-max-threads", options.http_max_threads,
                   "API worker threads at most: each agent holds up to 3 connections")
        ->check(CLI::Range(1, 100000))
        ->capture_default_str();
    app.add_option("--capture-every", options.capture_every,
                   "capture every Nth scheduling cycle to DATA_DIR/cycles for corral-sim "
                   "replay (0: only on request)")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    app.add_option("--capture-max-mb", options.capture_max_mb,
                   "keep DATA_DIR/cycles under this many MiB (oldest captures go first)")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    app.add_option("--key-file", options.key_file,
                   "the key file that wraps the database's secret keys; every replica of one "
                   "database needs the same one (default: the config's security.keyFile, else "
                   "DATA_DIR/corrald.key)");
    app.add_option("--log-format", options.log_format,
                   "the log's lines on stderr: text or json (default: the config's log.format, "
                   "else text)")
        ->check(CLI::IsMember({"text", "json"}));
    CLI11_PARSE(app, argc, argv);

    // Blocked before any thread starts, so only run_corrald's watcher receives them.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    ::signal(SIGPIPE, SIG_IGN);
    // Everything corrald creates (the SQLite file and its WAL, tokens, keys, the audit
    // anchor, cycle captures) is its own alone: files 0600, directories 0700.
    ::umask(077);

    const corral::core::SystemClock clock;
    const corral::core::Status s = corral::server::run_corrald(options, clock);
    if (!s.ok()) {
      std::fprintf(stderr, "corrald: %s\n", s.to_string().c_str());
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "corrald: %s\n", e.what());
    return 1;
  }
}
