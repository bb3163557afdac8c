#include "agent/agent.h"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include "agent/client.h"
#include "agent/cluster_scope.h"
#include "agent/topology.h"

namespace corral::agent {
namespace {

constexpr std::int64_t kLongPollMs = 25000;
// A worker start/exit is reported this long after the first one of a burst: enough to
// carry a gang's ranks in one heartbeat, short against the 100 ms submit-to-start goal.
constexpr auto kCoalesce = std::chrono::milliseconds(3);
constexpr std::int64_t kStopRetryMs = 20;

}  // namespace

core::Status parse_labels(const std::string& text, core::TopologyLabels& labels,
                          std::int64_t& rack_power_cap_w) {
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    start = end + 1;
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos) {
      return core::invalid_argument("--labels", "entry '" + item + "' must be KEY=VALUE");
    }
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "region") {
      labels.region = value;
    } else if (key == "cluster") {
      labels.cluster = value;
    } else if (key == "spine") {
      labels.spine = value;
    } else if (key == "leaf") {
      labels.leaf = value;
    } else if (key == "rack") {
      labels.rack = value;
    } else if (key == "nvlinkRack") {
      labels.nvlink_rack = value;
    } else if (key == "rackPowerCapW") {
      try {
        std::size_t used = 0;
        rack_power_cap_w = std::stoll(value, &used);
        if (used != value.size() || rack_power_cap_w < 0) throw std::invalid_argument(value);
      } catch (const std::exception&) {
        return core::invalid_argument(
            "--labels", "rackPowerCapW must be a non-negative integer, got '" + value + "'");
      }
    } else {
      return core::invalid_argument(
          "--labels",
          "unknown label '" + key +
              "' (known: region, cluster, spine, leaf, rack, nvlinkRack, rackPowerCapW)");
    }
  }
  return core::ok_status();
}

Agent::Agent(AgentOptions options, std::unique_ptr<Inventory> inventory, const core::Clock& clock)
    : options_(std::move(options)),
      inventory_(std::move(inventory)),
      clock_(clock),
      telemetry_(options_.telemetry.max_buffered) {
  if (options_.faults_path.empty()) options_.faults_path = options_.state_dir + "/faults.json";
}

Agent::~Agent() = default;

void Agent::log(const std::string& line) const {
  static std::mutex log_mu;
  std::lock_guard lock(log_mu);
  std::cerr << "corral-agent[" << options_.node << "]: " << line << std::endl;
}

std::string Agent::agent_url() const { return agent_url_; }

Agent::Session Agent::session() const {
  std::lock_guard lock(mu_);
  return session_;
}

void Agent::shutdown() {
  std::lock_guard lock(mu_);
  stopping_ = true;
  cv_.notify_all();
}

bool Agent::sleep_ms(std::int64_t ms) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return stopping_; });
  return !stopping_;
}

void Agent::trigger_heartbeat() {
  std::lock_guard lock(mu_);
  heartbeat_due_ = true;
  cv_.notify_all();
}

std::shared_ptr<Agent::ClusterScope> Agent::open_scope(const std::string& cluster_id,
                                                       const std::string& dir, bool leftover) {
  auto scope = std::make_shared<ClusterScope>();
  scope->cluster_id = cluster_id;
  scope->dir = dir;
  scope->launcher =
      std::make_unique<Launcher>(Launcher::Options{.state_dir = dir,
                                                   .supervisor_exe = options_.supervisor_exe,
                                                   .agent_url = agent_url_,
                                                   .mps_pipe_dir = options_.mps_pipe_dir,
                                                   .clock = &clock_,
                                                   .on_change = [this] { trigger_heartbeat(); }});
  if (leftover) return scope;
  scope->reconciler = std::make_unique<Reconciler>(
      *scope->launcher, [this](const core::WorkerKey& key, const core::Status& why) {
        log("worker " + key.name() + " could not be started, reported as exit " +
            std::to_string(kStartFailedExitCode) + ": " + why.to_string());
        trigger_heartbeat();
      });
  scope->reconciler->adopt();
  return scope;
}

void Agent::retire(std::shared_ptr<ClusterScope> scope) {
  if (scope->reconciler) scope->reconciler->close();
  std::lock_guard lock(mu_);
  retired_.push_back(std::move(scope));
}

bool Agent::sweep_retired() {
  std::lock_guard sweep_lock(sweep_mu_);
  std::vector<std::shared_ptr<ClusterScope>> todo, done;
  {
    std::lock_guard lock(mu_);
    todo = retired_;
  }
  for (const auto& scope : todo) {
    if (sweep(*scope->launcher)) done.push_back(scope);
  }
  bool left = false;
  {
    std::lock_guard lock(mu_);
    std::erase_if(retired_, [&](const auto& scope) {
      return std::find(done.begin(), done.end(), scope) != done.end();
    });
    left = !retired_.empty();
  }
  // The last references to finished scopes (in `todo` and `done`) go when this returns,
  // outside mu_: a launcher's destructor joins its watcher thread, which may be waiting
  // for mu_.
  return !left;
}

bool Agent::sweeping() const {
  std::lock_guard lock(mu_);
  return !retired_.empty();
}

core::Status Agent::join_once() {
  CORRAL_ASSIGN_OR_RETURN(auto client, CorraldClient::connect(servers_));
  CORRAL_ASSIGN_OR_RETURN(
      const core::JoinAnswer answer,
      client->join(options_.join_token, join_request(options_.node, agent_url_, options_.labels,
                                                     options_.rack_power_cap_w, discovered_)));
  // Job ids mean something only within one cluster: keep the workers of the cluster that
  // answered, and stop those of any other (protocol §1).
  std::shared_ptr<ClusterScope> scope = session().scope;
  if (!scope || scope->cluster_id != answer.cluster_id) {
    // First, so that an agent restarted from here on adopts this cluster's workers.
    CORRAL_RETURN_IF_ERROR(write_joined_cluster(options_.state_dir, answer.cluster_id));
    if (scope) {
      log("joined cluster " + answer.cluster_id + ", not " + scope->cluster_id +
          " that this agent ran workers for: stopping them (no assignment here owns them)");
      retire(scope);
    }
    scope = open_scope(answer.cluster_id, cluster_dir(options_.state_dir, answer.cluster_id),
                       /*leftover=*/false);
  }
  if (!leftovers_checked_) {
    leftovers_checked_ = true;
    for (const std::string& dir : other_clusters_dirs(options_.state_dir, answer.cluster_id)) {
      const bool retired = [&] {
        std::lock_guard lock(mu_);
        return std::any_of(retired_.begin(), retired_.end(),
                           [&](const auto& r) { return r->dir == dir; });
      }();
      if (retired) continue;  // the cluster left above
      auto leftover = open_scope("", dir, /*leftover=*/true);
      if (!leftover->launcher->recorded().empty()) {
        log("stopping the workers recorded in " + dir + " (not cluster " + answer.cluster_id +
            "'s)");
      }
      retire(std::move(leftover));
    }
  }
  // Give them a moment to go (no grace: a SIGKILL each), so that this cluster's workers
  // do not find their GPUs taken; the heartbeat thread keeps at any that take longer.
  for (int i = 0; i < 100 && !sweep_retired(); ++i) {
    if (!sleep_ms(10)) break;
  }
  // Declared before the lock, so that a scope left (and swept) meanwhile dies after mu_
  // is released: its launcher's destructor joins a thread that may be waiting for mu_.
  std::shared_ptr<ClusterScope> previous;
  std::lock_guard lock(mu_);
  session_.token = answer.token;
  session_.epoch = answer.epoch;
  session_.log_key = answer.log_key;
  previous = std::exchange(session_.scope, std::move(scope));
  ++session_.generation;
  heartbeat_due_ = true;
  cv_.notify_all();
  return core::ok_status();
}

void Agent::rejoin(std::uint64_t generation, bool fenced) {
  std::lock_guard join_lock(join_mu_);
  if (session().generation != generation) return;  // another thread already did it
  if (fenced) {
    // Our jobs already restart elsewhere and our checkpoints would be refused: no grace.
    log("fenced by corrald: stopping every worker and joining again");
    session().scope->reconciler->stop_all(0);
    std::lock_guard lock(mu_);
    reports_.clear();
  } else {
    log("corrald no longer knows this agent's token: joining again");
  }
  for (int tries = 0;; ++tries) {
    const core::Status s = join_once();
    if (s.ok()) {
      log("joined again, epoch " + std::to_string(session().epoch));
      return;
    }
    log("join failed (" + s.to_string() + "), retrying");
    if (!sleep_ms(retry_backoff_ms(tries))) return;
  }
}

core::Status Agent::run() {
  // 0. The replicas it may talk to: all its clients share the choice among them.
  CORRAL_ASSIGN_OR_RETURN(servers_, ServerList::parse(options_.server_url));
  // 1. What the node has.
  CORRAL_ASSIGN_OR_RETURN(discovered_, inventory_->discover());
  if (discovered_.rack_nvlink_domain && options_.labels.nvlink_rack.empty()) {
    options_.labels.nvlink_rack =
        !options_.labels.rack.empty() ? options_.labels.rack : options_.node;
  }
  // 2. The local server first: workers and corrald need its URL.
  local_ = std::make_unique<LocalServer>(LocalServer::Hooks{
      .worker_for_token = [this](const std::string& token) -> std::optional<core::WorkerKey> {
        const Session s = session();
        return s.scope ? s.scope->reconciler->worker_for_token(token) : std::nullopt;
      },
      .on_checkpoint =
          [this](const std::string& token, const core::CheckpointReport& report) {
            return queue_report(token, report);
          },
      .on_run_report = [this](
                           const std::string& token,
                           const core::RunReport& report) { return queue_report(token, report); },
      .on_feature_lookup =
          [this](const std::string& token, const core::FeatureLookupRequest& request) {
            return forward_feature_lookup(token, request);
          },
      .log_access =
          [this] {
            const Session s = session();
            return LocalServer::LogAccess{.key = s.log_key,
                                          .logs_dir = s.scope ? s.scope->dir + "/logs" : ""};
          }});
  CORRAL_ASSIGN_OR_RETURN(const int port,
                          local_->start(options_.listen_host, options_.listen_port));
  agent_url_ = "http://" + options_.listen_host + ":" + std::to_string(port);
  // 3. Adopt what a previous agent on this state dir started for the cluster it joined
  //    last; the join below keeps them only if it is the same cluster.
  if (const auto last = read_joined_cluster(options_.state_dir)) {
    auto scope = open_scope(*last, cluster_dir(options_.state_dir, *last), /*leftover=*/false);
    std::lock_guard lock(mu_);
    session_.scope = std::move(scope);
  }
  // 4. Join; a refusal (bad token, bad inventory) is final, an unreachable corrald is not.
  for (int tries = 0;; ++tries) {
    const core::Status s = join_once();
    if (s.ok()) break;
    if (s.code() != core::StatusCode::kUnavailable) return s;
    if (tries == 0) log("waiting for corrald at " + servers_->url() + " (" + s.message() + ")");
    if (!sleep_ms(retry_backoff_ms(tries))) return core::ok_status();
  }
  log("joined " + servers_->url() + " as " + options_.node + " (epoch " +
      std::to_string(session().epoch) + ", " + std::to_string(discovered_.gpus.size()) +
      " GPUs from " + discovered_.source + "), serving " + agent_url_);
  std::thread poller([this] { poll_loop(); });
  std::thread heart([this] { heartbeat_loop(); });
  std::thread forwarder([this] { report_loop(); });
  std::thread sampler, sender;
  if (options_.telemetry.interval_ms > 0) {
    sampler = std::thread([this] { telemetry_sample_loop(); });
    sender = std::thread([this] { telemetry_send_loop(); });
  }
  {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return stopping_; });
  }
  heart.join();
  forwarder.join();
  if (sampler.joinable()) sampler.join();
  if (sender.joinable()) sender.join();
  poller.join();
  local_->stop();
  return core::ok_status();
}

void Agent::poll_loop() {
  auto client = CorraldClient::connect(servers_, CorraldClient::Connection::kKeepAlive);
  if (!client.ok()) return;
  std::int64_t since = -1;  // answers at once: adopted workers may need stopping
  std::uint64_t replica = servers_->generation();
  int failures = 0;
  std::thread canceller([this, &client] {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return stopping_; });
    (*client)->cancel();
  });
  while (true) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) break;
    }
    const Session s = session();
    if (servers_->generation() != replica) {
      // Another replica: its versions are not the last one's. Ask for its assignments at
      // once, and claim to have applied none of its versions until one is applied.
      replica = servers_->generation();
      since = -1;
      s.scope->applied_version.store(-1);
      log("now talking to corrald at " + servers_->url());
    }
    auto answer = (*client)->assignments(options_.node, s.token, since, kLongPollMs);
    if (answer.ok() && answer->epoch != s.epoch && answer->epoch > s.epoch) {
      rejoin(s.generation, /*fenced=*/true);
      since = -1;
      continue;
    }
    if (answer.ok()) {
      failures = 0;
      since = answer->version;
      s.scope->reconciler->apply(answer->workers);  // and ask again at once (no sleep)
      // Every worker that answer asked for is started (or stopping) now; a heartbeat
      // that observes workers after this point may say so (protocol §3).
      s.scope->applied_version.store(answer->version);
      continue;
    }
    const core::Status failure = answer.status();
    const bool fenced = failure.is(core::ErrorReason::kFenced);
    if (fenced || failure.code() == core::StatusCode::kUnauthenticated) {
      rejoin(s.generation, fenced);
      since = -1;
      continue;
    }
    if (failures++ == 0) log(answer.status().to_string());
    if (!sleep_ms(retry_backoff_ms(failures))) break;
  }
  canceller.join();
}

void Agent::heartbeat_loop() {
  auto client = CorraldClient::connect(servers_);
  if (!client.ok()) return;
  int failures = 0;
  std::string last_faults_error;
  while (true) {
    // Read before taking mu_: the reconciler calls trigger_heartbeat() (mu_) while it
    // holds its own lock, so mu_ is never held while asking it anything.
    const bool retrying = session().scope->reconciler->stops_pending() || sweeping();
    const auto period = std::chrono::milliseconds(
        retrying ? std::min(kStopRetryMs, options_.heartbeat_ms) : options_.heartbeat_ms);
    {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, period, [this] { return stopping_ || heartbeat_due_; });
      if (stopping_) break;
      if (heartbeat_due_) {
        // Coalesce a burst of starts/exits (a gang's ranks) into one report.
        cv_.wait_for(lock, kCoalesce, [this] { return stopping_; });
        heartbeat_due_ = false;
      }
    }
    // One session for the whole report: workers of the cluster its token belongs to.
    const Session s = session();
    s.scope->reconciler->reapply();
    sweep_retired();
    auto health = [&] {
      std::lock_guard lock(inventory_mu_);
      return inventory_->read_health();
    }();
    std::vector<core::GpuHealth> gpus;
    if (health.ok()) {
      gpus = std::move(*health);
    } else {
      log("cannot read GPU health: " + health.status().to_string());
    }
    if (inventory_->simulated()) {
      auto faults = read_faults_file(options_.faults_path);
      if (faults.ok()) {
        apply_faults(*faults, gpus);
        last_faults_error.clear();
      } else if (faults.status().to_string() != last_faults_error) {
        last_faults_error = faults.status().to_string();
        log("ignoring faults file: " + last_faults_error);
      }
    }
    // Read before observing: the workers list must reflect at least this version.
    const std::int64_t applied = s.scope->applied_version.load();
    const std::vector<core::WorkerStatus> workers = s.scope->reconciler->observe();
    const auto answer = (*client)->heartbeat(
        options_.node, s.token,
        core::Heartbeat{.epoch = s.epoch,
                        .applied_version = applied >= 0 ? std::optional(applied) : std::nullopt,
                        .agent_url = agent_url_,
                        .gpus = std::move(gpus),
                        .workers = workers});
    if (answer.ok()) {
      failures = 0;
      s.scope->reconciler->mark_reported(workers);
      continue;
    }
    const core::Status failure = answer.status();
    const bool fenced = failure.is(core::ErrorReason::kFenced);
    if (fenced || failure.code() == core::StatusCode::kUnauthenticated) {
      rejoin(s.generation, fenced);
      continue;
    }
    if (failures++ == 0) log(answer.status().to_string());
  }
}

}  // namespace corral::agent
