#include "agent/emulated/emulated_fleet.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <filesystem>
#include <iostream>
#include <optional>
#include <thread>

#include "agent/client.h"
#include "agent/emulated/timer_runner.h"
#include "agent/faults.h"
#include "agent/inventory.h"
#include "agent/reconciler.h"
#include "agent/topology.h"
#include "core/splitmix.h"

namespace corral::agent {
namespace {

constexpr std::int64_t kEmulatedLongPollMs = 25000;  // as a real agent's
constexpr std::int64_t kEmulatedCoalesceMs = 3;      // a gang's ranks in one heartbeat (agent.cc)
constexpr std::int64_t kEmulatorStatsMs = 10000;
// An emulated node has no local server; corrald gets an address nothing answers at, so
// a log request fails as it would for a node that cannot be reached.
constexpr const char* kEmulatedAgentUrl = "http://127.0.0.1:9";

std::int64_t emulated_percentile(std::vector<std::int64_t> v, double p) {
  if (v.empty()) return 0;
  const auto at = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(at), v.end());
  return v[at];
}

}  // namespace

struct EmulatedFleet::Node {
  Node(std::string n, const core::Clock& clock) : name(std::move(n)), runner(clock) {}

  const std::string name;
  core::TopologyLabels labels;
  std::int64_t rack_power_cap_w = 0;     // as a real agent's --labels rackPowerCapW
  std::unique_ptr<Inventory> inventory;  // the sender's only
  NodeInventory discovered;
  std::shared_ptr<ServerList> servers;
  TimerRunner runner;
  std::unique_ptr<Reconciler> reconciler;
  std::atomic<std::int64_t> applied_version{-1};
  std::atomic<bool> down{false};
  std::atomic<bool> triggered{false};
  std::atomic<bool> rejoining{false};  // queued for the rejoin thread: its sender skips it
  std::atomic<std::int64_t> triggered_at_ms{0};
  std::size_t sender = 0;

  std::mutex join_mu;     // one rejoin at a time
  mutable std::mutex mu;  // the session and the poll client
  std::string token;
  std::int64_t epoch = 0;
  std::uint64_t generation = 0;  // 0: never joined
  std::string cluster_id;
  CorraldClient* poll_client = nullptr;  // for cancel(), while a poll runs

  // The sender's alone.
  std::unique_ptr<CorraldClient> side;
  std::deque<TimerRunner::Checkpoint> unsent;
  std::int64_t next_heartbeat_ms = 0;
  std::int64_t next_sample_ms = 0;
  std::int64_t next_flush_ms = 0;
  std::int64_t last_answer_ms = 0;
  TelemetryBuffer telemetry{2000};

  struct Session {
    std::string token;
    std::int64_t epoch = 0;
    std::uint64_t generation = 0;
  };
  Session session() const {
    std::lock_guard lock(mu);
    return {token, epoch, generation};
  }
};

struct EmulatedFleet::Sender {
  std::mutex mu;
  std::condition_variable cv;
  bool woken = false;
  std::vector<Node*> nodes;
};

EmulatedFleet::EmulatedFleet(EmulatorOptions options, const core::Clock& clock)
    : options_(std::move(options)), clock_(clock) {}

EmulatedFleet::~EmulatedFleet() = default;

void EmulatedFleet::log(const std::string& line) const {
  static std::mutex log_mu;
  std::lock_guard lock(log_mu);
  std::cerr << "corral-agent[emulate " << options_.prefix << "]: " << line << std::endl;
}

bool EmulatedFleet::stopping() const {
  std::lock_guard lock(mu_);
  return stopping_;
}

bool EmulatedFleet::sleep_ms(std::int64_t ms) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return stopping_; });
  return !stopping_;
}

void EmulatedFleet::shutdown() {
  // Only the flag: a signal may come while run() still builds the nodes; run() wakes
  // them all once it sees it (wake_all()).
  std::lock_guard lock(mu_);
  stopping_ = true;
  cv_.notify_all();
}

void EmulatedFleet::wake_all() {
  for (auto& sender : senders_) {
    std::lock_guard lock(sender->mu);
    sender->woken = true;
    sender->cv.notify_all();
  }
  for (auto& node : nodes_) {
    std::lock_guard lock(node->mu);
    if (node->poll_client) node->poll_client->cancel();
  }
}

void EmulatedFleet::trigger(Node& node) {
  if (!node.triggered.exchange(true)) node.triggered_at_ms = core::to_ms(clock_.now());
  Sender& sender = *senders_[node.sender];
  std::lock_guard lock(sender.mu);
  sender.woken = true;
  sender.cv.notify_all();
}

core::Status EmulatedFleet::join(Node& node) {
  CORRAL_ASSIGN_OR_RETURN(auto client, CorraldClient::connect(node.servers));
  CORRAL_ASSIGN_OR_RETURN(
      const core::JoinAnswer answer,
      client->join(options_.join_token, join_request(node.name, kEmulatedAgentUrl, node.labels,
                                                     node.rack_power_cap_w, node.discovered)));
  std::lock_guard lock(node.mu);
  if (!node.cluster_id.empty() && node.cluster_id != answer.cluster_id) {
    // Another cluster's job ids mean nothing here (protocol §1): its workers go.
    node.reconciler->stop_all(0);
  }
  node.cluster_id = answer.cluster_id;
  node.token = answer.token;
  node.epoch = answer.epoch;
  ++node.generation;
  return core::ok_status();
}

void EmulatedFleet::rejoin(Node& node, std::uint64_t generation, bool fenced) {
  std::lock_guard join_lock(node.join_mu);
  if (node.session().generation != generation) return;  // another thread did it
  if (fenced) node.reconciler->stop_all(0);             // its jobs already restart elsewhere
  for (int tries = 0; !stopping() && !node.down; ++tries) {
    if (join(node).ok()) {
      trigger(node);
      return;
    }
    if (!sleep_ms(retry_backoff_ms(tries))) return;
  }
}

void EmulatedFleet::poll_loop(Node& node) {
  for (int tries = 0; node.session().generation == 0; ++tries) {
    if (stopping() || node.down) return;
    const core::Status s = join(node);
    if (s.ok()) break;
    if (s.code() != core::StatusCode::kUnavailable) {
      log(node.name + ": join refused for good: " + s.to_string());
      return;
    }
    if (!sleep_ms(retry_backoff_ms(tries))) return;
  }
  trigger(node);
  auto client = CorraldClient::connect(node.servers, CorraldClient::Connection::kKeepAlive);
  if (!client.ok()) return;
  {
    std::lock_guard lock(node.mu);
    node.poll_client = client->get();
  }
  std::int64_t since = -1;
  std::uint64_t replica = node.servers->generation();
  int failures = 0;
  while (!stopping() && !node.down) {
    const Node::Session s = node.session();
    if (node.servers->generation() != replica) {  // another replica: its own versions
      replica = node.servers->generation();
      since = -1;
      node.applied_version = -1;
    }
    auto answer = (*client)->assignments(node.name, s.token, since, kEmulatedLongPollMs);
    if (stopping() || node.down) break;
    if (answer.ok() && answer->epoch > s.epoch) {
      rejoin(node, s.generation, /*fenced=*/true);
      since = -1;
      continue;
    }
    if (answer.ok()) {
      failures = 0;
      since = answer->version;
      node.reconciler->apply(answer->workers);
      node.applied_version = answer->version;
      trigger(node);
      continue;
    }
    const bool fenced = answer.status().is(core::ErrorReason::kFenced);
    if (fenced || answer.status().code() == core::StatusCode::kUnauthenticated) {
      rejoin(node, s.generation, fenced);
      since = -1;
      continue;
    }
    if (!sleep_ms(retry_backoff_ms(++failures))) break;
  }
  std::lock_guard lock(node.mu);
  node.poll_client = nullptr;
}

void EmulatedFleet::note_heartbeat(std::int64_t rtt_ms, std::int64_t gap_ms) {
  std::lock_guard lock(mu_);
  rtts_.push_back(rtt_ms);
  max_gap_ms_ = std::max(max_gap_ms_, gap_ms);
}

void EmulatedFleet::service(Node& node, std::int64_t now_ms) {
  node.triggered = false;
  const Node::Session s = node.session();
  node.reconciler->reapply();
  // A refusal that needs a new session goes to the rejoin thread: joining here (with its
  // retries) would hold up every other node of this sender, which a real agent's
  // heartbeat thread never does to another node.
  auto refused = [&](const core::Status& status) {
    const bool fenced = status.is(core::ErrorReason::kFenced);
    if (fenced || status.code() == core::StatusCode::kUnauthenticated) {
      if (!node.rejoining.exchange(true)) {
        std::lock_guard lock(mu_);
        rejoins_.push_back({&node, s.generation, fenced});
        cv_.notify_all();
      }
      return true;
    }
    return false;
  };
  // 1. Checkpoints, in the order the workers reported them; kept while corrald is away.
  for (auto& c : node.runner.take_checkpoints()) node.unsent.push_back(std::move(c));
  while (!node.unsent.empty()) {
    const TimerRunner::Checkpoint& c = node.unsent.front();
    const core::Status sent = node.side->checkpoint(
        node.name, s.token,
        core::WorkerCheckpoint{.epoch = s.epoch, .key = c.key, .report = c.report});
    if (sent.code() == core::StatusCode::kUnavailable) break;
    node.unsent.pop_front();  // sent, or refused for good (a stale attempt's)
    if (refused(sent)) {
      node.unsent.clear();
      return;
    }
  }
  // 2. Telemetry: a sample of every GPU, loaded as the workers say.
  const std::string faults_path = options_.state_dir + "/faults/" + node.name + ".json";
  auto faults = read_faults_file(faults_path);
  if (options_.telemetry.interval_ms > 0 && now_ms >= node.next_sample_ms) {
    const std::vector<std::int32_t> busy = node.runner.busy_gpus();
    (void)sample_telemetry(*node.inventory, now_ms, {busy.begin(), busy.end()},
                           faults.ok() ? &*faults : nullptr, node.telemetry);
    node.next_sample_ms = now_ms + options_.telemetry.interval_ms;
  }
  // 3. The heartbeat: health (with injected faults and the XIDs workers ended with) and
  //    every worker's state.
  auto health = node.inventory->read_health();
  std::vector<core::GpuHealth> gpus =
      health.ok() ? std::move(*health) : std::vector<core::GpuHealth>{};
  if (faults.ok()) apply_faults(*faults, gpus);
  Faults ended;  // the XIDs workers ended with, overlaid as injected ones are
  for (const auto& [gpu, xid] : node.runner.xids()) ended[gpu].xid = xid;
  apply_faults(ended, gpus);
  const std::int64_t applied = node.applied_version;
  const std::vector<core::WorkerStatus> workers = node.reconciler->observe();
  const std::int64_t sent_ms = core::to_ms(clock_.now());
  const auto answer = node.side->heartbeat(
      node.name, s.token,
      core::Heartbeat{.epoch = s.epoch,
                      .applied_version = applied >= 0 ? std::optional(applied) : std::nullopt,
                      .agent_url = std::nullopt,
                      .gpus = std::move(gpus),
                      .workers = workers});
  const std::int64_t done_ms = core::to_ms(clock_.now());
  node.next_heartbeat_ms = done_ms + options_.heartbeat_ms;
  if (answer.ok()) {
    node.reconciler->mark_reported(workers);
    note_heartbeat(done_ms - sent_ms, node.last_answer_ms ? done_ms - node.last_answer_ms : 0);
    node.last_answer_ms = done_ms;
  } else {
    {
      std::lock_guard lock(mu_);
      ++failed_heartbeats_;
    }
    if (refused(answer.status())) return;
  }
  // 4. Telemetry out, best effort.
  if (options_.telemetry.interval_ms > 0 && now_ms >= node.next_flush_ms) {
    flush_telemetry(node.telemetry, options_.telemetry.max_batch,
                    [&](const core::TelemetryBatch& batch) {
                      return node.side->telemetry(node.name, s.token, batch);
                    });
    node.next_flush_ms = now_ms + options_.telemetry.flush_ms;
  }
}

void EmulatedFleet::send_loop(std::size_t index) {
  Sender& sender = *senders_[index];
  while (!stopping()) {
    const std::int64_t now_ms = core::to_ms(clock_.now());
    std::int64_t wake_ms = now_ms + 1000;
    for (Node* node : sender.nodes) {
      if (node->down || node->rejoining || node->session().generation == 0) continue;
      std::int64_t due = node->next_heartbeat_ms;
      if (node->triggered) due = std::min(due, node->triggered_at_ms + kEmulatedCoalesceMs);
      if (const auto event = node->runner.next_event_ms()) due = std::min(due, *event);
      if (due <= now_ms) {
        service(*node, now_ms);
        wake_ms = now_ms;  // look again at once: time went by
      } else {
        wake_ms = std::min(wake_ms, due);
      }
    }
    std::unique_lock lock(sender.mu);
    const std::int64_t wait = wake_ms - core::to_ms(clock_.now());
    if (wait > 0) {
      sender.cv.wait_for(lock, std::chrono::milliseconds(wait), [&] { return sender.woken; });
    }
    sender.woken = false;
  }
}

void EmulatedFleet::rejoin_loop() {
  while (true) {
    Rejoin next;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !rejoins_.empty(); });
      if (stopping_) return;
      next = rejoins_.front();
      rejoins_.pop_front();
    }
    rejoin(*next.node, next.generation, next.fenced);
    next.node->rejoining = false;
    trigger(*next.node);
  }
}

void EmulatedFleet::watch_down_loop() {
  const std::filesystem::path dir = std::filesystem::path(options_.state_dir) / "down";
  while (sleep_ms(200)) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      const std::string name = entry.path().filename().string();
      for (auto& node : nodes_) {
        if (node->name != name || node->down.exchange(true)) continue;
        log(name + " is down (" + entry.path().string() + "): it stops answering");
        std::lock_guard lock(node->mu);
        if (node->poll_client) node->poll_client->cancel();
      }
    }
  }
}

void EmulatedFleet::stats_loop() {
  while (sleep_ms(kEmulatorStatsMs)) {
    std::vector<std::int64_t> rtts;
    std::int64_t gap = 0, failed = 0;
    {
      std::lock_guard lock(mu_);
      rtts.swap(rtts_);
      gap = std::exchange(max_gap_ms_, 0);
      failed = std::exchange(failed_heartbeats_, 0);
    }
    std::size_t up = 0, running = 0;
    for (auto& node : nodes_) {
      if (node->down || node->rejoining || node->session().generation == 0) continue;
      ++up;
      running += node->runner.busy_gpus().size();
    }
    log("stats: " + std::to_string(up) + " nodes up, " + std::to_string(running) + " GPUs busy, " +
        std::to_string(rtts.size()) + " heartbeats (" + std::to_string(failed) +
        " failed), round trip p50 " + std::to_string(emulated_percentile(rtts, 0.5)) + " ms, p99 " +
        std::to_string(emulated_percentile(rtts, 0.99)) + " ms, longest gap between answers " +
        std::to_string(gap) + " ms");
  }
}

core::Status EmulatedFleet::shape_node(Node& node, std::int32_t i, const core::FleetPools* fleet) {
  if (fleet) {
    const core::Node& shape = fleet->nodes[static_cast<std::size_t>(i)];
    CORRAL_ASSIGN_OR_RETURN(node.inventory,
                            open_fleet_node_inventory(*fleet, shape, node.name, options_.fleet));
    CORRAL_ASSIGN_OR_RETURN(node.discovered, node.inventory->discover());
    // What a real agent on that node gives with --labels: the fleet's topology, and its
    // rack's power cap (rackPowerCapW).
    node.labels = shape.labels;
    for (const core::Rack& rack : fleet->racks) {
      if (rack.name == shape.labels.rack) node.rack_power_cap_w = rack.power_cap_watts;
    }
    return core::ok_status();
  }
  CORRAL_ASSIGN_OR_RETURN(node.inventory, open_preset_inventory(options_.preset, node.name));
  CORRAL_ASSIGN_OR_RETURN(node.discovered, node.inventory->discover());
  const bool nvlink_rack = node.discovered.rack_nvlink_domain;
  const std::int32_t per_rack = nvlink_rack ? 18 : options_.nodes_per_rack;
  const std::int32_t leaf = i / options_.nodes_per_leaf;
  node.labels = options_.labels;
  node.labels.leaf = "leaf-" + std::to_string(leaf);
  node.labels.spine = "spine-" + std::to_string(leaf / options_.leaves_per_spine);
  node.labels.rack = options_.prefix + "-rack-" + std::to_string(i / per_rack);
  if (nvlink_rack) node.labels.nvlink_rack = node.labels.rack;
  return core::ok_status();
}

core::Status EmulatedFleet::run() {
  std::optional<core::FleetPools> fleet;
  std::int32_t count = options_.count;
  std::string shape = options_.preset;
  if (!options_.fleet.empty()) {
    CORRAL_ASSIGN_OR_RETURN(fleet, load_fleet_pools(options_.fleet));
    const auto size = static_cast<std::int32_t>(fleet->nodes.size());
    if (count > size) {
      return core::invalid_argument("--emulate", "at most the node count of --fleet " +
                                                     options_.fleet + " (" + std::to_string(size) +
                                                     "; 0: all of them), got " +
                                                     std::to_string(count));
    }
    if (count == 0) count = size;
    shape = "nodes of fleet " + options_.fleet;
  } else {
    shape += " nodes";
  }
  if (count < 1) return core::invalid_argument("--emulate", "must be at least 1");
  const std::int32_t threads = options_.threads > 0 ? options_.threads : std::max(4, count / 16);
  for (std::int32_t t = 0; t < std::min(threads, count); ++t) {
    senders_.push_back(std::make_unique<Sender>());
  }
  const std::int64_t now_ms = core::to_ms(clock_.now());
  for (std::int32_t i = 0; i < count; ++i) {
    auto node = std::make_unique<Node>(options_.prefix + std::to_string(i + 1), clock_);
    CORRAL_RETURN_IF_ERROR(shape_node(*node, i, fleet ? &*fleet : nullptr));
    CORRAL_ASSIGN_OR_RETURN(node->servers, ServerList::parse(options_.server_url));
    CORRAL_ASSIGN_OR_RETURN(node->side, CorraldClient::connect(node->servers));
    node->reconciler = std::make_unique<Reconciler>(
        node->runner, [this, n = node.get()](const core::WorkerKey& key, const core::Status& why) {
          log(n->name + ": worker " + key.name() + " could not start: " + why.to_string());
        });
    // Heartbeats spread over the period, as nodes started at different times are.
    const auto phase = static_cast<std::int64_t>(
        core::unit_interval(core::splitmix64(static_cast<std::uint64_t>(i))) *
        static_cast<double>(options_.heartbeat_ms));
    node->next_heartbeat_ms = now_ms + phase;
    node->next_sample_ms = now_ms + phase;
    node->next_flush_ms = now_ms + phase + options_.telemetry.flush_ms;
    node->sender = static_cast<std::size_t>(i) % senders_.size();
    senders_[node->sender]->nodes.push_back(node.get());
    nodes_.push_back(std::move(node));
  }
  log("emulating " + std::to_string(nodes_.size()) + " " + shape + " (" + nodes_.front()->name +
      " to " + nodes_.back()->name + ") with " + std::to_string(senders_.size()) + " senders");
  std::vector<std::thread> threads_run;
  for (auto& node : nodes_) threads_run.emplace_back([this, n = node.get()] { poll_loop(*n); });
  for (std::size_t t = 0; t < senders_.size(); ++t) {
    threads_run.emplace_back([this, t] { send_loop(t); });
  }
  threads_run.emplace_back([this] { watch_down_loop(); });
  threads_run.emplace_back([this] { rejoin_loop(); });
  threads_run.emplace_back([this] { stats_loop(); });
  {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return stopping_; });
  }
  wake_all();  // every poll and sender sees the flag now
  for (auto& t : threads_run) t.join();
  return core::ok_status();
}

}  // namespace corral::agent
