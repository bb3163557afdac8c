// What the agent sends besides heartbeats (agent.h): the checkpoint and run reports its
// workers hand it, queued while corrald is away and sent in order, and the telemetry
// samples it takes and sends.
#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>

#include "agent/agent.h"
#include "agent/client.h"
#include "agent/cluster_scope.h"

namespace corral::agent {
namespace {

// Reports the agent holds for corrald before it turns run reports away: a run report is
// at most 1,000 points (about 60 KiB), so the queue stays under about 60 MiB.
constexpr std::size_t kMaxQueuedReports = 1000;

}  // namespace

core::Status Agent::queue_report(const std::string& token,
                                 std::variant<core::CheckpointReport, core::RunReport> report) {
  // One look at the session: the report goes to the cluster whose worker holds the
  // token, or nowhere.
  const Session s = session();
  const auto key = s.scope ? s.scope->reconciler->worker_for_token(token) : std::nullopt;
  if (!key) return core::Status(core::StatusCode::kUnauthenticated, "not a worker's token");
  std::lock_guard lock(mu_);
  // While corrald is away reports wait here; a worker past the bound is told to slow
  // down rather than growing the agent without end. Checkpoints always get a place.
  if (reports_.size() >= kMaxQueuedReports && std::holds_alternative<core::RunReport>(report)) {
    return core::Status(
        core::StatusCode::kResourceExhausted,
        std::to_string(reports_.size()) + " reports wait for corrald; send this one again later");
  }
  reports_.push_back(PendingReport{.cluster_id = s.scope->cluster_id,
                                   .epoch = s.epoch,
                                   .key = *key,
                                   .report = std::move(report)});
  cv_.notify_all();
  return core::Status();
}

void Agent::report_loop() {
  auto client = CorraldClient::connect(servers_);
  if (!client.ok()) return;
  while (true) {
    PendingReport next;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !reports_.empty(); });
      if (stopping_) break;
      next = reports_.front();
      const std::int64_t wait = next.next_try_ms - core::to_ms(clock_.now());
      if (wait > 0) {
        cv_.wait_for(lock, std::chrono::milliseconds(wait), [this] { return stopping_; });
        continue;
      }
      reports_.pop_front();
    }
    const auto* checkpoint = std::get_if<core::CheckpointReport>(&next.report);
    const std::string what = checkpoint ? "checkpoint of " + next.key.name() + " step " +
                                              std::to_string(checkpoint->step)
                                        : "run report of " + next.key.name();
    const Session session_now = session();
    if (!session_now.scope || session_now.scope->cluster_id != next.cluster_id) {
      log(what + " dropped: its worker belongs to cluster " + next.cluster_id +
          ", which this agent left");
      continue;
    }
    const core::Status s =
        checkpoint ? (*client)->checkpoint(
                         options_.node, session_now.token,
                         core::WorkerCheckpoint{
                             .epoch = next.epoch, .key = next.key, .report = *checkpoint})
                   : (*client)->run_report(
                         options_.node, session_now.token,
                         core::WorkerRunReport{.epoch = next.epoch,
                                               .key = next.key,
                                               .report = std::get<core::RunReport>(next.report)});
    if (s.ok()) continue;
    if (s.code() == core::StatusCode::kUnavailable) {
      ++next.tries;
      next.next_try_ms = core::to_ms(clock_.now()) + retry_backoff_ms(next.tries);
      if (next.tries == 1) log(what + " will be retried: " + s.to_string());
      std::lock_guard lock(mu_);
      reports_.push_front(next);  // keep the order of one worker's reports
      continue;
    }
    log(what + " dropped: " + s.to_string());
  }
}

core::Result<LocalServer::Answer> Agent::forward_feature_lookup(
    const std::string& token, const core::FeatureLookupRequest& request) {
  // One look at the session: the lookup is asked with the epoch and agent token of the
  // cluster whose worker holds the token, as the worker's reports are.
  const Session s = session();
  const auto key = s.scope ? s.scope->reconciler->worker_for_token(token) : std::nullopt;
  if (!key) return core::Status(core::StatusCode::kUnauthenticated, "not a worker's token");
  std::unique_ptr<CorraldClient> client;
  {
    std::lock_guard lock(lookup_mu_);
    if (!lookup_clients_.empty()) {
      client = std::move(lookup_clients_.back());
      lookup_clients_.pop_back();
    }
  }
  if (client == nullptr) {
    CORRAL_ASSIGN_OR_RETURN(client, CorraldClient::connect(servers_));
  }
  auto answer = client->feature_lookup(options_.node, s.token,
                                       {.epoch = s.epoch, .key = *key, .request = request});
  {
    std::lock_guard lock(lookup_mu_);
    lookup_clients_.push_back(std::move(client));
  }
  if (!answer.ok()) return answer.status();
  // corrald no longer knows the agent's token: the worker's was fine, and the heartbeat
  // joins again; until then the lookup cannot be answered.
  if (answer->status == 401) {
    return core::Status(core::StatusCode::kUnavailable,
                        "the agent is joining corrald again; retry the lookup");
  }
  return LocalServer::Answer{.status = answer->status, .body = std::move(answer->body)};
}

std::optional<Faults> Agent::current_faults() {
  if (!inventory_->simulated()) return std::nullopt;
  auto faults = read_faults_file(options_.faults_path);
  if (!faults.ok()) return std::nullopt;  // the heartbeat thread logs it
  return std::move(*faults);
}

void Agent::telemetry_sample_loop() {
  std::string last_error;
  std::int64_t next = core::to_ms(clock_.now());
  while (true) {
    // On the clock's schedule, so a slow round does not shift every later one.
    const std::int64_t wait = next - core::to_ms(clock_.now());
    if (wait > 0 && !sleep_ms(wait)) break;
    {
      std::lock_guard lock(mu_);
      if (stopping_) break;
    }
    next += options_.telemetry.interval_ms;
    const std::int64_t now = core::to_ms(clock_.now());
    if (next < now) next = now + options_.telemetry.interval_ms;  // fell behind: skip
    const Session s = session();
    const std::set<std::int32_t> busy = s.scope && s.scope->reconciler
                                            ? s.scope->reconciler->busy_gpus()
                                            : std::set<std::int32_t>();
    const std::optional<Faults> faults = current_faults();
    const core::Status sampled = [&] {
      std::lock_guard lock(inventory_mu_);
      return sample_telemetry(*inventory_, now, busy, faults ? &*faults : nullptr, telemetry_);
    }();
    if (!sampled.ok() && sampled.to_string() != last_error) {
      log("cannot sample GPU telemetry: " + sampled.to_string());
    }
    last_error = sampled.ok() ? "" : sampled.to_string();
  }
}

void Agent::telemetry_send_loop() {
  auto client = CorraldClient::connect(servers_);
  if (!client.ok()) return;
  std::string last_error;
  std::int64_t dropped_logged = 0;
  while (sleep_ms(options_.telemetry.flush_ms)) {
    const Session s = session();
    const FlushResult r = flush_telemetry(
        telemetry_, options_.telemetry.max_batch, [&](const core::TelemetryBatch& batch) {
          return (*client)->telemetry(options_.node, s.token, batch);
        });
    // A refusal (fenced, an unknown token) is the heartbeat's to act on: it rejoins, and
    // the next flush goes with the new token. Logged once per kind, not per flush.
    const std::string error = r.last_error.ok() ? "" : r.last_error.to_string();
    if (!error.empty() && error != last_error) log("telemetry (best effort): " + error);
    last_error = error;
    if (const std::int64_t dropped = telemetry_.dropped(); dropped > dropped_logged) {
      if (dropped_logged == 0) {
        log("telemetry buffer full: dropping the oldest samples (corrald unreachable?)");
      }
      dropped_logged = dropped;
    }
  }
}

}  // namespace corral::agent
