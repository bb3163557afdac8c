// An alias (production, canary, any name) points at a model version, with a canary share
// for the serving side (docs/models.md#aliases). The rules of a move: production is
// always gated, and an alias once gated stays gated, so a promotion cannot switch its
// own gates off; a move to where the alias already is changes nothing (a retry); a gated
// move needs every gate of the version and of its canary to pass. A rollback goes back
// to where the last move came from, once: a rollback right after a rollback is a retry.
//
// Thread safety: plain values and pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "registry/model.h"

namespace corral::registry {

// The alias every move to is gated, whatever its state says.
inline constexpr std::string_view kProduction = "production";

struct Canary {
  std::string version;
  double weight = 0;  // the share of traffic, in (0, 1)
  friend bool operator==(const Canary&, const Canary&) = default;
};

struct AliasState {
  std::string version;
  std::optional<Canary> canary;
  std::string endpoint;
  bool gated = false;
  friend bool operator==(const AliasState&, const AliasState&) = default;
};

struct AliasMovePlan {
  AliasState next;
  bool retry = false;             // the alias is there already: nothing to write
  std::vector<std::string> gate;  // the versions whose gates must all pass, in order
};

// What a move of `alias` (now at `was`, nullopt when new) to `asked` becomes:
// `asked.gated` asks for gates from now on, and cannot take them away.
AliasMovePlan plan_alias_move(std::string_view alias, const std::optional<AliasState>& was,
                              const AliasState& asked);

// The gates of one version, evaluated for a move.
struct VersionGates {
  std::string version;
  std::vector<GateResult> results;
};

// Ok when every gate passed; FailedPrecondition naming each one that failed.
core::Status judge_move(std::string_view model, std::string_view alias,
                        const std::vector<VersionGates>& gates);

// A move kept in the alias's history: "move" or "rollback", and where it came from
// ("" for the alias's first).
struct AliasMoveRecord {
  std::string kind;
  std::string from_version;
};

// Where a rollback of `alias` (at `now`, with `moves` oldest first) takes it: nullopt
// when the last move was a rollback (a retry); FailedPrecondition when there is no earlier
// version. The canary is dropped: a rollback takes all traffic back.
core::Result<std::optional<AliasState>> plan_rollback(std::string_view model,
                                                      std::string_view alias, const AliasState& now,
                                                      const std::vector<AliasMoveRecord>& moves);

}  // namespace corral::registry
