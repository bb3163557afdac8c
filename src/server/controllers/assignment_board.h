// AssignmentBoard: what the long poll of GET /v1/agents/{node}/assignments waits on, and
// what the lifecycle controller knows about which stops each agent has seen.
//
// Every transaction that changes a node's desired workers (a placement, a preemption,
// a cancel, a gang failure, a release, a drain, a node lost) bumps that node's version
// AFTER it commits, so an answer read after the bump holds the change. Versions come
// from one counter seeded from the clock (ms x 1000) at start, so they only grow, across
// restarts too: an agent's `since` or `appliedVersion` from an earlier corrald is always
// older than anything this one hands out.
//
// Stop marks: when a job's workers on a node must stop, mark_stop() bumps the node and
// remembers that version as the job's stop version there. A rank the agent never
// reported is confirmed "never started" only once the agent's heartbeat says it applied
// that version or a later one (its worker list then proves the rank is not running).
// Nothing here is durable; after a restart every stop is marked again (conservative).
//
// Replicas: each corrald process numbers its own versions, so a version means something
// only to the process that issued it. An agent that moves to another replica asks with
// `since` -1 and sends no appliedVersion until that replica answered it (agent/client.h);
// should one arrive anyway, wait() answers at once for any version other than the
// node's current one (older, or another process's), and set_applied() ignores a claim
// above the node's current version, which this board cannot have issued.
//
// Thread safety: safe for concurrent use. wait() blocks without holding any store
// transaction.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "server/base/thread_annotations.h"

namespace corral::server {

class AssignmentBoard {
 public:
  explicit AssignmentBoard(std::int64_t first_version) : next_(first_version) {}

  std::int64_t version(const std::string& node) CORRAL_EXCLUDES(mu_);
  void bump(const std::set<std::string>& nodes) CORRAL_EXCLUDES(mu_);
  // Replicas (scheduler.h): `fn` is called after every bump() and mark_stop() with the
  // nodes bumped, to tell the other replicas; bump_from_peer() is such a bump arriving
  // from another replica: it wakes the nodes' waiters and is not forwarded again.
  // REQUIRES: set_on_bump() before any other call.
  void set_on_bump(std::function<void(const std::set<std::string>&)> fn) {
    on_bump_ = std::move(fn);
  }
  void bump_from_peer(const std::set<std::string>& nodes) CORRAL_EXCLUDES(mu_);
  // Returns as soon as version(node) != since, after `max`, or at shutdown; returns the
  // version then.
  std::int64_t wait(const std::string& node, std::int64_t since, std::chrono::milliseconds max)
      CORRAL_EXCLUDES(mu_);
  // Bumps `node` and records the stop version of (job, node) unless one is recorded.
  void mark_stop(std::int64_t job, const std::string& node) CORRAL_EXCLUDES(mu_);
  std::optional<std::int64_t> stop_version(std::int64_t job, const std::string& node)
      CORRAL_EXCLUDES(mu_);
  void forget_job(std::int64_t job) CORRAL_EXCLUDES(mu_);
  // The newest assignment version the node's agent says it has applied (0: none); a
  // claim above version(node) is not one of this board's and is ignored.
  void set_applied(const std::string& node, std::int64_t version) CORRAL_EXCLUDES(mu_);
  std::int64_t applied(const std::string& node) CORRAL_EXCLUDES(mu_);
  // A new agent process joined: its predecessor's claims no longer count.
  void forget_applied(const std::string& node) CORRAL_EXCLUDES(mu_);
  // Wakes every waiter; later waits return at once.
  void shutdown() CORRAL_EXCLUDES(mu_);

 private:
  struct Slot {
    std::int64_t version = 0;
    std::int64_t applied = 0;
    std::condition_variable cv;
  };
  Slot& slot(const std::string& node);  // REQUIRES: mu_ held

  std::function<void(const std::set<std::string>&)> on_bump_;
  std::mutex mu_;
  std::int64_t next_ CORRAL_GUARDED_BY(mu_);
  bool shutdown_ CORRAL_GUARDED_BY(mu_) = false;
  std::map<std::string, std::unique_ptr<Slot>> slots_ CORRAL_GUARDED_BY(mu_);
  std::map<std::pair<std::int64_t, std::string>, std::int64_t> stops_ CORRAL_GUARDED_BY(mu_);
};

}  // namespace corral::server
