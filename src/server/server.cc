#include "server/server.h"

#include <atomic>
#include <cstdio>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <httplib.h>
#include <memory>
#include <signal.h>
#include <thread>
#include <unistd.h>

#include <sys/socket.h>
#include <sys/stat.h>

#include "server/agent_api/agent_api.h"
#include "server/api/api.h"
#include "server/base/crypto.h"
#include "server/base/key_material.h"
#include "server/base/key_ring.h"
#include "server/base/log.h"
#include "server/base/metrics.h"
#include "server/base/model_json.h"
#include "server/billing/accrual_controller.h"
#include "server/config.h"
#include "server/controllers/audit.h"
#include "server/controllers/audit_anchor.h"
#include "server/controllers/idle_sessions.h"
#include "server/controllers/job_secrets.h"
#include "server/controllers/metrics_refresher.h"
#include "server/controllers/node_health.h"
#include "server/controllers/telemetry_sink.h"
#include "server/cycle/scheduler.h"
#include "server/http/elastic_pool.h"
#include "server/http/request_pipeline.h"
#include "server/reports/usage_history.h"
#include "store/store.h"

namespace corral::server {
namespace {

using core::Result;
using core::Status;

// Writes `text` to `path` with mode 0600, atomically (temp file, fsync, rename).
Status write_private_file(const std::filesystem::path& path, const std::string& text) {
  const std::string tmp = path.string() + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Status(core::StatusCode::kUnavailable, "cannot write " + tmp);
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
                  ::fsync(fd) == 0;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    return Status(core::StatusCode::kUnavailable, "cannot write " + path.string());
  }
  return Status();
}

// A fresh store gets the configured tenants that are missing and, when there is no
// token at all, an admin token written to DATA_DIR/admin.token and a join token (role
// `join`: it may only call POST /v1/agents/join) written to DATA_DIR/join.token.
Status bootstrap(store::Store& store, const ServerConfig& config,
                 const std::filesystem::path& data_dir, const core::Clock& clock) {
  std::string token;
  const Status transacted = store.transact([&](store::Tx& tx) {
    // The config's rack caps replace the last start's (a rack dropped from it is uncapped
    // by the config again, and its agents' caps stand).
    CORRAL_RETURN_IF_ERROR(tx.rack_caps().delete_rack_caps("config"));
    for (const auto& r : config.racks) {
      CORRAL_RETURN_IF_ERROR(tx.rack_caps().put_rack_cap({.rack = r.name,
                                                          .declared_by = "config",
                                                          .power_cap_watts = r.power_cap_watts,
                                                          .updated_at = clock.now()}));
    }
    for (const auto& t : config.tenants) {
      CORRAL_ASSIGN_OR_RETURN(auto existing, tx.tenants().get_tenant(t.tenant.id));
      if (existing) continue;
      CORRAL_RETURN_IF_ERROR(tx.tenants().put_tenant(
          {.id = t.tenant.id, .config_json = tenant_config_to_json(t), .updated_at = clock.now()}));
      CORRAL_RETURN_IF_ERROR(append_audit(tx.audit(), {.actor = "corrald",
                                                       .action = "tenant.bootstrap",
                                                       .target = "tenant/" + t.tenant.id.value,
                                                       .after = tenant_config_to_json(t),
                                                       .time = clock.now()}));
    }
    CORRAL_ASSIGN_OR_RETURN(const std::int64_t tokens, tx.security().count_tokens());
    if (tokens > 0) return Status();
    // The file is written before the commit: if the commit fails, the next start
    // finds no token and writes a new file.
    token = new_token();
    CORRAL_RETURN_IF_ERROR(write_private_file(data_dir / "admin.token", token + "\n"));
    CORRAL_RETURN_IF_ERROR(tx.security().insert_token({.hash = sha256_hex(token),
                                                       .role = "admin",
                                                       .created_at = clock.now(),
                                                       .name = "bootstrap-admin",
                                                       .owner = "corrald"}));
    CORRAL_RETURN_IF_ERROR(append_audit(tx.audit(), {.actor = "corrald",
                                                     .action = "token.bootstrap",
                                                     .target = "token:bootstrap-admin",
                                                     .after = "role=admin",
                                                     .time = clock.now()}));
    const std::string join = new_token();
    CORRAL_RETURN_IF_ERROR(write_private_file(data_dir / "join.token", join + "\n"));
    CORRAL_RETURN_IF_ERROR(tx.security().insert_token({.hash = sha256_hex(join),
                                                       .role = "join",
                                                       .created_at = clock.now(),
                                                       .name = "bootstrap-join",
                                                       .owner = "corrald"}));
    return append_audit(tx.audit(), {.actor = "corrald",
                                     .action = "token.bootstrap",
                                     .target = "token:bootstrap-join",
                                     .after = "role=join",
                                     .time = clock.now()});
  });
  if (!transacted.ok()) return transacted;
  if (!token.empty()) {
    std::printf("corrald: admin token written to %s (mode 0600)\n",
                (data_dir / "admin.token").c_str());
    std::printf("corrald: agent join token written to %s (mode 0600)\n",
                (data_dir / "join.token").c_str());
  }
  return Status();
}

}  // namespace

// Everything corrald runs, in the order it is built (and the reverse it is torn down).
struct Corrald::Parts {
  Parts(std::unique_ptr<store::Store> s, const ServerConfig& config, const core::Clock& clock,
        KeyRing key_ring, const std::string& anchor_file)
      : store(std::move(s)),
        keys(std::move(key_ring)),
        anchor(*store, clock, keys, anchor_file, config.security.anchor_syslog),
        // Assignment versions start from the clock so they keep growing across restarts.
        board(core::to_ms(clock.now()) * 1000),
        specs(SpecCache::kDefaultCapacity, &metrics.job_spec_decodes),
        loop(*store, clock, metrics, config.sched, config.shards, config.replica, &board, &specs),
        health(*store, clock, board, specs, loop, config.agents, &metrics),
        sessions(*store, clock, board, specs, loop, config.agents, config.sessions),
        accrual(*store, clock, specs, config.billing, &metrics.ledger),
        telemetry(*store, clock, config.telemetry),
        refresher(*store, clock, metrics, config.metrics, &telemetry),
        auth(*store, clock),
        pipeline(*store, clock, metrics, auth, board, loop, keys),
        agent_api(pipeline, board, specs, config.agents, &telemetry),
        history(*store, clock, metrics, loop, config.dashboard),
        api(pipeline, loop, metrics, board, specs, config.agents, config.billing,
            config.dashboard) {}

  std::unique_ptr<store::Store> store;
  const KeyRing keys;
  AuditAnchor anchor;
  Metrics metrics;
  AssignmentBoard board;
  SpecCache specs;
  Scheduler loop;  // this replica's shards of the scheduling
  NodeHealth health;
  IdleSessions sessions;  // interactive sessions warned, then reclaimed, when idle
  AccrualController accrual;
  TelemetrySink telemetry;
  MetricsRefresher refresher;  // reads telemetry's counters
  TokenAuth auth;
  RequestPipeline pipeline;
  AgentApi agent_api;
  UsageHistory history;
  Api api;
  httplib::Server http;
};

Corrald::Corrald(std::unique_ptr<Parts> parts, std::string address)
    : parts_(std::move(parts)), address_(std::move(address)) {}

Corrald::~Corrald() { stop(); }

Result<std::unique_ptr<Corrald>> Corrald::start(const ServerOptions& options,
                                                const core::Clock& clock) {
  namespace fs = std::filesystem;
  if (options.data_dir.empty()) return core::invalid_argument("--data-dir", "is required");
  std::error_code ec;
  fs::create_directories(options.data_dir, ec);
  if (ec) return core::invalid_argument("--data-dir", "cannot create: " + ec.message());
  ::chmod(options.data_dir.c_str(), 0700);

  const auto colon = options.listen.rfind(':');
  if (colon == std::string::npos) return core::invalid_argument("--listen", "must be host:port");
  const std::string host = options.listen.substr(0, colon);
  const auto parsed_port = parse_decimal(options.listen.substr(colon + 1));
  if (!parsed_port || *parsed_port > 65535) {
    return core::invalid_argument("--listen", "bad port");
  }
  int port = static_cast<int>(*parsed_port);

  ServerConfig config = default_server_config();
  if (!options.config_path.empty()) {
    CORRAL_ASSIGN_OR_RETURN(config, load_server_config(options.config_path));
  }
  if (!options.log_format.empty()) {
    CORRAL_ASSIGN_OR_RETURN(config.log.format,
                            parse_log_format(options.log_format, "--log-format"));
  }
  process_log().set_format(config.log.format);
  config.sched.capture = {.dir = (fs::path(options.data_dir) / "cycles").string(),
                          .every = options.capture_every,
                          .max_bytes = options.capture_max_mb * 1024 * 1024};
  const std::string store_url =
      options.store.empty() ? (fs::path(options.data_dir) / "corral.db").string() : options.store;
  CORRAL_ASSIGN_OR_RETURN(std::unique_ptr<store::Store> store, store::open_store(store_url));
  CORRAL_RETURN_IF_ERROR(bootstrap(*store, config, options.data_dir, clock));
  // Made with the store on its first start (agents scope their run records by it).
  std::string cluster_id;
  CORRAL_RETURN_IF_ERROR(store->transact([&](store::Tx& tx) {
    CORRAL_ASSIGN_OR_RETURN(cluster_id, tx.agents().cluster_id());
    return Status();
  }));

  if (!options.replica.empty()) config.replica.name = options.replica;
  const fs::path data_dir(options.data_dir);
  const std::string key_file = !options.key_file.empty() ? options.key_file
                               : !config.security.key_file.empty()
                                   ? config.security.key_file
                                   : (data_dir / "corrald.key").string();
  CORRAL_ASSIGN_OR_RETURN(KeyRing keys, load_key_ring(*store, key_file, clock));
  CORRAL_ASSIGN_OR_RETURN(const ResealOutcome resealed, reseal_job_secrets(*store, keys));
  if (resealed.resealed > 0) {
    std::printf("corrald: sealed the secrets of %lld jobs under data key %s\n",
                static_cast<long long>(resealed.resealed), keys.current_id().c_str());
  }
  if (resealed.unopened > 0) {
    // Sealed by a replica that made its own key (before data keys were shared): those
    // jobs wait; every other job runs.
    std::printf(
        "corrald: warning: the secrets of %lld jobs cannot be opened with %s or the database's "
        "data keys (%s); those jobs are not assigned until that key's line is added to the key "
        "file of every replica and they restart\n",
        static_cast<long long>(resealed.unopened), key_file.c_str(),
        resealed.first_unopened.c_str());
  }
  auto parts = std::make_unique<Parts>(std::move(store), config, clock, std::move(keys),
                                       config.security.anchor_file.empty()
                                           ? (data_dir / "audit.anchor").string()
                                           : config.security.anchor_file);
  parts->pipeline.set_audit_anchor(&parts->anchor);
  parts->anchor.start();
  // The cluster-wide controllers run on the replica that holds their lease.
  Parts* p = parts.get();
  parts->loop.on_controllers([p](bool run) {
    if (run) {
      p->health.start();
      p->sessions.start();
      p->accrual.start();
      p->history.start();
    } else {
      p->history.stop();
      p->accrual.stop();
      p->sessions.stop();
      p->health.stop();
    }
  });
  parts->refresher.start();
  parts->telemetry.start();
  httplib::Server& http = parts->http;
  const auto warm = static_cast<std::size_t>(options.http_threads);
  const auto max = static_cast<std::size_t>(options.http_max_threads);
  http.new_task_queue = [warm, max] { return new ElasticPool(warm, max); };
  // Agent routes first: /v1/jobs/{id}/logs must not be taken by a broader pattern.
  parts->agent_api.install(http);
  parts->api.install(http);
  // Small JSON answers: without TCP_NODELAY, Nagle and delayed ACKs add ~40 ms a call.
  http.set_tcp_nodelay(true);

  // cpp-httplib 0.11 listens with a backlog of 5: 1,250 agents opening a heartbeat
  // connection each 2 s overflowed it, and each dropped SYN cost its agent a 1 s
  // retransmit. Listening again on the bound socket raises the backlog (Linux).
  int listen_fd = -1;
  http.set_socket_options([&listen_fd](socket_t sock) {
    httplib::default_socket_options(sock);
    listen_fd = sock;
  });
  if (port == 0) {
    port = http.bind_to_any_port(host);
  } else if (!http.bind_to_port(host, port)) {
    port = -1;
  }
  if (port > 0 && listen_fd >= 0) ::listen(listen_fd, SOMAXCONN);
  http.set_socket_options(httplib::default_socket_options);  // drops the capture
  if (port <= 0) {
    parts->anchor.stop();
    parts->refresher.stop();
    parts->telemetry.stop();
    return Status(core::StatusCode::kUnavailable, "cannot listen on " + options.listen);
  }
  const std::string addr = host + ":" + std::to_string(port);
  // Scheduling starts once the address is known (the replica's row names it).
  CORRAL_RETURN_IF_ERROR(parts->loop.start(store_url, addr));
  CORRAL_RETURN_IF_ERROR(
      write_private_file(fs::path(options.data_dir) / "corrald.addr", addr + "\n"));
  std::printf(
      "corrald: %s store (schema v%lld), cluster %s, replica %s, scheduler epoch %lld, "
      "listening on http://%s\n",
      std::string(parts->store->kind()).c_str(),
      static_cast<long long>(parts->store->schema_version()), cluster_id.c_str(),
      config.replica.name.c_str(), static_cast<long long>(parts->loop.epoch()), addr.c_str());
  std::fflush(stdout);
  return std::unique_ptr<Corrald>(new Corrald(std::move(parts), addr));
}

const std::vector<std::pair<std::string, std::string>>& Corrald::routes() const {
  return parts_->pipeline.installed();
}

void Corrald::serve() { parts_->http.listen_after_bind(); }

void Corrald::stop() {
  if (stopped_.exchange(true)) return;
  parts_->board.shutdown();  // long polls answer now instead of holding workers 30 s
  parts_->http.stop();
  parts_->loop.stop();  // and with its controllers lease: history, accrual, node health
  parts_->refresher.stop();
  parts_->telemetry.stop();
  parts_->anchor.stop();  // after the last write
}

Status run_corrald(const ServerOptions& options, const core::Clock& clock) {
  CORRAL_ASSIGN_OR_RETURN(auto corrald, Corrald::start(options, clock));
  // SIGINT/SIGTERM stop the server: blocked here (threads inherit the mask) and taken
  // by a watcher thread with sigwait.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  std::atomic<bool> serving_done{false};
  std::thread watcher([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    if (!serving_done) corrald->stop();
  });
  corrald->serve();
  // serve returned: either a signal stopped it (watcher done) or it failed; wake the
  // watcher so it can be joined.
  serving_done = true;
  ::kill(::getpid(), SIGTERM);
  watcher.join();
  corrald->stop();
  std::printf("corrald: stopped\n");
  return Status();
}

}  // namespace corral::server
