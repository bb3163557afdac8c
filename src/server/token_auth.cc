#include "server/token_auth.h"

#include <optional>
#include <string_view>
#include <utility>

#include "server/crypto.h"

namespace corral::server {

namespace {

core::Status unauthenticated(std::string m) {
  return core::Status(core::StatusCode::kUnauthenticated, std::move(m));
}

}  // namespace

core::Result<Principal> TokenAuth::authenticate(const std::string& authorization) {
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.empty()) return unauthenticated("missing bearer token");
  if (!authorization.starts_with(kBearer) || authorization.size() > 512) {
    return unauthenticated("the Authorization header must be \"Bearer <token>\"");
  }
  const std::string hash = sha256_hex(authorization.substr(kBearer.size()));
  {
    std::lock_guard lock(mu_);
    if (auto it = principals_.find(hash); it != principals_.end()) return it->second;
  }
  std::optional<store::TokenRow> row;
  const core::Status transacted = store_.read([&](store::Tx& tx) {
    CORRAL_ASSIGN_OR_RETURN(row, tx.find_token(hash));
    return core::Status();
  });
  if (!transacted.ok()) return transacted;
  if (!row) return unauthenticated("unknown token");
  const auto role = parse_role(row->role);
  if (!role.ok()) {
    return core::Status(core::StatusCode::kDataLoss,
                        "token " + hash.substr(0, 12) + ": " + role.status().message());
  }
  Principal p{
      .id = "token:" + hash.substr(0, 12), .role = *role, .tenant = row->tenant, .node = row->node};
  std::lock_guard lock(mu_);
  principals_[hash] = p;
  return p;
}

}  // namespace corral::server
