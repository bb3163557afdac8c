// Bearer tokens to callers, for both API surfaces (the user API and the agent protocol).
// A token is stored only as its SHA-256, with a unique name, an owner, an optional expiry,
// its last use and its revocation (docs/security.md).
//
// A verified token is cached for kRecheck: a revocation on this replica drops it from the
// cache at once (forget), one on another replica takes effect here within kRecheck. Its
// last use is written at most once per kTouchEvery, so a busy token costs no write per
// request.
//
// Thread safety: safe for concurrent use.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "core/clock.h"
#include "core/result.h"
#include "server/base/role.h"
#include "server/base/thread_annotations.h"
#include "store/store.h"

namespace corral::server {

struct Principal {
  std::string id;  // a stable name for the caller: "token:<name>"
  Role role = Role::kMember;
  std::string tenant;
  std::string node;
  std::string owner;  // who the token was made for, as the admin wrote it
};

class TokenAuth {
 public:
  static constexpr core::Duration kRecheck = core::seconds(5);
  static constexpr core::Duration kTouchEvery = core::seconds(60);

  TokenAuth(store::Store& store, const core::Clock& clock) : store_(store), clock_(clock) {}
  TokenAuth(const TokenAuth&) = delete;
  TokenAuth& operator=(const TokenAuth&) = delete;

  // The caller an Authorization header names ("Bearer <token>"); Unauthenticated when it
  // is missing, malformed, unknown, expired or revoked, DataLoss when its stored role is
  // none corrald knows.
  core::Result<Principal> authenticate(const std::string& authorization) CORRAL_EXCLUDES(mu_);

  // Drops a revoked token (by its hash) from the cache.
  void forget(const std::string& hash) CORRAL_EXCLUDES(mu_);

 private:
  struct Cached {
    Principal who;
    std::string name;
    std::optional<core::Time> expires_at;
    core::Time checked_at;
    core::Time touched_at;
  };
  core::Result<Cached> load(const std::string& hash, core::Time now);

  store::Store& store_;
  const core::Clock& clock_;
  std::mutex mu_;
  std::map<std::string, Cached> cache_ CORRAL_GUARDED_BY(mu_);
};

// "token:<name>" for a token row's name.
inline std::string principal_id(const std::string& name) { return "token:" + name; }

// The person behind a caller, as far as corrald knows one: the owner the admin wrote on
// the token, else the token's own id. Tokens carry no verified identity beyond that, so two
// tokens made for one owner are one user (the per-user session limit counts them together).
inline std::string user_of(const Principal& p) { return p.owner.empty() ? p.id : p.owner; }

}  // namespace corral::server
