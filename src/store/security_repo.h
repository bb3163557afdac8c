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
#include <vector>

#include "core/result.h"
#include "core/status.h"
#include "core/time.h"

namespace corral::store {

struct TokenRow {
  std::string hash;  // hex SHA-256 of the bearer token; the token itself is never stored
  std::string role;  // "admin", "member", "agent" (parsed by server/base/role.h)
  std::string tenant;
  std::string node;
  core::Time created_at;
  std::string name;   // unique; insert_token names an unnamed row "token-<hash prefix>"
  std::string owner;  // who it was made for: free text, e.g. an email
  std::optional<core::Time> expires_at;
  std::optional<core::Time> last_used_at;  // touched at most once a minute (token_auth.h)
  std::optional<core::Time> revoked_at;
  std::string revoked_by;
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

// A key that seals job secrets, as stored: wrapped under a key-encryption key that is
// not in the database (server/base/key_material.h).
struct DataKeyRow {
  std::string id;
  std::string kek_id;           // the key file's key that wraps it
  std::string kek_fingerprint;  // of that key: names it without revealing it
  std::string wrapped;
  core::Time created_at;
};

class SecurityRepo {
 public:
  virtual ~SecurityRepo() = default;

  // AlreadyExists when its name is taken.
  virtual core::Status insert_token(const TokenRow& row) = 0;
  virtual core::Result<std::optional<TokenRow>> find_token(std::string_view hash) = 0;
  virtual core::Result<std::optional<TokenRow>> find_token_by_name(std::string_view name) = 0;
  // Tokens named after `after`, by name, at most `limit`.
  virtual core::Result<std::vector<TokenRow>> list_tokens(std::string_view after,
                                                          std::int32_t limit) = 0;
  virtual core::Result<std::int64_t> count_tokens() = 0;
  // Sets revoked_at and revoked_by unless already revoked (the first revocation stands).
  virtual core::Status revoke_token(std::string_view name, core::Time at, std::string_view by) = 0;
  virtual core::Status touch_token(std::string_view hash, core::Time at) = 0;
  virtual core::Result<std::optional<IdempotencyRow>> get_idempotency(std::string_view scope,
                                                                      std::string_view key) = 0;
  // AlreadyExists when (scope, key) is taken, e.g. by a concurrent first attempt.
  virtual core::Status put_idempotency(const IdempotencyRow& row) = 0;

  // Data keys, by id. insert_data_key() is false (and writes nothing) when the id is
  // taken, e.g. by another replica starting at the same moment; rewrap_data_key()
  // replaces the wrapping of an existing key (its kek_id, fingerprint and wrapped text).
  virtual core::Result<std::vector<DataKeyRow>> list_data_keys() = 0;
  virtual core::Result<bool> insert_data_key(const DataKeyRow& row) = 0;
  virtual core::Status rewrap_data_key(const DataKeyRow& row) = 0;
};

}  // namespace corral::store
