// Bearer tokens to callers, for both API surfaces (the user API and the agent protocol):
// a token is stored only as its SHA-256, and a verified hash is cached, as tokens are
// never revoked in this version.
//
// Thread safety: safe for concurrent use.
#pragma once

#include <map>
#include <mutex>
#include <string>

#include "core/result.h"
#include "server/role.h"
#include "server/thread_annotations.h"
#include "store/store.h"

namespace corral::server {

struct Principal {
  std::string id;  // a stable name for the caller: "token:<hash prefix>"
  Role role = Role::kMember;
  std::string tenant;
  std::string node;
};

class TokenAuth {
 public:
  explicit TokenAuth(store::Store& store) : store_(store) {}
  TokenAuth(const TokenAuth&) = delete;
  TokenAuth& operator=(const TokenAuth&) = delete;

  // The caller an Authorization header names ("Bearer <token>"); Unauthenticated when it
  // is missing, malformed or unknown, DataLoss when its stored role is none corrald
  // knows. One store read on a token's first use.
  core::Result<Principal> authenticate(const std::string& authorization) CORRAL_EXCLUDES(mu_);

 private:
  store::Store& store_;
  std::mutex mu_;
  std::map<std::string, Principal> principals_ CORRAL_GUARDED_BY(mu_);
};

}  // namespace corral::server
