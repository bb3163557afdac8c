// Config agreement: every replica on one database schedules under the same scheduling
// config (docs/scale-out.md, "One config"). Two replicas with different `shards` would
// route and place the same jobs by different rules, each under leases the other does
// not know of.
//
// The scheduling config is the `scheduler` section (decide()'s knobs and the loop's) and
// the `shards` section, after defaults are filled in. Its fingerprint is stored in the
// database (sched_config) and in each replica's row. Every lease round judges:
//
//   nothing stored ────────────────────────────> store mine, agree
//   stored == mine ────────────────────────────> agree
//   stored != mine, another live replica runs it > refuse: take and hold no lease
//   stored != mine, no live replica runs it ────> replace it with mine, agree
//
// So a config change rolls: replicas restarted with the new file wait, the old ones keep
// scheduling, and once the last replica of the old config is gone the next round of a
// new one stores the new config and they all schedule again. Two configs never schedule
// at once.
//
// Thread safety: stateless functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/time.h"
#include "server/cycle/sched_loop.h"
#include "server/cycle/shard_map.h"
#include "store/store.h"

namespace corral::server {

struct SchedConfigIdentity {
  std::string fingerprint;  // hex SHA-256 of the canonical JSON
  std::string summary;      // "shards a, b, c", for people
};

// The identity of the scheduling config `sched` and `shards`. Configs that differ only
// in how they are written (order of keys, a default spelled out) have one fingerprint.
SchedConfigIdentity sched_config_identity(const SchedLoopOptions& sched, const ShardMap& shards);

struct ConfigVerdict {
  enum class Kind { kAgree, kStore, kRefuse };
  Kind kind = Kind::kAgree;
  std::string expected;  // kStore: the stored fingerprint to replace ("": none)
  std::string problem;   // kRefuse: why, in one line, with the fix
};

// The judgement in the header's table. `replicas` are every replica's rows; `me` is this
// replica's name (its own row, from an earlier run, never counts as another).
ConfigVerdict judge_config(const std::optional<store::SchedConfigRow>& stored,
                           const SchedConfigIdentity& mine,
                           const std::vector<store::ReplicaRow>& replicas, std::string_view me,
                           core::Time now);

}  // namespace corral::server
