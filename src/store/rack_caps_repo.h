// RackCapRepo: racks' power caps, each as one party declared it (an agent at join, or
// the admin config). The scheduler's snapshot takes the caps as racks' power budgets.
// Kept apart from nodes because a cap belongs to a rack and has several declarers.
//
// One of the repositories store::Tx is made of (store.h).
// Thread safety: as Tx (used only by the thread running the transaction, only during it).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/ids.h"
#include "core/result.h"
#include "core/status.h"
#include "core/time.h"

namespace corral::store {

// A rack's power cap as one party declared it.
struct RackCapRow {
  std::string rack;
  std::string declared_by;  // "config" or "node/<id>"
  std::int64_t power_cap_watts = 0;
  core::Time updated_at;
};

class RackCapRepo {
 public:
  virtual ~RackCapRepo() = default;

  // Replaces the cap `row.declared_by` declared for `row.rack`.
  virtual core::Status put_rack_cap(const RackCapRow& row) = 0;
  // Removes every cap declared by `declared_by` (the config's, before it writes its own).
  virtual core::Status delete_rack_caps(std::string_view declared_by) = 0;
  // Every cap, by (rack, declared_by).
  virtual core::Result<std::vector<RackCapRow>> list_rack_caps() = 0;
  // The GPUs held on each of `nodes` now (with an active allocation, every scheduler's; a GPU
  // of shares counts once, as it draws its power once), by node;
  // first it locks the cap rows of `racks` (in name order, until the transaction ends),
  // so two schedulers that place on one capped rack at once count one after the other
  // and the second sees the first's GPUs. SQLite has one writer: there the lock is the
  // transaction itself. A node that holds nothing is absent.
  virtual core::Result<std::map<std::string, std::int64_t>> lock_rack_holdings(
      const std::vector<std::string>& racks, const std::vector<core::NodeId>& nodes) = 0;
};

}  // namespace corral::store
