// corrald as a library: opens the store, bootstraps a fresh data directory (the
// `default` tenant, config tenants, the first admin and join tokens), starts the
// scheduler loop and the health controller, and serves the API. run_corrald() is the
// binary's whole life; Corrald lets a test run one in its own process, on its own clock
// (a core::ManualClock it advances instead of sleeping).
//
// Thread safety: serve() on one thread; stop() from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/result.h"
#include "core/status.h"

namespace corral::server {

struct ServerOptions {
  std::string data_dir;
  std::string listen = "127.0.0.1:8470";  // host:port; port 0 picks a free one
  std::string store;                      // postgresql://... ; empty: DATA_DIR/corral.db
  std::string config_path;                // empty: defaults
  // cpp-httplib serves each connection on one pool thread for as long as the client keeps
  // it open, and every agent keeps up to three open (its long poll, its heartbeats, its
  // checkpoint reports). The pool (http/elastic_pool.h) keeps http_threads and grows to
  // http_max_threads while every thread is busy: about 3 x nodes + 32 are needed.
  int http_threads = 128;
  int http_max_threads = 10000;
  // Scheduling cycles captured to DATA_DIR/cycles for `corral-sim replay`: every Nth
  // (0: only when an admin asks, POST /v1/scheduler/captures), the directory kept under
  // capture_max_mb.
  std::int64_t capture_every = 0;
  std::int64_t capture_max_mb = 256;
  // This replica's name among several on one PostgreSQL (docs/scale-out.md); empty: the
  // config's replica.name, else "corrald".
  std::string replica;
  // The log's format, "text" or "json" (server/base/log.h); empty: the config's log.format.
  std::string log_format;
  // The key file (server/base/key_ring.h); empty: the config's security.keyFile, else
  // DATA_DIR/corrald.key. Every replica of one database is given the same file.
  std::string key_file;
};

class Corrald {
 public:
  // Everything up to a bound listening socket (DATA_DIR/corrald.addr is written); no
  // request is served before serve().
  static core::Result<std::unique_ptr<Corrald>> start(const ServerOptions& options,
                                                      const core::Clock& clock);
  ~Corrald();
  Corrald(const Corrald&) = delete;
  Corrald& operator=(const Corrald&) = delete;

  // "host:port" it listens on.
  const std::string& address() const { return address_; }
  // Every route it serves, as (method, httplib pattern), in registration order.
  const std::vector<std::pair<std::string, std::string>>& routes() const;
  // Serves requests on httplib's pool until stop(); blocks the calling thread.
  void serve();
  // Answers parked long polls, stops serving and stops the loops. Idempotent.
  void stop();

 private:
  struct Parts;
  Corrald(std::unique_ptr<Parts> parts, std::string address);
  std::unique_ptr<Parts> parts_;
  std::string address_;
  std::atomic<bool> stopped_{false};
};

// Serves until SIGINT or SIGTERM. Writes DATA_DIR/corrald.addr ("host:port") once
// listening, so a caller that asked for port 0 can find it.
core::Status run_corrald(const ServerOptions& options, const core::Clock& clock);

}  // namespace corral::server
