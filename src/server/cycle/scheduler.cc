#include "server/cycle/scheduler.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <utility>

#include "server/base/log.h"

namespace corral::server {
namespace {

using core::Result;
using core::Status;

constexpr std::string_view kJobsChannel = "corral_jobs";
constexpr std::string_view kWakeChannel = "corral_wake";
constexpr std::string_view kNodesChannel = "corral_nodes";

// "a,b,c" -> {a, b, c}
std::vector<std::string> split(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    const auto comma = text.find(',');
    if (comma != 0) out.emplace_back(text.substr(0, comma));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

// A captured cycle's directory: the shard's own below the default's when there are several.
std::string capture_dir(const std::string& dir, const ShardMap& map, int shard) {
  if (dir.empty() || !map.partitioned()) return dir;
  std::string name = map.shards()[shard].name;
  std::replace(name.begin(), name.end(), '/', '_');
  return dir + "/" + name;
}

}  // namespace

Scheduler::Scheduler(store::Store& store, const core::Clock& clock, Metrics& metrics,
                     const SchedLoopOptions& loop_options, ShardMap shards, ReplicaSettings replica,
                     AssignmentBoard* board, SpecCache* specs)
    : store_(store),
      clock_(clock),
      metrics_(metrics),
      shards_(std::move(shards)),
      replica_(std::move(replica)),
      board_(board),
      identity_(sched_config_identity(loop_options, shards_)),
      sched_config_(loop_options.config) {
  for (int i = 0; i < static_cast<int>(shards_.shards().size()); ++i) {
    SchedLoopOptions o = loop_options;
    o.shard = shards_.shards()[i].name;
    o.holder = replica_.name;
    o.shards = &shards_;
    o.shard_index = i;
    o.capture.dir = capture_dir(loop_options.capture.dir, shards_, i);
    loops_.push_back(
        std::make_unique<SchedLoop>(store, clock, metrics, std::move(o), board, specs));
  }
}

Scheduler::~Scheduler() { stop(); }

Status Scheduler::start(const std::string& store_url, const std::string& address) {
  address_ = address;
  started_at_ = clock_.now();
  listener_ = store::open_listener(
      store_url, {std::string(kJobsChannel), std::string(kWakeChannel), std::string(kNodesChannel)},
      [this](std::string_view channel, std::string_view payload) { on_peer(channel, payload); });
  if (board_ != nullptr && listener_ != nullptr) {
    board_->set_on_bump([this](const std::set<std::string>& nodes) {
      std::string list;
      for (const auto& n : nodes) list += (list.empty() ? "" : ",") + n;
      publish(std::string(kNodesChannel), std::move(list));
    });
  }
  lease_round();  // claim what is free now, so a lone replica schedules from the start
  const auto period = std::max<core::Duration>(core::Duration(10), replica_.lease / 3);
  rounds_.start(period, [this] { lease_round(); });
  return Status();
}

void Scheduler::stop() {
  rounds_.stop();
  release_all();
  // Gone at once rather than when its row lapses: the others' shares no longer count
  // it, and none hands it a lease it would never claim.
  if (row_written_.exchange(false)) {
    const Status gone = store_.transact([&](store::Tx& tx) {
      return tx.scheduler().put_replica({.name = replica_.name,
                                         .address = address_,
                                         .started_at = started_at_,
                                         .expires_at = clock_.now(),
                                         .config_fingerprint = identity_.fingerprint});
    });
    if (!gone.ok()) {
      process_log().write(LogEvent("replica_row_not_expired", LogLevel::kWarn)
                              .add("replica", replica_.name)
                              .add("error", gone.to_string()));
    }
  }
  listener_.reset();
}

void Scheduler::release_all() {
  std::vector<std::pair<std::string, std::int64_t>> held;
  {
    std::lock_guard lock(mu_);
    held.assign(held_.begin(), held_.end());
  }
  for (const auto& [item, epoch] : held) stop_item(item);
  // Released, not left to lapse: a successor (or this replica restarted) takes over now.
  const Status released = store_.transact([&](store::Tx& tx) {
    for (const auto& [item, epoch] : held)
      CORRAL_RETURN_IF_ERROR(tx.scheduler().release_lease(item, epoch));
    return Status();
  });
  if (!released.ok() && !held.empty()) {
    process_log().write(LogEvent("lease_release_failed", LogLevel::kWarn)
                            .add("replica", replica_.name)
                            .add("error", released.to_string()));
  }
}

std::vector<std::string> Scheduler::items() const {
  std::vector<std::string> out;
  for (const auto& s : shards_.shards()) out.push_back(s.name);
  out.emplace_back(kControllers);
  return out;
}

void Scheduler::start_item(const std::string& item, std::int64_t epoch) {
  const int shard = shards_.find(item);
  if (shard >= 0) {
    const Status started = loops_[shard]->start_at(epoch);
    if (!started.ok()) {
      process_log().write(LogEvent("shard_start_failed", LogLevel::kError)
                              .add("shard", item)
                              .add("error", started.to_string()));
    }
  } else {
    controllers_ = true;
    if (on_controllers_) on_controllers_(true);
  }
  process_log().write(
      LogEvent("lease_taken").add("replica", replica_.name).add("lease", item).add("epoch", epoch));
}

void Scheduler::stop_item(const std::string& item) {
  const int shard = shards_.find(item);
  if (shard >= 0) {
    loops_[shard]->stop();
  } else if (controllers_.exchange(false) && on_controllers_) {
    on_controllers_(false);
  }
  std::lock_guard lock(mu_);
  held_.erase(item);
  std::erase(order_, item);
}

void Scheduler::lease_round() {
  const core::Time now = clock_.now();
  const core::Time until = now + replica_.lease;
  std::map<std::string, std::int64_t> held;
  {
    std::lock_guard lock(mu_);
    held = held_;
  }
  // 0. Alive, with this replica's config; does it agree with the stored one?
  // 1. Renew; 2. what the others hold.
  std::set<std::string> lost;
  std::vector<store::LeaseRow> leases;
  std::vector<store::ReplicaRow> replicas;
  std::int64_t live = 0;
  ConfigVerdict verdict;
  std::optional<store::SchedConfigRow> stored;
  const Status renewed = store_.transact([&](store::Tx& tx) {
    lost.clear();
    CORRAL_RETURN_IF_ERROR(
        tx.scheduler().put_replica({.name = replica_.name,
                                    .address = address_,
                                    .started_at = started_at_,
                                    .expires_at = until,
                                    .config_fingerprint = identity_.fingerprint}));
    CORRAL_ASSIGN_OR_RETURN(stored, tx.scheduler().get_sched_config());
    CORRAL_ASSIGN_OR_RETURN(replicas, tx.scheduler().list_replicas());
    verdict = judge_config(stored, identity_, replicas, replica_.name, now);
    if (verdict.kind == ConfigVerdict::Kind::kStore) {
      store::SchedConfigRow mine{.fingerprint = identity_.fingerprint,
                                 .summary = identity_.summary,
                                 .set_by = replica_.name,
                                 .set_at = now};
      CORRAL_ASSIGN_OR_RETURN(const bool stored_mine,
                              tx.scheduler().replace_sched_config(mine, verdict.expected));
      if (stored_mine) {
        stored = mine;
        verdict = {};
      } else {  // another replica stored its config first: judge again next round
        verdict = {.kind = ConfigVerdict::Kind::kRefuse,
                   .problem =
                       "another replica stored its scheduling config at the same "
                       "moment; judging again at the next lease round"};
      }
    }
    if (verdict.kind == ConfigVerdict::Kind::kRefuse) return Status();
    for (const auto& [item, epoch] : held) {
      const Status s = tx.scheduler().renew_lease(item, epoch, until);
      if (store::is_stale_epoch(s)) {
        lost.insert(item);
      } else if (!s.ok()) {
        return s;
      }
    }
    CORRAL_ASSIGN_OR_RETURN(leases, tx.scheduler().list_leases());
    // The replicas that share the leases: the live ones that agree (this one included).
    live = std::count_if(replicas.begin(), replicas.end(), [&](const store::ReplicaRow& r) {
      return r.expires_at > now &&
             (r.name == replica_.name || r.config_fingerprint == identity_.fingerprint);
    });
    return Status();
  });
  const core::Time renewed_at = clock_.now();
  if (!renewed.ok()) {
    // The database is away: nothing can be claimed; the loops' writes are fenced if
    // someone else takes over meanwhile.
    process_log().write(LogEvent("lease_round_failed", LogLevel::kWarn)
                            .add("replica", replica_.name)
                            .add("error", renewed.to_string()));
    return;
  }
  row_written_ = true;
  if (!note_config_verdict(stored, verdict)) return;
  for (const auto& item : lost) {
    ++metrics_.leases_lost;
    process_log().write(LogEvent("lease_lost", LogLevel::kWarn)
                            .add("replica", replica_.name)
                            .add("lease", item)
                            .add("reason", "another replica holds it"));
    stop_item(item);
    held.erase(item);
  }
  // A loop fenced at commit lost its lease too.
  for (int i = 0; i < static_cast<int>(loops_.size()); ++i) {
    const std::string& name = shards_.shards()[i].name;
    if (held.contains(name) && loops_[i]->fenced()) {
      ++metrics_.leases_lost;
      stop_item(name);
      held.erase(name);
    }
  }

  // 3. Claim up to this replica's share; a lease lapsed for a whole round regardless.
  const std::vector<std::string> all = items();
  const auto share = static_cast<std::int64_t>(
      (all.size() + static_cast<std::size_t>(std::max<std::int64_t>(live, 1)) - 1) /
      static_cast<std::size_t>(std::max<std::int64_t>(live, 1)));
  std::map<std::string, const store::LeaseRow*> by_item;
  for (const auto& l : leases) by_item[l.shard] = &l;
  const core::Duration round = std::max<core::Duration>(core::Duration(10), replica_.lease / 3);
  // Replicas start looking at different items, so they rarely race for the same one.
  const std::size_t offset = std::hash<std::string>{}(replica_.name) % all.size();
  for (std::size_t k = 0; k < all.size(); ++k) {
    const std::string& item = all[(offset + k) % all.size()];
    if (held.contains(item)) continue;
    const auto row = by_item.find(item);
    const bool free = row == by_item.end() || row->second->expires_at <= now ||
                      row->second->holder == replica_.name;
    if (!free) continue;
    const bool abandoned = row == by_item.end() || row->second->expires_at + round <= now;
    if (static_cast<std::int64_t>(held.size()) >= share && !abandoned) continue;
    std::optional<std::int64_t> epoch;
    const Status claimed = store_.transact([&](store::Tx& tx) {
      CORRAL_ASSIGN_OR_RETURN(epoch, tx.scheduler().claim_lease(item, replica_.name, now, until));
      return Status();
    });
    if (!claimed.ok() || !epoch) continue;  // another replica was first
    ++metrics_.leases_claimed;
    held[item] = *epoch;
    {
      std::lock_guard lock(mu_);
      held_[item] = *epoch;
      order_.push_back(item);
    }
    start_item(item, *epoch);
  }

  // 4. More than the share (a replica joined): hand the newest claim over, to a replica
  // below its share by name. Merely released, it would look lapsed to every replica at
  // once, and one at its share (or this one) could take it and hand it on again.
  const std::string to = below_share(replicas, leases, share, now);
  if (static_cast<std::int64_t>(held.size()) > share && !to.empty()) {
    std::string item;
    {
      std::lock_guard lock(mu_);
      if (!order_.empty()) item = order_.back();
    }
    if (!item.empty()) {
      const std::int64_t epoch = held[item];
      stop_item(item);
      held.erase(item);
      const Status handed = store_.transact(
          [&](store::Tx& tx) { return tx.scheduler().hand_over_lease(item, epoch, to, until); });
      process_log().write(LogEvent("lease_handed_over")
                              .add("replica", replica_.name)
                              .add("lease", item)
                              .add("to", to)
                              .add("handed", handed.ok()));
    }
  }
  metrics_.shards_held = static_cast<std::int64_t>(held.size());
  // A round that takes longer than the period between rounds puts the leases at risk:
  // say so, with the part the renewal took.
  const core::Duration took = clock_.now() - now;
  if (took > round) {
    process_log().write(LogEvent("lease_round_slow", LogLevel::kWarn)
                            .add("replica", replica_.name)
                            .add("ms", core::to_ms(took))
                            .add("renewMs", core::to_ms(renewed_at - now)));
  }
}

std::string Scheduler::below_share(const std::vector<store::ReplicaRow>& replicas,
                                   const std::vector<store::LeaseRow>& leases, std::int64_t share,
                                   core::Time now) const {
  std::string best;
  std::int64_t fewest = share;
  for (const auto& r : replicas) {  // by name: ties go to the first
    if (r.name == replica_.name || r.expires_at <= now ||
        r.config_fingerprint != identity_.fingerprint) {
      continue;
    }
    const auto holds = std::count_if(leases.begin(), leases.end(), [&](const store::LeaseRow& l) {
      return l.holder == r.name && l.expires_at > now;
    });
    if (holds < fewest) {
      fewest = holds;
      best = r.name;
    }
  }
  return best;
}

bool Scheduler::note_config_verdict(const std::optional<store::SchedConfigRow>& stored,
                                    const ConfigVerdict& verdict) {
  std::string was;
  {
    std::lock_guard lock(mu_);
    was = config_problem_;
    config_problem_ = verdict.problem;
    stored_config_ = stored;
  }
  if (verdict.problem != was) {
    // Logged when the judgement changes, not every round.
    process_log().write(verdict.problem.empty()
                            ? LogEvent("sched_config_agreed")
                                  .add("replica", replica_.name)
                                  .add("config", identity_.fingerprint.substr(0, 12))
                            : LogEvent("sched_config_mismatch", LogLevel::kError)
                                  .add("replica", replica_.name)
                                  .add("problem", verdict.problem));
  }
  if (verdict.kind != ConfigVerdict::Kind::kRefuse) return true;
  release_all();
  metrics_.shards_held = 0;
  return false;
}

std::string Scheduler::config_problem() const {
  std::lock_guard lock(mu_);
  return config_problem_;
}

std::optional<store::SchedConfigRow> Scheduler::stored_config() const {
  std::lock_guard lock(mu_);
  return stored_config_;
}

void Scheduler::publish(std::string channel, std::string payload) {
  if (listener_ != nullptr) listener_->send(std::move(channel), replica_.name + "|" + payload);
}

void Scheduler::on_peer(std::string_view channel, std::string_view payload) {
  if (channel.empty()) {  // the listener reconnected: whatever we missed, read it all
    for (auto& loop : loops_) loop->wake();
    return;
  }
  const auto bar = payload.find('|');
  if (bar == std::string_view::npos || payload.substr(0, bar) == replica_.name) return;
  const std::string_view body = payload.substr(bar + 1);
  if (channel == kJobsChannel) {
    for (const auto& id : split(body)) {
      const auto value = std::strtoll(id.c_str(), nullptr, 10);
      if (value > 0) {
        for (auto& loop : loops_) loop->job_submitted(core::JobId(value));
      }
    }
  } else if (channel == kWakeChannel) {
    for (auto& loop : loops_) body == "capacity" ? loop->capacity_changed() : loop->wake();
  } else if (channel == kNodesChannel && board_ != nullptr) {
    const auto nodes = split(body);
    board_->bump_from_peer({nodes.begin(), nodes.end()});
  }
}

void Scheduler::job_submitted(core::JobId id) {
  for (auto& loop : loops_) loop->job_submitted(id);
  publish(std::string(kJobsChannel), std::to_string(id.value));
}

void Scheduler::capacity_changed() {
  for (auto& loop : loops_) loop->capacity_changed();
  publish(std::string(kWakeChannel), "capacity");
}

void Scheduler::wake() {
  for (auto& loop : loops_) loop->wake();
  publish(std::string(kWakeChannel), "full");
}

std::shared_ptr<const SchedLoop::QueuePositions> Scheduler::queue_positions() const {
  std::vector<std::shared_ptr<const SchedLoop::QueuePositions>> parts;
  for (const auto& loop : loops_) {
    if (auto p = loop->queue_positions()) parts.push_back(std::move(p));
  }
  if (parts.empty()) return nullptr;
  if (parts.size() == 1) return parts.front();
  // Every job read asks for these; merge once per new set of the loops' positions. Job
  // ids are disjoint across shards and each part is sorted by id.
  std::lock_guard lock(merged_mu_);
  if (parts != merged_from_) {
    auto merged = std::make_shared<SchedLoop::QueuePositions>();
    for (const auto& p : parts) {
      SchedLoop::QueuePositions next;
      next.reserve(merged->size() + p->size());
      std::merge(merged->begin(), merged->end(), p->begin(), p->end(), std::back_inserter(next));
      merged->swap(next);
    }
    merged_ = std::move(merged);
    merged_from_ = std::move(parts);
  }
  return merged_;
}

std::shared_ptr<const SchedLoop::TenantShares> Scheduler::tenant_shares() const {
  // Every shard's loop weighs every tenant over the whole store: any one will do.
  for (const auto& loop : loops_) {
    if (auto s = loop->tenant_shares()) return s;
  }
  return nullptr;
}

std::string Scheduler::degraded() const {
  std::map<std::string, std::int64_t> held;
  {
    std::lock_guard lock(mu_);
    held = held_;
  }
  for (const auto& loop : loops_) {
    if (!held.contains(loop->shard())) continue;
    if (std::string e = loop->last_error(); !e.empty()) return "shard " + loop->shard() + ": " + e;
  }
  return "";
}

std::int64_t Scheduler::epoch() const {
  std::lock_guard lock(mu_);
  for (const auto& s : shards_.shards()) {
    if (const auto it = held_.find(s.name); it != held_.end()) return it->second;
  }
  return 0;
}

Result<std::vector<LeaseView>> Scheduler::leases() {
  std::vector<store::LeaseRow> rows;
  CORRAL_RETURN_IF_ERROR(store_.read([&](store::Tx& tx) {
    CORRAL_ASSIGN_OR_RETURN(rows, tx.scheduler().list_leases());
    return Status();
  }));
  std::map<std::string, std::int64_t> held;
  {
    std::lock_guard lock(mu_);
    held = held_;
  }
  std::vector<LeaseView> out;
  for (const auto& item : items()) {
    LeaseView v{.shard = item};
    for (const auto& r : rows) {
      if (r.shard != item) continue;
      v.holder = r.holder;
      v.epoch = r.epoch;
      v.expires_at = r.expires_at;
    }
    const auto h = held.find(item);
    v.mine = h != held.end() && h->second == v.epoch;
    out.push_back(std::move(v));
  }
  return out;
}

Result<std::vector<store::ReplicaRow>> Scheduler::replicas() {
  std::vector<store::ReplicaRow> rows;
  CORRAL_RETURN_IF_ERROR(store_.read([&](store::Tx& tx) {
    CORRAL_ASSIGN_OR_RETURN(rows, tx.scheduler().list_replicas());
    return Status();
  }));
  return rows;
}

}  // namespace corral::server
