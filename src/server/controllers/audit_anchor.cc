#include "server/controllers/audit_anchor.h"

#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <syslog.h>
#include <unistd.h>

#include <fmt/format.h>

#include "core/units.h"

namespace corral::server {
namespace {

std::string signed_text(std::int64_t seq, const std::string& hash, core::Time time) {
  return fmt::format("v1|{}|{}|{}", seq, hash, core::to_ms(time));
}

}  // namespace

AuditAnchor::AuditAnchor(store::Store& store, const core::Clock& clock, const KeyRing& keys,
                         std::string path, bool syslog)
    : store_(store), clock_(clock), keys_(keys), path_(std::move(path)), syslog_(syslog) {}

void AuditAnchor::start() {
  {
    std::lock_guard lock(mu_);
    stop_ = false;
    dirty_ = true;  // what the last run left unanchored
  }
  thread_ = std::thread([this] { run(); });
}

void AuditAnchor::stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void AuditAnchor::poke() {
  {
    std::lock_guard lock(mu_);
    dirty_ = true;
  }
  cv_.notify_all();
}

void AuditAnchor::run() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait_for(lock, std::chrono::milliseconds(core::to_ms(kIdle)),
                 [this] { return dirty_ || stop_; });
    const bool last = stop_;
    dirty_ = false;
    lock.unlock();
    if (const core::Status s = anchor_now(); !s.ok()) {
      std::fprintf(stderr, "corrald: audit anchor: %s\n", s.to_string().c_str());
    }
    lock.lock();
    if (last) return;
  }
}

core::Status AuditAnchor::anchor_now() {
  std::lock_guard lock(write_mu_);
  if (anchored_seq_ < 0) {
    CORRAL_ASSIGN_OR_RETURN(const auto lines, read());
    anchored_seq_ = lines.empty() ? 0 : lines.back().seq;
  }
  store::AuditHead head;
  CORRAL_RETURN_IF_ERROR(store_.read([&](store::Tx& tx) {
    CORRAL_ASSIGN_OR_RETURN(head, tx.audit().read_audit_head());
    return core::Status();
  }));
  const std::int64_t seq = head.next_seq - 1;
  if (seq <= anchored_seq_) return core::Status();
  const core::Time now = clock_.now();
  CORRAL_ASSIGN_OR_RETURN(const std::string mac,
                          keys_.audit_mac(signed_text(seq, head.prev_hash, now)));
  const std::string line = fmt::format("v1 {} {} {} {} {}\n", seq, head.prev_hash, core::to_ms(now),
                                       keys_.kek_id(), mac);
  // O_APPEND: a line lands whole at the end, whatever else holds the file open.
  const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return core::Status(core::StatusCode::kUnavailable, "cannot open " + path_);
  const bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) &&
                  ::fdatasync(fd) == 0;
  ::close(fd);
  if (!ok) return core::Status(core::StatusCode::kUnavailable, "cannot append to " + path_);
  if (syslog_) {
    ::syslog(LOG_AUTHPRIV | LOG_NOTICE, "corral audit anchor %s", line.c_str());
  }
  anchored_seq_ = seq;
  return core::Status();
}

core::Result<std::vector<AnchorLine>> AuditAnchor::read() const {
  std::vector<AnchorLine> out;
  std::ifstream in(path_);
  if (!in) return out;  // none yet
  std::string text;
  for (int n = 1; std::getline(in, text); ++n) {
    std::istringstream fields(text);
    std::string version;
    std::int64_t time_ms = 0;
    AnchorLine l{.line = n};
    fields >> version >> l.seq >> l.hash >> time_ms >> l.key_id >> l.mac;
    if (version != "v1" || fields.fail() || l.seq < 1) {
      return core::invalid_argument(path_ + ":" + std::to_string(n), "not an audit anchor line");
    }
    l.time = core::time_from_ms(time_ms);
    out.push_back(std::move(l));
  }
  return out;
}

AuditVerdict verify_anchors(const std::vector<store::AuditRow>& rows,
                            const std::vector<AnchorLine>& lines, const KeyRing& keys) {
  AuditVerdict v;
  v.entries = static_cast<std::int64_t>(rows.size());
  auto bad = [&](std::int64_t seq, std::string why) { return v.failed(seq, std::move(why)); };
  std::int64_t last = 0;
  for (const AnchorLine& l : lines) {
    const std::string where = "anchor line " + std::to_string(l.line);
    const auto mac = keys.audit_mac(signed_text(l.seq, l.hash, l.time), l.key_id);
    if (!mac.ok()) return bad(l.seq, where + ": " + mac.status().message());
    if (*mac != l.mac) return bad(l.seq, where + ": its MAC does not match (the file was edited)");
    if (l.seq < last) return bad(l.seq, where + ": out of order (the file was rearranged)");
    last = l.seq;
    if (l.seq > static_cast<std::int64_t>(rows.size())) {
      return bad(static_cast<std::int64_t>(rows.size()) + 1,
                 "the log ends at entry " + std::to_string(rows.size()) + " but entry " +
                     std::to_string(l.seq) + " was anchored " + core::format_utc(l.time) +
                     ": the newest entries were removed");
    }
    if (rows[static_cast<std::size_t>(l.seq - 1)].hash != l.hash) {
      return bad(l.seq, "entry " + std::to_string(l.seq) + " differs from its hash anchored " +
                            core::format_utc(l.time) + ": it was rewritten");
    }
  }
  return v;
}

core::Result<AuditVerdict> verify_audit_anchored(store::Store& store, const AuditAnchor* anchor,
                                                 const KeyRing& keys) {
  CORRAL_ASSIGN_OR_RETURN(const AuditChain chain, read_audit_chain(store));
  AuditVerdict v = verify_audit_chain(chain.rows, chain.head);
  if (!v.ok || anchor == nullptr) return v;
  CORRAL_ASSIGN_OR_RETURN(const auto lines, anchor->read());
  v = verify_anchors(chain.rows, lines, keys);
  v.anchors = static_cast<std::int64_t>(lines.size());
  return v;
}

}  // namespace corral::server
