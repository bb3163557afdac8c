// SecurityRepo: bearer tokens (only their hashes) and the idempotency record of mutating
// requests. Both are read on every authenticated or retried API call.
//
// One of the repositories store::Tx is made of (store.h).
// Thread safety: as Tx (used only by the thread running the transaction, only during it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"
#include "core/status.h"
#include "core/time.h"

namespace corral::store {

struct TokenRow {
  std::string hash;  // hex SHA-256 of the bearer token; the token itself is never stored
  std::string role;  // "admin", "member", "agent" (parsed by server/role.h)
  std::string tenant;
  std::string node;
  core::Time created_at;
};

// The first answer to a mutating request, returned again to every retry with the same
// key. `scope` is the caller's identity so keys of different callers never collide.
struct IdempotencyRow {
  std::string scope;
  std::string key;
  std::string request_hash;
  std::int32_t status = 0;
  std::string response_body;
  core::Time created_at;
};

class SecurityRepo {
 public:
  virtual ~SecurityRepo() = default;

  virtual core::Status insert_token(const TokenRow& row) = 0;
  virtual core::Result<std::optional<TokenRow>> find_token(std::string_view hash) = 0;
  virtual core::Result<std::int64_t> count_tokens() = 0;
  virtual core::Result<std::optional<IdempotencyRow>> get_idempotency(std::string_view scope,
                                                                      std::string_view key) = 0;
  // AlreadyExists when (scope, key) is taken, e.g. by a concurrent first attempt.
  virtual core::Status put_idempotency(const IdempotencyRow& row) = 0;
};

}  // namespace corral::store
