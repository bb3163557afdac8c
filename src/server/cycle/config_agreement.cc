#include "server/cycle/config_agreement.h"

#include <nlohmann/json.hpp>

#include "cycle/capture.h"
#include "server/base/crypto.h"

namespace corral::server {

using nlohmann::json;

SchedConfigIdentity sched_config_identity(const SchedLoopOptions& sched, const ShardMap& shards) {
  // decide()'s knobs as the cycle file writes them: every field, by name, defaults
  // included, so the fingerprint cannot miss a knob added later.
  const json knobs = json::parse(cycle::to_json({.config = sched.config}))["config"];
  json shard_list = json::array();
  std::string names;
  for (const auto& s : shards.shards()) {
    json types = json::array();
    for (const auto& t : s.gpu_types) types.push_back(t.value);
    shard_list.push_back({{"name", s.name},
                          {"region", s.region},
                          {"gpuTypes", types},
                          {"leaves", s.leaves},
                          {"minGpus", s.min_gpus}});
    names += (names.empty() ? "" : ", ") + s.name;
  }
  const json canonical = {{"scheduler", knobs},
                          {"batchWindowMs", core::to_ms(sched.batch_window)},
                          {"tickMs", core::to_ms(sched.tick)},
                          {"shards", shard_list}};
  // nlohmann::json keeps object keys sorted: one text per config.
  return {.fingerprint = sha256_hex(canonical.dump()), .summary = "shards " + names};
}

ConfigVerdict judge_config(const std::optional<store::SchedConfigRow>& stored,
                           const SchedConfigIdentity& mine,
                           const std::vector<store::ReplicaRow>& replicas, std::string_view me,
                           core::Time now) {
  if (!stored) return {.kind = ConfigVerdict::Kind::kStore};
  if (stored->fingerprint == mine.fingerprint) return {.kind = ConfigVerdict::Kind::kAgree};
  std::string holders;
  for (const auto& r : replicas) {
    if (r.name == me || r.expires_at <= now || r.config_fingerprint != stored->fingerprint) {
      continue;
    }
    holders += (holders.empty() ? "" : ", ") + r.name;
  }
  if (holders.empty())
    return {.kind = ConfigVerdict::Kind::kStore, .expected = stored->fingerprint};
  return {.kind = ConfigVerdict::Kind::kRefuse,
          .problem = "scheduling config " + mine.fingerprint.substr(0, 12) + " (" + mine.summary +
                     ") differs from config " + stored->fingerprint.substr(0, 12) + " (" +
                     stored->summary + ") that live replicas " + holders +
                     " schedule under, so this replica takes no lease: give it the same "
                     "scheduler and shards sections, or restart those replicas with this "
                     "config (docs/scale-out.md)"};
}

}  // namespace corral::server
