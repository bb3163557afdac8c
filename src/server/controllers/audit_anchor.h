// AuditAnchor: the audit chain's head, MACed with a key outside the database (key_ring.h)
// and appended to a file outside it (DATA_DIR/audit.anchor, mode 0600), and optionally
// to syslog. The chain alone (audit.h) shows an edit, a gap or a reordering, but not the
// newest entries deleted together with a head rewritten to the last one left: the anchor
// shows that, since it names a later entry, with a hash the database no longer has, under
// a MAC no one without the key can forge.
//
//   v1 <seq> <hash> <time ms> <key id> <hmac-sha256 of "v1|seq|hash|time ms">
//
// A write that commits pokes the anchor (RequestPipeline::on_committed); its thread then
// reads the head and appends a line, coalescing bursts, so only entries of the last few
// milliseconds could go unanchored. It also looks every kIdle, for entries that other
// replicas or corrald itself wrote. Each replica anchors into its own file.
//
// Thread safety: poke() and read() from any thread; start() and stop() from one.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/result.h"
#include "server/base/key_ring.h"
#include "server/base/thread_annotations.h"
#include "server/controllers/audit.h"
#include "store/store.h"

namespace corral::server {

struct AnchorLine {
  std::int64_t seq = 0;
  std::string hash;
  core::Time time;
  std::string key_id;
  std::string mac;
  int line = 0;  // in the file, from 1
};

class AuditAnchor {
 public:
  static constexpr core::Duration kIdle = core::seconds(10);

  AuditAnchor(store::Store& store, const core::Clock& clock, const KeyRing& keys, std::string path,
              bool syslog);
  ~AuditAnchor() { stop(); }
  AuditAnchor(const AuditAnchor&) = delete;
  AuditAnchor& operator=(const AuditAnchor&) = delete;

  void start();
  // Anchors what is there now, then ends the thread.
  void stop() CORRAL_EXCLUDES(mu_);
  void poke() CORRAL_EXCLUDES(mu_);
  // Anchors the head now, on the caller's thread.
  core::Status anchor_now() CORRAL_EXCLUDES(write_mu_);

  // Every line of the file; InvalidArgument naming the line for one that does not parse.
  core::Result<std::vector<AnchorLine>> read() const;
  const std::string& path() const { return path_; }

 private:
  void run() CORRAL_EXCLUDES(mu_);

  store::Store& store_;
  const core::Clock& clock_;
  const KeyRing& keys_;
  const std::string path_;
  const bool syslog_;
  std::mutex write_mu_;
  std::int64_t anchored_seq_ CORRAL_GUARDED_BY(write_mu_) = -1;  // -1: read the file first
  std::mutex mu_;
  std::condition_variable cv_;
  bool dirty_ CORRAL_GUARDED_BY(mu_) = false;
  bool stop_ CORRAL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

// Checks the anchor lines against the chain read in seq order (rows; verify_audit_chain
// has passed): each line's MAC, its order in the file, and that the chain still holds
// its entry with its hash. The first problem found, as an AuditVerdict.
AuditVerdict verify_anchors(const std::vector<store::AuditRow>& rows,
                            const std::vector<AnchorLine>& lines, const KeyRing& keys);

// The whole check: the chain, its head, and the anchor file when there is one.
core::Result<AuditVerdict> verify_audit_anchored(store::Store& store, const AuditAnchor* anchor,
                                                 const KeyRing& keys);

}  // namespace corral::server
