// corrald as a library call: opens the store, bootstraps a fresh data directory (the
// `default` tenant, config tenants, the first admin token), starts the scheduler loop
// and serves the API until stop() or SIGINT/SIGTERM.
//
// Thread safety: run() on one thread; request_stop() from any thread or a signal
// watcher.
#pragma once

#include <string>

#include "core/clock.h"
#include "core/status.h"

namespace corral::server {

struct ServerOptions {
  std::string data_dir;
  std::string listen = "127.0.0.1:8470";  // host:port; port 0 picks a free one
  std::string store;                      // postgresql://... ; empty: DATA_DIR/corral.db
  std::string config_path;                // empty: defaults
  // cpp-httplib serves each connection on one pool thread for as long as the client keeps
  // it open, and every agent keeps up to three open (its long poll, its heartbeats, its
  // checkpoint reports). A pool smaller than that starves other callers for the
  // keep-alive timeout (seconds). Size it at 3 x nodes + 32; idle threads cost no CPU.
  int http_threads = 128;
  // Scheduling cycles captured to DATA_DIR/cycles for `corral-sim replay`: every Nth
  // (0: only when an admin asks, POST /v1/scheduler/captures), the directory kept under
  // capture_max_mb.
  std::int64_t capture_every = 0;
  std::int64_t capture_max_mb = 256;
};

// Serves until SIGINT or SIGTERM. Writes DATA_DIR/corrald.addr ("host:port") once
// listening, so a caller that asked for port 0 can find it.
core::Status run_corrald(const ServerOptions& options, const core::Clock& clock);

}  // namespace corral::server
