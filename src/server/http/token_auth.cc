#include "server/http/token_auth.h"

#include <string_view>
#include <utility>

#include "core/units.h"
#include "server/base/crypto.h"

namespace corral::server {

namespace {

core::Status unauthenticated(std::string m) {
  return core::Status(core::StatusCode::kUnauthenticated, std::move(m));
}

}  // namespace

// One store read; the last use is written here too when it is older than kTouchEvery.
core::Result<TokenAuth::Cached> TokenAuth::load(const std::string& hash, core::Time now) {
  std::optional<store::TokenRow> row;
  const core::Status read = store_.read([&](store::Tx& tx) {
    CORRAL_ASSIGN_OR_RETURN(row, tx.security().find_token(hash));
    return core::Status();
  });
  if (!read.ok()) return read;
  if (!row) return unauthenticated("unknown token");
  if (row->revoked_at) {
    return unauthenticated("token " + row->name + " was revoked " +
                           core::format_utc(*row->revoked_at));
  }
  const auto role = parse_role(row->role);
  if (!role.ok()) {
    return core::Status(core::StatusCode::kDataLoss,
                        "token " + row->name + ": " + role.status().message());
  }
  Cached c{.who = {.id = principal_id(row->name),
                   .role = *role,
                   .tenant = row->tenant,
                   .node = row->node,
                   .owner = row->owner},
           .name = row->name,
           .expires_at = row->expires_at,
           .checked_at = now,
           .touched_at = row->last_used_at.value_or(core::Time())};
  return c;
}

core::Result<Principal> TokenAuth::authenticate(const std::string& authorization) {
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.empty()) return unauthenticated("missing bearer token");
  if (!authorization.starts_with(kBearer) || authorization.size() > 512) {
    return unauthenticated("the Authorization header must be \"Bearer <token>\"");
  }
  const std::string hash = sha256_hex(authorization.substr(kBearer.size()));
  const core::Time now = clock_.now();
  std::optional<Cached> cached;
  {
    std::lock_guard lock(mu_);
    if (auto it = cache_.find(hash); it != cache_.end() && now - it->second.checked_at < kRecheck)
      cached = it->second;
  }
  if (!cached) {
    auto loaded = load(hash, now);
    if (!loaded.ok()) {
      std::lock_guard lock(mu_);
      cache_.erase(hash);
      return loaded.status();
    }
    cached = std::move(*loaded);
  }
  if (cached->expires_at && *cached->expires_at <= now) {
    return unauthenticated("token " + cached->name + " expired " +
                           core::format_utc(*cached->expires_at));
  }
  // A failed touch costs only the last-use figure, never the call.
  const bool touch = now - cached->touched_at >= kTouchEvery;
  if (touch) {
    cached->touched_at = now;
    (void)store_.transact([&](store::Tx& tx) { return tx.security().touch_token(hash, now); });
  }
  std::lock_guard lock(mu_);
  cache_[hash] = *cached;
  return cached->who;
}

void TokenAuth::forget(const std::string& hash) {
  std::lock_guard lock(mu_);
  cache_.erase(hash);
}

}  // namespace corral::server
