// RackCapRepo: racks' power caps, each as one party declared it (an agent at join, or
// the admin config). The scheduler's snapshot takes the caps as racks' power budgets.
// Kept apart from nodes because a cap belongs to a rack and has several declarers.
//
// One of the repositories store::Tx is made of (store.h).
// Thread safety: as Tx (used only by the thread running the transaction, only during it).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

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
};

}  // namespace corral::store
