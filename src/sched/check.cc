#include "sched/check.h"

#include <algorithm>
#include <bit>
#include <map>
#include <set>

#include "core/units.h"
#include "sched/dependencies.h"
#include "sched/internal/gate.h"
#include "sched/internal/lend.h"
#include "sched/internal/place.h"
#include "sched/internal/preempt.h"
#include "sched/internal/running.h"
#include "sched/internal/text.h"

namespace corral::sched {
namespace {

using detail::cat;

std::string gpu_text(const GpuRef& g) { return cat(g.node.value, "/", g.index); }

bool gpu_known(const ClusterSnapshot& s, const GpuRef& g) {
  const auto node = s.find_node(g.node);
  return node && g.index >= 0 && g.index < static_cast<std::int32_t>(s.nodes()[*node].gpus.size());
}

// All checks share this state: who holds each GPU after the decisions are applied.
class Checker {
 public:
  Checker(const ClusterSnapshot& s, const Decisions& d, const SchedulerConfig& config,
          core::Time now)
      : s_(s),
        d_(d),
        config_(config),
        now_(now),
        index_(s),
        reserved_(detail::Gate::reserved_gpus(s, now)) {
    for (std::size_t i = 0; i < s.running().size(); ++i) {
      running_ix_[s.running()[i].request.id] = i;
    }
    for (const PendingJob& p : s.pending()) pending_[p.request.id] = &p;
    for (const RunningJob& r : s.running()) running_[r.request.id] = &r;
    for (const Placement& p : d.placements) placed_[p.job] = &p;
  }

  std::vector<std::string> run() {
    decided_once();
    victims();
    resizes();
    placements();
    limits();
    reservations_and_backfill();
    return std::move(bad_);
  }

 private:
  void fail(std::string message) { bad_.push_back(std::move(message)); }

  // 1. Every pending job is decided exactly once, and only pending jobs are.
  void decided_once() {
    std::map<core::JobId, int> seen;
    for (const Placement& p : d_.placements) seen[p.job]++;
    for (const Pending& p : d_.pending) seen[p.job]++;
    for (const Abandoned& a : d_.abandoned) seen[a.job]++;
    for (const auto& [job, count] : seen) {
      if (!pending_.count(job)) fail(cat("job ", job.value, " is not pending"));
      if (count > 1) fail(cat("job ", job.value, " decided ", count, " times"));
    }
    for (const auto& [job, p] : pending_) {
      if (!seen.count(job)) fail(cat("job ", job.value, " got no decision"));
    }
    std::int32_t in_line = 0;
    for (size_t i = 0; i < d_.pending.size(); ++i) {
      const std::int32_t expected = out_of_line(d_.pending[i].kind) ? 0 : ++in_line;
      if (d_.pending[i].position != expected) {
        fail(cat("pending job ", d_.pending[i].job.value, " has position ", d_.pending[i].position,
                 ", expected ", expected));
      }
      if (d_.pending[i].reason.empty()) {
        fail(cat("pending job ", d_.pending[i].job.value, " has no reason"));
      }
    }
  }

  // The placement made for `for_job`, if it waits for `victim` and uses one of `freed`.
  void expect_used(const core::JobId& victim, const core::JobId& for_job,
                   const std::vector<GpuRef>& freed, const char* what) {
    const auto it = placed_.find(for_job);
    if (it == placed_.end()) {
      fail(cat(what, " of job ", victim.value, " for job ", for_job.value,
               ", which was not placed (useless)"));
      return;
    }
    const Placement& p = *it->second;
    if (std::find(p.waits_for.begin(), p.waits_for.end(), victim) == p.waits_for.end()) {
      fail(cat("job ", for_job.value, " does not wait for job ", victim.value));
    }
    const bool uses = std::any_of(freed.begin(), freed.end(), [&](const GpuRef& g) {
      return std::find(p.gpus.begin(), p.gpus.end(), g) != p.gpus.end();
    });
    if (!uses) {
      fail(cat(what, " of job ", victim.value, " frees no GPU that job ", for_job.value,
               " uses (useless)"));
    }
  }

  // Common protections of a job asked to give up GPUs.
  const RunningJob* victim_of(const core::JobId& job, const char* what) {
    const auto it = running_.find(job);
    if (it == running_.end()) {
      fail(cat(what, " of job ", job.value, ", which is not running"));
      return nullptr;
    }
    if (!touched_.insert(job).second) fail(cat("job ", job.value, " touched twice"));
    const RunningJob& v = *it->second;
    if (v.stopping) fail(cat(what, " of job ", job.value, ", which is already stopping"));
    if (now_ - v.started_at < config_.preemption.min_runtime_for(v.request.tier)) {
      fail(cat(what, " of job ", job.value, " before its minimum runtime"));
    }
    return &v;
  }

  // Whether `for_job` names a reservation open now of which `victim` holds a GPU while it
  // runs outside it: preemptible there, or in no reservation at all.
  bool reservation_claim(const RunningJob& victim, const core::JobId& for_job) const {
    const auto pj = pending_.find(for_job);
    if (pj == pending_.end() || !pj->second->request.reservation) return false;
    const core::ReservationId& id = *pj->second->request.reservation;
    if (victim.reservation == id) return false;
    if (!victim.request.preemptible && victim.reservation) return false;
    for (std::size_t i = 0; i < s_.reservations().size(); ++i) {
      const core::Reservation& res = s_.reservations()[i];
      if (res.id != id || !res.active_at(now_)) continue;
      for (const GpuRef& g : victim.gpus) {
        if (gpu_known(s_, g) && ((reserved_[i][*s_.find_node(g.node)] >> g.index) & 1)) {
          return true;
        }
      }
    }
    return false;
  }

  // 2. Preemptions: entitled, protected, and never useless.
  void victims() {
    for (const Preemption& p : d_.preemptions) {
      const RunningJob* v = victim_of(p.victim, "preemption");
      if (v == nullptr) continue;
      // A reservation takes its GPUs back past the cap, and from work that was not
      // preemptible but ran into its window.
      const bool claim = reservation_claim(*v, p.for_job);
      if (v->preemptions >= config_.preemption.max_preemptions_per_job && !claim) {
        fail(cat("preemption of job ", p.victim.value, " past its cap"));
      }
      if (is_session(v->request)) fail(cat("preemption of job ", p.victim.value, ", a session"));
      if (is_share(v->request)) fail(cat("preemption of job ", p.victim.value, ", a share"));
      const bool borrowed = index_.borrowed[running_ix_.at(p.victim)];
      const auto pj = pending_.find(p.for_job);
      // Under fair-share order a tenant's job may pause that tenant's more-served jobs
      // through a checkpoint; its tenant's holding does not grow by it.
      const bool less_served =
          pj != pending_.end() && pj->second->request.tenant == v->request.tenant &&
          detail::less_served_within_tenant(
              config_,
              {.job = pj->second,
               .level = detail::las_level(config_, pj->second->attained_gpu_seconds)},
              *v, now_);
      // A starved job whose promise is due takes GPUs back from work of its tier or below
      // that started after it was queued (it went ahead of it).
      const bool starved = pj != pending_.end() && config_.starvation_age.count() > 0 &&
                           now_ - queued_since(*pj->second) >= config_.starvation_age &&
                           v->started_at > queued_since(*pj->second) &&
                           v->request.tier <= pj->second->request.tier;
      if (!v->request.preemptible && !borrowed && !claim && !less_served && !starved) {
        fail(cat("preemption of job ", p.victim.value,
                 ", neither preemptible nor borrowed nor more served within its tenant nor "
                 "started after the starved job it made room for"));
      }
      if (pj != pending_.end()) {
        const JobRequest& by = pj->second->request;
        // A reservation's job takes its reserved GPUs back from work of any tier.
        if (by.tier < v->request.tier && !by.reservation) {
          fail(
              cat("job ", p.for_job.value, " preempted job ", p.victim.value, " of a higher tier"));
        }
        if (!borrowed && !by.reservation && !less_served && !starved &&
            config_.order != QueueOrder::kAttainedService && by.tier <= v->request.tier) {
          fail(cat("job ", p.for_job.value, " preempted job ", p.victim.value,
                   " of the same tier without reclaiming"));
        }
      }
      for (const GpuRef& g : v->gpus) released_to_[g] = p.for_job;
      expect_used(p.victim, p.for_job, v->gpus, "preemption");
    }
  }

  // 3. Resizes: inside the elastic range; shrink keeps a subset, grow a superset.
  void resizes() {
    // Shrinks for no pending job (the elastic allocator's) make room for growths in the
    // same decision (their GPUs, or a node's CPUs or a rack's power): without any growth
    // they restart jobs for nothing.
    std::vector<core::JobId> to_growth;
    for (const Resize& r : d_.resizes) {
      const RunningJob* v = victim_of(r.job, "resize");
      if (v == nullptr) continue;
      const auto& e = v->request.elastic;
      const auto sizes = detail::allowed_sizes(v->request);
      if (!e || std::find(sizes.begin(), sizes.end(), r.to_gpus) == sizes.end()) {
        fail(cat("job ", r.job.value, " resized to ", r.to_gpus, ", outside its elastic range"));
      }
      if (static_cast<std::int32_t>(r.gpus.size()) != r.to_gpus ||
          r.from_gpus != static_cast<std::int32_t>(v->gpus.size())) {
        fail(cat("job ", r.job.value, " resize counts do not match its GPUs"));
      }
      const std::set<GpuRef> old_set(v->gpus.begin(), v->gpus.end());
      const std::set<GpuRef> new_set(r.gpus.begin(), r.gpus.end());
      if (r.to_gpus < r.from_gpus) {
        std::vector<GpuRef> freed;
        for (const GpuRef& g : old_set) {
          if (!new_set.count(g)) freed.push_back(g);
        }
        if (!std::includes(old_set.begin(), old_set.end(), new_set.begin(), new_set.end())) {
          fail(cat("job ", r.job.value, " shrank onto GPUs it did not hold"));
          continue;
        }
        for (const GpuRef& g : freed) released_to_[g] = r.for_job.value_or(core::JobId(-1));
        if (r.for_job) expect_used(r.job, *r.for_job, freed, "shrink");
        if (!r.for_job) to_growth.push_back(r.job);
      } else {
        if (!std::includes(new_set.begin(), new_set.end(), old_set.begin(), old_set.end())) {
          fail(cat("job ", r.job.value, " grew but dropped GPUs it held"));
        }
        for (const GpuRef& g : new_set) {
          if (!old_set.count(g)) grown_.push_back({r.job, g});
        }
      }
    }
    if (grown_.empty()) {
      for (const core::JobId& job : to_growth) {
        fail(cat("job ", job.value, " shrank for no job, and nothing grew (useless)"));
      }
    }
  }

  void account(const JobRequest& r, const GpuRef& g, NodeIx node, bool new_here) {
    const TypeIx type = s_.topo()[node].type;
    const std::pair<TenantIx, TypeIx> key{*s_.find_tenant(r.tenant), type};
    tenant_used_[key] += gpu_milli_of(r, 1);
    tier_used_[{key.first, r.tier}] += 1;
    node_use_[node].first += r.cpus_per_gpu;
    node_use_[node].second += r.memory_per_gpu_mib;
    // A shared GPU draws its watts once, whatever the shares on it.
    if (!is_share(r) || share_use_[g].milli == 0) {
      rack_watts_[s_.topo()[node].rack] += s_.topo()[node].gpu_watts;
    }
    if (is_share(r)) share(r, g);
    if (new_here) {
      grew_.insert(key);
      tier_grew_.insert({key.first, r.tier});
      touched_nodes_.insert(node);
      touched_racks_.insert(s_.topo()[node].rack);
    }
  }

  // 4. GPU ownership and the shape of every placement.
  void placements() {
    // What stays held: running jobs' GPUs that no preemption or shrink released.
    for (const RunningJob& r : s_.running()) {
      for (const GpuRef& g : r.gpus) {
        if (released_to_.count(g)) continue;
        if (!is_share(r.request)) held_.insert(g);
        account(r.request, g, *s_.find_node(g.node), false);
      }
    }
    for (const auto& [job, g] : grown_) {
      if (!gpu_known(s_, g)) {
        fail(cat("job ", job.value, " grew onto unknown GPU ", gpu_text(g)));
        continue;
      }
      // A growth may take what a re-allocating shrink gave back (released to no job).
      const auto released = released_to_.find(g);
      if (!held_.insert(g).second ||
          (released != released_to_.end() && released->second != core::JobId(-1))) {
        fail(cat("GPU ", gpu_text(g), " given twice"));
      }
      if (share_use_.count(g)) fail(cat("GPU ", gpu_text(g), " given whole while shares hold it"));
      check_usable(cat("job ", job.value), g);
      check_region(cat("job ", job.value), running_.at(job)->request, g);
      account(running_.at(job)->request, g, *s_.find_node(g.node), true);
    }
    for (const Placement& p : d_.placements) {
      const auto it = pending_.find(p.job);
      if (it == pending_.end()) continue;
      const JobRequest& r = it->second->request;
      const std::string job = cat("job ", p.job.value);
      if (!dependencies_met(it->second->dependencies))
        fail(cat(job, " placed before its dependencies"));
      const auto sizes = detail::allowed_sizes(r);
      if (std::find(sizes.begin(), sizes.end(), static_cast<std::int32_t>(p.gpus.size())) ==
          sizes.end()) {
        fail(cat(job, " asked for ", r.gpus, " GPUs but got ", p.gpus.size()));
      }
      if (!r.gpu_types.empty() &&
          std::find(r.gpu_types.begin(), r.gpu_types.end(), p.gpu_type) == r.gpu_types.end()) {
        fail(cat(job, " placed on unacceptable type ", p.gpu_type.value));
      }
      std::map<NodeIx, std::uint64_t> masks;
      bool all_known = true;
      for (const GpuRef& g : p.gpus) {
        if (!gpu_known(s_, g)) {
          fail(cat(job, " placed on unknown GPU ", gpu_text(g)));
          all_known = false;
          continue;
        }
        const auto released = released_to_.find(g);
        if (released != released_to_.end() && released->second != p.job) {
          fail(cat("GPU ", gpu_text(g), " freed for job ", released->second.value, " but given to ",
                   p.job.value));
        }
        if (is_share(r) ? held_.count(g) != 0 : !held_.insert(g).second) {
          fail(cat("GPU ", gpu_text(g), " given twice"));
        }
        if (!is_share(r) && share_use_.count(g)) {
          fail(cat("GPU ", gpu_text(g), " given whole while shares hold it"));
        }
        check_usable(job, g);
        check_region(job, r, g);
        const NodeIx node = *s_.find_node(g.node);
        if (s_.nodes()[node].gpus[g.index].type != p.gpu_type) {
          fail(cat(job, " GPU ", gpu_text(g), " is not of type ", p.gpu_type.value));
        }
        if ((masks[node] & (std::uint64_t{1} << g.index)) != 0) {
          fail(cat(job, " is given GPU ", gpu_text(g), " twice"));
        }
        masks[node] |= std::uint64_t{1} << g.index;
        account(r, g, node, true);
      }
      if (!all_known || masks.empty()) continue;
      std::vector<detail::Plan::Take> takes;
      for (const auto& [node, mask] : masks) takes.push_back({node, mask});
      if (r.gpus_per_node > 0) {
        for (const auto& t : takes) {
          if (std::popcount(t.mask) != r.gpus_per_node) {
            fail(cat(job, " has ", std::popcount(t.mask), " GPUs on ", s_.nodes()[t.node].id.value,
                     ", asked for ", r.gpus_per_node, " per node"));
          }
        }
      }
      if (r.topology.mode == core::TopologyMode::kRequired &&
          !detail::satisfies(s_, takes, r.topology.pack)) {
        fail(cat(job, " requires pack ", core::to_string(r.topology.pack), " but is packed at ",
                 core::to_string(detail::packed_level(s_, takes))));
      }
      const TenantIx tenant = *s_.find_tenant(r.tenant);
      const TypeIx type = s_.topo()[takes[0].node].type;
      const core::Quota& q = s_.tenants()[tenant].quota_for(s_.gpu_types()[type].id);
      if (tenant_used_[{tenant, type}] > q.guaranteed_milli && !p.borrowed) {
        fail(cat(job, " goes beyond its tenant's guarantee but is not marked borrowed"));
      }
      if (is_session(r) && p.borrowed) {
        fail(cat(job, " is a session started beyond its tenant's guarantee"));
      }
    }
  }

  // One more share on `g`: the shares on a GPU add up to at most the whole GPU and its
  // memory.
  void share(const JobRequest& r, const GpuRef& g) {
    ShareUse& use = share_use_[g];
    use.milli += r.gpu_milli;
    use.memory_mib += r.gpu_memory_mib;
    const std::int64_t memory = s_.gpu_types()[s_.topo()[*s_.find_node(g.node)].type].memory_mib;
    if (use.milli > 1000) {
      fail(cat("GPU ", gpu_text(g), " shared past its whole: ", use.milli, "/1000"));
    }
    if (memory > 0 && use.memory_mib > memory) {
      fail(cat("GPU ", gpu_text(g), " memory promised past what it has: ", use.memory_mib, " of ",
               memory, " MiB"));
    }
  }

  void check_usable(const std::string& who, const GpuRef& g) {
    const core::Node& n = s_.nodes()[*s_.find_node(g.node)];
    if (!n.gpus[g.index].healthy) fail(cat(who, " placed on unhealthy GPU ", gpu_text(g)));
    if (n.admin != core::NodeAdminState::kActive) {
      fail(cat(who, " placed on ", core::to_string(n.admin), " node ", n.id.value));
    }
    if (n.lost) fail(cat(who, " placed on lost node ", n.id.value));
  }

  // A job bound to a region gets GPUs there only (its data lives there).
  void check_region(const std::string& who, const JobRequest& r, const GpuRef& g) {
    if (r.region.empty()) return;
    const core::Node& n = s_.nodes()[*s_.find_node(g.node)];
    if (n.labels.region != r.region) {
      fail(cat(who, " of region ", r.region, " placed on ", gpu_text(g), " in region ",
               n.labels.region.empty() ? "(none)" : n.labels.region));
    }
  }

  // 5. Quota, node and rack limits, checked where this decision added something.
  void limits() {
    for (const auto& [key, used] : tenant_used_) {
      if (!grew_.count(key)) continue;
      const core::Tenant& t = s_.tenants()[key.first];
      const core::Quota& q = t.quota_for(s_.gpu_types()[key.second].id);
      if (used > q.max_total_milli()) {
        fail(cat("tenant ", t.id.value, " holds ", core::format_gpu_milli(used), " ",
                 s_.gpu_types()[key.second].id.value, ", past its limit of ",
                 core::format_gpu_milli(q.max_total_milli())));
      }
    }
    // A tenant's priority-class caps (core::Tenant::max_gpus_by_tier).
    for (const auto& [key, used] : tier_used_) {
      if (!tier_grew_.count(key)) continue;
      const core::Tenant& t = s_.tenants()[key.first];
      if (used > t.max_gpus_at(key.second)) {
        fail(cat("tenant ", t.id.value, " holds ", used, " GPUs at tier ", key.second,
                 ", past its class cap of ", t.max_gpus_at(key.second)));
      }
    }
    // Arrays' maxRunning: tasks holding GPUs (stopping ones too) plus the tasks placed.
    std::map<core::JobId, std::pair<std::int32_t, std::int32_t>> tasks;  // held, limit
    for (const RunningJob& r : s_.running()) {
      if (r.request.array) tasks[r.request.array->array].first++;
    }
    for (const Placement& p : d_.placements) {
      const auto it = pending_.find(p.job);
      if (it == pending_.end() || !it->second->request.array) continue;
      const ArrayLimit& a = *it->second->request.array;
      auto& [held, limit] = tasks[a.array];
      limit = a.max_running;
      if (++held > limit && limit > 0) {
        fail(cat("array ", a.array.value, " holds ", held, " tasks' GPUs, past its maxRunning of ",
                 limit));
      }
    }
    for (NodeIx node : touched_nodes_) {
      const core::Node& n = s_.nodes()[node];
      const auto [cpus, mem] = node_use_[node];
      if (n.cpus > 0 && cpus > n.cpus) {
        fail(cat("node ", n.id.value, " CPUs overcommitted: ", cpus, " of ", n.cpus));
      }
      if (n.memory_mib > 0 && mem > n.memory_mib) {
        fail(
            cat("node ", n.id.value, " memory overcommitted: ", mem, " of ", n.memory_mib, " MiB"));
      }
    }
    for (RackIx rack : touched_racks_) {
      const std::int64_t cap = s_.rack_power_cap_watts(rack);
      if (cap > 0 && rack_watts_[rack] > cap) {
        fail(cat("rack ", s_.rack_name(rack), " power ", rack_watts_[rack], " W past its cap ", cap,
                 " W"));
      }
    }
  }

  // 6. Reserved GPUs and the backfill head's promised GPUs.
  void reservations_and_backfill() {
    const auto& reserved = reserved_;
    std::map<GpuRef, const PlannedStart*> promised;  // GPU -> the head's planned start
    for (const PlannedStart& ps : d_.planned_starts) {
      for (const GpuRef& g : ps.gpus) promised[g] = &ps;
    }
    for (const Placement& p : d_.placements) {
      const auto it = pending_.find(p.job);
      if (it == pending_.end()) continue;
      const JobRequest& r = it->second->request;
      for (const GpuRef& g : p.gpus) {
        if (!gpu_known(s_, g)) continue;
        const NodeIx node = *s_.find_node(g.node);
        for (std::size_t i = 0; i < reserved.size(); ++i) {
          const core::Reservation& res = s_.reservations()[i];
          const bool in_it = (reserved[i][node] >> g.index) & 1;
          const bool names_it = r.reservation == res.id;
          if (names_it && (!in_it || !res.active_at(now_) || res.tenant != r.tenant)) {
            fail(cat("job ", p.job.value, " of reservation ", res.id.value, " placed on ",
                     gpu_text(g), " outside it or its window"));
          }
          if (!in_it || names_it || now_ >= res.end || r.preemptible) continue;
          if (res.active_at(now_) || now_ + r.max_runtime > res.start) {
            fail(cat("job ", p.job.value, " holds reserved GPU ", gpu_text(g), " of ", res.id.value,
                     " into its window"));
          }
        }
        const auto head = promised.find(g);
        if (head == promised.end() || now_ + r.max_runtime <= head->second->at) continue;
        const auto head_job = pending_.find(head->second->job);
        if (head_job == pending_.end() ||
            !detail::may_borrow_promise(*it->second, *head_job->second, head->second->at, config_,
                                        now_)) {
          fail(cat("job ", p.job.value, " takes GPU ", gpu_text(g),
                   " promised to the backfill head and would delay it"));
        }
      }
    }
  }

  const ClusterSnapshot& s_;
  const Decisions& d_;
  const SchedulerConfig& config_;
  core::Time now_;
  detail::RunningIndex index_;
  std::vector<std::vector<std::uint64_t>> reserved_;  // Gate::reserved_gpus at now_
  std::map<core::JobId, std::size_t> running_ix_;
  std::map<core::JobId, const PendingJob*> pending_;
  std::map<core::JobId, const RunningJob*> running_;
  std::map<core::JobId, const Placement*> placed_;
  std::set<core::JobId> touched_;
  std::map<GpuRef, core::JobId> released_to_;
  std::vector<std::pair<core::JobId, GpuRef>> grown_;
  std::set<GpuRef> held_;                 // held whole
  std::map<GpuRef, ShareUse> share_use_;  // what shares hold of a GPU
  std::map<std::pair<TenantIx, TypeIx>, std::int64_t> tenant_used_;
  std::set<std::pair<TenantIx, TypeIx>> grew_;
  std::map<std::pair<TenantIx, std::int32_t>, std::int64_t> tier_used_;  // by tenant, tier
  std::set<std::pair<TenantIx, std::int32_t>> tier_grew_;
  std::map<NodeIx, std::pair<std::int64_t, std::int64_t>> node_use_;
  std::map<RackIx, std::int64_t> rack_watts_;
  std::set<NodeIx> touched_nodes_;
  std::set<RackIx> touched_racks_;
  std::vector<std::string> bad_;
};

}  // namespace

std::vector<std::string> check(const ClusterSnapshot& snapshot, const Decisions& decisions,
                               const SchedulerConfig& config, core::Time now) {
  return Checker(snapshot, decisions, config, now).run();
}

}  // namespace corral::sched
