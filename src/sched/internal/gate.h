// Gate: which GPUs a job may not use right now, because a reservation holds them or the
// first job in line (EASY backfill) is promised them; and the plan kept in step.
//
// A reservation's GPUs are fixed by a stable rule (its named nodes; or whole nodes of
// its type in node-id order, the last one partly, past the GPUs of earlier reservations
// by id whose windows overlap its own) so they do not move between cycles. A reservation
// that is over holds nothing; one that could not get its count that way (earlier ones
// held the whole type) takes what the ended ones gave back.
// Relative to a reservation R with window [start, end), a job J:
//   - that names R: may use only R's GPUs, and only inside the window;
//   - that does not: may use R's GPUs only if it is preemptible, or (before the window)
//     if its max runtime ends before R starts.
// Relative to the backfill head's promised GPUs at time T, a job that would still run at
// T may not use the ones free now.
//
// Jobs that see the same forbidden GPUs share a View; the plan's blocks are changed only
// when the View changes, and a NoFitMemo is kept per View.
//
// Thread safety: needs external synchronization.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sched/internal/plan.h"

namespace corral::sched::detail {

struct View {
  std::vector<bool> forbidden_reservation;  // per reservation
  std::int32_t only_reservation = -1;       // the job names this reservation
  bool shadow_forbidden = false;
  friend auto operator<=>(const View&, const View&) = default;
};

class Gate {
 public:
  Gate(const ClusterSnapshot& s, core::Time now);

  // Where a job stands with its named reservation: empty when fine, else the reason
  // it must wait (unknown reservation, another tenant's, window not open).
  std::string reservation_problem(const JobRequest& r) const;
  std::int32_t reservation_index(const JobRequest& r) const;  // -1 when none or unknown

  // `borrows_promise`: the job may run on the head's promised GPUs though it would still
  // run when the head starts (lend.h, may_borrow_promise).
  View view_for(const JobRequest& r, bool borrows_promise = false) const;
  // Blocks and unblocks GPUs so the plan shows exactly what `view` allows.
  void enter(Plan& plan, const View& view);
  // Per node, the GPUs the current view forbids (free or not).
  const std::vector<std::uint64_t>& forbidden() const { return forbidden_; }
  // Promises `takes` to the head job from `at`; later views may forbid them.
  void set_shadow(const std::vector<Plan::Take>& takes, core::Time at);
  std::optional<core::Time> shadow_at() const { return shadow_at_; }

  // Per node, the GPUs of reservation `ix` (none once it is over).
  const std::vector<std::uint64_t>& reserved(std::int32_t ix) const { return reserved_[ix]; }
  // Per reservation and node, the GPUs each holds at `now` (the rule above); also for check().
  static std::vector<std::vector<std::uint64_t>> reserved_gpus(const ClusterSnapshot& s,
                                                               core::Time now);

  // The view the plan shows now (the last one entered).
  const View& current() const { return current_; }
  // Free GPUs of `type` (in `region`, or anywhere for kAnyRegion) that the current view
  // keeps out of reach because reservations hold them, and those reservations by index:
  // the capacity reason counts them apart.
  struct Held {
    std::int32_t gpus = 0;
    std::vector<std::int32_t> reservations;
  };
  Held held_by_reservations(TypeIx type, RegionIx region) const;

 private:
  std::vector<std::uint64_t> forbidden_mask(const View& view) const;

  const ClusterSnapshot& s_;
  core::Time now_;
  std::vector<std::vector<std::uint64_t>> reserved_;  // [reservation][node]
  std::vector<std::uint64_t> shadow_;                 // [node]
  std::optional<core::Time> shadow_at_;
  // What `view` forbids on node `n` (forbidden_mask()'s entry for n).
  std::uint64_t forbidden_on(const View& view, NodeIx n) const;

  View current_;
  std::vector<std::uint64_t> blocked_;    // [node] what the plan has blocked now
  std::vector<std::uint64_t> forbidden_;  // [node] what the current view forbids
  // Nodes holding GPUs of some reservation or of the shadow, in index order: unless a
  // view names a reservation (which forbids every other GPU), only these can be forbidden
  // or blocked, so enter() visits only them (a fleet-wide pass per job was a tenth of a
  // cycle on a 1,358-node fleet, with backfill switching views job by job).
  std::vector<NodeIx> gated_;
};

}  // namespace corral::sched::detail
