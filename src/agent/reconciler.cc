#include "agent/reconciler.h"

#include <set>

namespace corral::agent {

void Reconciler::adopt() {
  std::lock_guard lock(mu_);
  for (const LaunchRecord& record : launcher_.recorded()) {
    entries_[record.key] = Entry{.record = record};
    launcher_.watch(record.key);
  }
}

void Reconciler::apply(const std::vector<core::DesiredWorker>& desired) {
  std::lock_guard lock(mu_);
  if (closed_) return;
  desired_ = desired;
  desired_known_ = true;
  apply_locked(desired_);
}

void Reconciler::reapply() {
  std::lock_guard lock(mu_);
  // Before the first answer nothing is known to be unwanted: an empty list here would
  // stop every adopted worker of a restarted agent.
  if (closed_ || !desired_known_) return;
  apply_locked(desired_);
}

core::WorkerStatus Reconciler::observe(const Entry& entry) const {
  return entry.start_failed ? *entry.start_failed : launcher_.observe(entry.record);
}

void Reconciler::send_stop(Entry& entry, std::int64_t grace_ms) {
  if (entry.stop_sent) return;
  if (observe(entry).state == core::WorkerStatus::State::kExited) {
    entry.stop_sent = true;
    return;
  }
  const core::Status s = launcher_.stop(entry.record.key, grace_ms);
  if (s.ok()) {
    entry.stop_sent = true;
  } else {
    stops_pending_ = true;  // its supervisor is still starting: the next reapply retries
  }
}

void Reconciler::apply_locked(const std::vector<core::DesiredWorker>& desired) {
  stops_pending_ = false;
  std::set<core::WorkerKey> wanted;
  for (const core::DesiredWorker& d : desired) {
    const core::WorkerKey& key = d.spec.key;
    wanted.insert(key);
    auto it = entries_.find(key);
    if (it == entries_.end()) {
      if (!d.run) continue;  // never started here: nothing to stop
      auto started = launcher_.start(d.spec);
      if (started.ok()) {
        entries_[key] = Entry{.record = *started};
        continue;
      }
      // AlreadyExists cannot happen for a key we do not know (adopt() loaded every
      // recorded worker), so this key never ran: report it as exited, never retry it.
      const std::int64_t now_ms = core::to_ms(launcher_.now());
      entries_[key] =
          Entry{.record = {.key = key},
                .stop_sent = true,
                .start_failed = core::WorkerStatus{.key = key,
                                                   .state = core::WorkerStatus::State::kExited,
                                                   .started_at_ms = now_ms,
                                                   .exit_code = kStartFailedExitCode,
                                                   .exited_at_ms = now_ms}};
      if (on_start_failed_) on_start_failed_(key, started.status());
      continue;
    }
    if (!d.run) send_stop(it->second, d.spec.grace_ms);
  }
  for (auto it = entries_.begin(); it != entries_.end();) {
    Entry& e = it->second;
    if (wanted.count(it->first)) {
      ++it;
      continue;
    }
    const core::WorkerStatus status = observe(e);
    if (status.state == core::WorkerStatus::State::kRunning) {
      send_stop(e, e.record.grace_ms);
      ++it;
    } else if (e.exit_reported) {
      launcher_.forget(it->first);
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
}

std::set<std::int32_t> Reconciler::busy_gpus() const {
  std::lock_guard lock(mu_);
  std::set<std::int32_t> out;
  for (const core::DesiredWorker& d : desired_) {
    const auto it = entries_.find(d.spec.key);
    if (it == entries_.end() || it->second.start_failed) continue;
    if (launcher_.observe(it->second.record).state != core::WorkerStatus::State::kRunning) continue;
    out.insert(d.spec.gpus.begin(), d.spec.gpus.end());
  }
  return out;
}

std::vector<core::WorkerStatus> Reconciler::observe() {
  std::lock_guard lock(mu_);
  std::vector<core::WorkerStatus> out;
  for (const auto& [key, e] : entries_) out.push_back(observe(e));
  return out;
}

void Reconciler::mark_reported(const std::vector<core::WorkerStatus>& reported) {
  std::lock_guard lock(mu_);
  for (const core::WorkerStatus& s : reported) {
    if (s.state != core::WorkerStatus::State::kExited) continue;
    if (auto it = entries_.find(s.key); it != entries_.end()) it->second.exit_reported = true;
  }
}

void Reconciler::stop_all(std::int64_t grace_ms) {
  std::lock_guard lock(mu_);
  desired_.clear();
  desired_known_ = true;  // nothing is wanted: reapply() retries the stops not yet sent
  stops_pending_ = false;
  for (auto& [key, e] : entries_) {
    e.stop_sent =
        e.start_failed.has_value();  // a shorter grace than an earlier stop's still applies
    send_stop(e, grace_ms);
  }
}

void Reconciler::close() {
  std::lock_guard lock(mu_);
  closed_ = true;
  desired_.clear();
  stops_pending_ = false;
}

std::optional<core::WorkerKey> Reconciler::worker_for_token(const std::string& token) const {
  std::lock_guard lock(mu_);
  if (token.empty() || closed_) return std::nullopt;
  for (const auto& [key, e] : entries_) {
    if (e.record.token == token) return key;
  }
  return std::nullopt;
}

bool Reconciler::stops_pending() const {
  std::lock_guard lock(mu_);
  return stops_pending_;
}

}  // namespace corral::agent
