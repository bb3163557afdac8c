#include "server/controllers/assignment_board.h"

namespace corral::server {

AssignmentBoard::Slot& AssignmentBoard::slot(const std::string& node) {
  auto& s = slots_[node];
  if (!s) {
    s = std::make_unique<Slot>();
    s->version = next_;  // never 0, so `since=0` always answers at once
  }
  return *s;
}

std::int64_t AssignmentBoard::version(const std::string& node) {
  std::lock_guard lock(mu_);
  return slot(node).version;
}

void AssignmentBoard::bump(const std::set<std::string>& nodes) {
  bump_from_peer(nodes);
  if (on_bump_ && !nodes.empty()) on_bump_(nodes);
}

void AssignmentBoard::bump_from_peer(const std::set<std::string>& nodes) {
  std::lock_guard lock(mu_);
  for (const auto& n : nodes) {
    Slot& s = slot(n);
    s.version = ++next_;
    s.cv.notify_all();
  }
}

std::int64_t AssignmentBoard::wait(const std::string& node, std::int64_t since,
                                   std::chrono::milliseconds max) {
  std::unique_lock lock(mu_);
  Slot& s = slot(node);  // slots are never erased, so the reference stays valid
  s.cv.wait_for(lock, max, [&] { return shutdown_ || s.version != since; });
  return s.version;
}

void AssignmentBoard::mark_stop(std::int64_t job, const std::string& node) {
  {
    std::lock_guard lock(mu_);
    Slot& s = slot(node);
    s.version = ++next_;
    stops_.try_emplace({job, node}, s.version);
    s.cv.notify_all();
  }
  if (on_bump_) on_bump_({node});
}

std::optional<std::int64_t> AssignmentBoard::stop_version(std::int64_t job,
                                                          const std::string& node) {
  std::lock_guard lock(mu_);
  const auto it = stops_.find({job, node});
  if (it == stops_.end()) return std::nullopt;
  return it->second;
}

void AssignmentBoard::forget_job(std::int64_t job) {
  std::lock_guard lock(mu_);
  auto it = stops_.lower_bound({job, std::string()});
  while (it != stops_.end() && it->first.first == job) it = stops_.erase(it);
}

void AssignmentBoard::set_applied(const std::string& node, std::int64_t version) {
  std::lock_guard lock(mu_);
  Slot& s = slot(node);
  // Every version this board handed out for `node` is <= its current one; a larger claim
  // was issued by another corrald (a replica on the same store, which numbers its own)
  // and, taken as ours, would confirm stops the agent never saw. Ignored.
  if (version > s.applied && version <= s.version) s.applied = version;
}

std::int64_t AssignmentBoard::applied(const std::string& node) {
  std::lock_guard lock(mu_);
  return slot(node).applied;
}

void AssignmentBoard::forget_applied(const std::string& node) {
  std::lock_guard lock(mu_);
  slot(node).applied = 0;
}

void AssignmentBoard::shutdown() {
  std::lock_guard lock(mu_);
  shutdown_ = true;
  for (auto& [n, s] : slots_) s->cv.notify_all();
}

}  // namespace corral::server
