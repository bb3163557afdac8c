#include "sched/internal/gate.h"

#include <algorithm>
#include <bit>

#include "core/units.h"
#include "sched/internal/text.h"

namespace corral::sched::detail {
namespace {

bool windows_overlap(const core::Reservation& a, const core::Reservation& b) {
  return a.start < b.end && b.start < a.end;
}

// Whole nodes of `type` in node-id order (the last one partly) for `res.count` GPUs,
// leaving out the GPUs in `taken`.
std::vector<std::uint64_t> pick_count(const ClusterSnapshot& s, const core::Reservation& res,
                                      TypeIx type, const std::vector<std::uint64_t>& taken) {
  std::vector<std::uint64_t> out(s.nodes().size(), 0);
  std::int32_t left = res.count;
  for (NodeIx n = 0; n < static_cast<NodeIx>(s.nodes().size()) && left > 0; ++n) {
    if (s.topo()[n].type != type) continue;
    std::uint64_t avail = s.topo()[n].all_mask & ~taken[n];
    while (avail != 0 && left > 0) {
      const std::uint64_t bit = avail & (~avail + 1);
      out[n] |= bit;
      avail &= ~bit;
      --left;
    }
  }
  return out;
}

std::int32_t gpus_in(const std::vector<std::uint64_t>& masks) {
  std::int32_t n = 0;
  for (std::uint64_t m : masks) n += std::popcount(m);
  return n;
}

}  // namespace

std::vector<std::vector<std::uint64_t>> Gate::reserved_gpus(const ClusterSnapshot& s,
                                                            core::Time now) {
  const auto& reservations = s.reservations();
  const std::size_t nodes = s.nodes().size();
  std::vector<std::vector<std::uint64_t>> out(reservations.size(),
                                              std::vector<std::uint64_t>(nodes, 0));
  for (std::size_t r = 0; r < reservations.size(); ++r) {
    const core::Reservation& res = reservations[r];
    if (!res.nodes.empty()) {
      for (const core::NodeId& id : res.nodes) {
        if (const auto n = s.find_node(id)) out[r][*n] = s.topo()[*n].all_mask;
      }
      continue;
    }
    const auto type = res.gpu_type ? s.find_type(*res.gpu_type) : std::nullopt;
    if (!type) continue;
    // GPUs of earlier count reservations whose windows overlap this one's; `live_only`
    // leaves out those that are over.
    const auto taken_by_earlier = [&](bool live_only) {
      std::vector<std::uint64_t> taken(nodes, 0);
      for (std::size_t q = 0; q < r; ++q) {
        const core::Reservation& other = reservations[q];
        if (!other.nodes.empty() || !windows_overlap(other, res)) continue;
        if (live_only && now >= other.end) continue;
        for (std::size_t n = 0; n < nodes; ++n) taken[n] |= out[q][n];
      }
      return taken;
    };
    // The set that ignores `now` is the stable one: it stays put while the reservations
    // before it end. Only a reservation that could not get its count that way takes what
    // the ended ones gave back.
    out[r] = pick_count(s, res, *type, taken_by_earlier(false));
    if (gpus_in(out[r]) < res.count) out[r] = pick_count(s, res, *type, taken_by_earlier(true));
  }
  // A reservation that is over holds nothing.
  for (std::size_t r = 0; r < reservations.size(); ++r) {
    if (now >= reservations[r].end) std::fill(out[r].begin(), out[r].end(), 0);
  }
  return out;
}

Gate::Gate(const ClusterSnapshot& s, core::Time now)
    : s_(s),
      now_(now),
      reserved_(reserved_gpus(s, now)),
      shadow_(s.nodes().size(), 0),
      blocked_(s.nodes().size(), 0),
      forbidden_(s.nodes().size(), 0) {
  current_.forbidden_reservation.assign(s.reservations().size(), false);
  for (NodeIx n = 0; n < static_cast<NodeIx>(s.nodes().size()); ++n) {
    if (std::any_of(reserved_.begin(), reserved_.end(),
                    [&](const std::vector<std::uint64_t>& r) { return r[n] != 0; })) {
      gated_.push_back(n);
    }
  }
}

std::int32_t Gate::reservation_index(const JobRequest& r) const {
  if (!r.reservation) return -1;
  const auto& list = s_.reservations();
  const auto it = std::lower_bound(
      list.begin(), list.end(), *r.reservation,
      [](const core::Reservation& res, const core::ReservationId& id) { return res.id < id; });
  if (it == list.end() || it->id != *r.reservation) return -1;
  return static_cast<std::int32_t>(it - list.begin());
}

std::string Gate::reservation_problem(const JobRequest& r) const {
  if (!r.reservation) return {};
  const std::int32_t ix = reservation_index(r);
  if (ix < 0) return cat("reservation: no reservation named ", r.reservation->value);
  const core::Reservation& res = s_.reservations()[ix];
  if (res.tenant != r.tenant) {
    return cat("reservation: ", res.id.value, " belongs to tenant ", res.tenant.value);
  }
  if (now_ < res.start) {
    return cat("reservation: ", res.id.value, " opens at ", core::instant_text(res.start));
  }
  if (now_ >= res.end) return cat("reservation: ", res.id.value, " has ended");
  return {};
}

View Gate::view_for(const JobRequest& r, bool borrows_promise) const {
  View v;
  if (s_.reservations().empty() && !shadow_at_) return v;  // the common case: nothing gated
  v.forbidden_reservation.assign(s_.reservations().size(), false);
  v.only_reservation = reservation_index(r);
  for (std::size_t i = 0; i < s_.reservations().size(); ++i) {
    const core::Reservation& res = s_.reservations()[i];
    if (static_cast<std::int32_t>(i) == v.only_reservation || now_ >= res.end || r.preemptible) {
      continue;
    }
    const bool overlaps = res.active_at(now_) || now_ + r.max_runtime > res.start;
    v.forbidden_reservation[i] = overlaps;
  }
  v.shadow_forbidden =
      shadow_at_.has_value() && now_ + r.max_runtime > *shadow_at_ && !borrows_promise;
  return v;
}

Gate::Held Gate::held_by_reservations(TypeIx type, RegionIx region) const {
  Held out;
  if (std::none_of(current_.forbidden_reservation.begin(), current_.forbidden_reservation.end(),
                   [](bool f) { return f; })) {
    return out;
  }
  std::vector<bool> named(s_.reservations().size(), false);
  for (NodeIx n : gated_) {
    if (s_.topo()[n].type != type) continue;
    if (region != kAnyRegion && s_.topo()[n].region != region) continue;
    std::uint64_t mask = 0;
    for (std::size_t r = 0; r < current_.forbidden_reservation.size(); ++r) {
      if (!current_.forbidden_reservation[r]) continue;
      const std::uint64_t part = blocked_[n] & reserved_[r][n];
      if (part == 0) continue;
      named[r] = true;
      mask |= part;
    }
    out.gpus += std::popcount(mask);
  }
  for (std::size_t r = 0; r < named.size(); ++r) {
    if (named[r]) out.reservations.push_back(static_cast<std::int32_t>(r));
  }
  return out;
}

void Gate::set_shadow(const std::vector<Plan::Take>& takes, core::Time at) {
  std::fill(shadow_.begin(), shadow_.end(), 0);
  for (const Plan::Take& t : takes) shadow_[t.node] |= t.mask;
  shadow_at_ = at;
  // Nodes of an earlier shadow stay gated: they may still be blocked.
  for (const Plan::Take& t : takes) gated_.push_back(t.node);
  std::sort(gated_.begin(), gated_.end());
  gated_.erase(std::unique(gated_.begin(), gated_.end()), gated_.end());
}

std::uint64_t Gate::forbidden_on(const View& view, NodeIx n) const {
  std::uint64_t mask = 0;
  for (std::size_t r = 0; r < view.forbidden_reservation.size(); ++r) {
    if (view.forbidden_reservation[r]) mask |= reserved_[r][n];
  }
  if (view.only_reservation >= 0) {
    mask |= s_.topo()[n].all_mask & ~reserved_[view.only_reservation][n];
  }
  if (view.shadow_forbidden) mask |= shadow_[n];
  return mask;
}

std::vector<std::uint64_t> Gate::forbidden_mask(const View& view) const {
  std::vector<std::uint64_t> mask(s_.nodes().size(), 0);
  for (std::size_t r = 0; r < view.forbidden_reservation.size(); ++r) {
    if (!view.forbidden_reservation[r]) continue;
    for (std::size_t n = 0; n < mask.size(); ++n) mask[n] |= reserved_[r][n];
  }
  if (view.only_reservation >= 0) {
    for (std::size_t n = 0; n < mask.size(); ++n) {
      mask[n] |= s_.topo()[n].all_mask & ~reserved_[view.only_reservation][n];
    }
  }
  if (view.shadow_forbidden) {
    for (std::size_t n = 0; n < mask.size(); ++n) mask[n] |= shadow_[n];
  }
  return mask;
}

void Gate::enter(Plan& plan, const View& view) {
  if (view == current_) return;
  if (view.only_reservation < 0 && current_.only_reservation < 0) {
    // Neither view names a reservation: outside gated_ nothing is forbidden or blocked
    // under either, so the same passes as below over gated_ alone give the same plan.
    std::vector<Plan::Take> to_unblock, to_block;
    for (NodeIx n : gated_) {
      const std::uint64_t drop = blocked_[n] & ~forbidden_on(view, n);
      if (drop != 0) to_unblock.push_back({n, drop});
      blocked_[n] &= ~drop;
    }
    plan.unblock(to_unblock);
    for (NodeIx n : gated_) {
      forbidden_[n] = forbidden_on(view, n);
      const std::uint64_t add = forbidden_[n] & ~blocked_[n] & plan.free_mask(n);
      if (add != 0) to_block.push_back({n, add});
      blocked_[n] |= add;
    }
    plan.block(to_block);
    current_ = view;
    return;
  }
  const std::vector<std::uint64_t> want = forbidden_mask(view);
  std::vector<Plan::Take> to_unblock, to_block;
  for (NodeIx n = 0; n < static_cast<NodeIx>(want.size()); ++n) {
    const std::uint64_t drop = blocked_[n] & ~want[n];
    if (drop != 0) to_unblock.push_back({n, drop});
    blocked_[n] &= ~drop;
  }
  plan.unblock(to_unblock);
  for (NodeIx n = 0; n < static_cast<NodeIx>(want.size()); ++n) {
    const std::uint64_t add = want[n] & ~blocked_[n] & plan.free_mask(n);
    if (add != 0) to_block.push_back({n, add});
    blocked_[n] |= add;
  }
  plan.block(to_block);
  current_ = view;
  forbidden_ = want;
}

}  // namespace corral::sched::detail
