// /v1/tokens: named bearer tokens (docs/security.md). The token itself is shown once, in
// the answer that mints it; the store keeps its hash. A token is never deleted, only
// revoked, so its name keeps meaning the same caller in the audit log.
#include <httplib.h>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/job_spec_parse.h"
#include "core/json_object.h"
#include "core/units.h"
#include "server/api/api_routes.h"
#include "server/base/crypto.h"
#include "server/base/http_status.h"
#include "server/base/model_json.h"
#include "server/http/list_page.h"
#include "server/http/token_auth.h"

namespace corral::server {
namespace {

using core::Result;
using core::Status;
using nlohmann::json;

constexpr std::int64_t kMaxLifetimeSeconds = 10LL * 366 * 24 * 3600;

json ms_or_null(const std::optional<core::Time>& t) {
  return t ? json(core::to_ms(*t)) : json(nullptr);
}

json token_json(const store::TokenRow& t) {
  return {{"id", principal_id(t.name)},
          {"name", t.name},
          {"owner", t.owner},
          {"role", t.role},
          {"tenant", t.tenant},
          {"node", t.node},
          {"createdAtMs", core::to_ms(t.created_at)},
          {"expiresAtMs", ms_or_null(t.expires_at)},
          {"lastUsedAtMs", ms_or_null(t.last_used_at)},
          {"revokedAtMs", ms_or_null(t.revoked_at)},
          {"revokedBy", t.revoked_by}};
}

// The request's fields, each checked on its own; who may hold the role is checked after.
Result<store::TokenRow> token_request(const std::string& text, core::Time now) {
  CORRAL_ASSIGN_OR_RETURN(const json body, core::parse_json_object(text));
  store::TokenRow row{.created_at = now};
  for (const auto& [k, v] : body.items()) {
    if (k == "expiresInSeconds") {
      if (!v.is_number_integer() || v.get<std::int64_t>() < 1 ||
          v.get<std::int64_t>() > kMaxLifetimeSeconds) {
        return core::invalid_argument(k, "must be a whole number of seconds from 1 to " +
                                             std::to_string(kMaxLifetimeSeconds) + " (10 years)");
      }
      row.expires_at = now + core::seconds(v.get<std::int64_t>());
      continue;
    }
    std::string* field = k == "role"     ? &row.role
                         : k == "tenant" ? &row.tenant
                         : k == "node"   ? &row.node
                         : k == "name"   ? &row.name
                         : k == "owner"  ? &row.owner
                                         : nullptr;
    if (field == nullptr) return core::invalid_argument(k, "unknown field");
    if (!v.is_string()) return core::invalid_argument(k, "must be a string");
    *field = v.get<std::string>();
  }
  if (!row.name.empty() && (row.name.size() > 63 || !core::is_dns_label(row.name))) {
    return core::invalid_argument(
        "name", "must be a DNS label (lowercase letters, digits and '-', at most 63)");
  }
  if (row.owner.size() > 200) return core::invalid_argument("owner", "must be at most 200 bytes");
  return row;
}

Result<Reply> create_token(ApiContext& api, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(store::TokenRow row, token_request(c.req.body, api.now()));
  const auto parsed = parse_role(row.role);
  if (!parsed.ok() || *parsed == Role::kJoin) {  // join tokens come only from DATA_DIR
    return core::invalid_argument("role", "must be admin, member, agent or metrics");
  }
  if (*parsed == Role::kMember) {
    if (!valid_name(row.tenant)) return core::invalid_argument("tenant", "a member needs a tenant");
    CORRAL_ASSIGN_OR_RETURN(auto t, tx.tenants().get_tenant(core::TenantId(row.tenant)));
    if (!t) return core::invalid_argument("tenant", "unknown tenant \"" + row.tenant + "\"");
  } else if (!row.tenant.empty()) {
    return core::invalid_argument("tenant", "only a member token has a tenant");
  }
  if (*parsed == Role::kAgent) {
    if (!valid_name(row.node)) return core::invalid_argument("node", "an agent needs a node name");
    // A token for a node that does not exist would let its holder register one.
    CORRAL_ASSIGN_OR_RETURN(auto node, tx.nodes().get_node(core::NodeId(row.node)));
    if (!node) return core::invalid_argument("node", "unknown node \"" + row.node + "\"");
  } else if (!row.node.empty()) {
    return core::invalid_argument("node", "only an agent token has a node");
  }
  const std::string token = new_token();
  row.hash = sha256_hex(token);
  if (row.name.empty()) row.name = row.role + "-" + row.hash.substr(0, 8);
  CORRAL_ASSIGN_OR_RETURN(auto taken, tx.security().find_token_by_name(row.name));
  if (taken) {
    return Status(core::StatusCode::kAlreadyExists,
                  "a token named " + row.name + " exists (names are never reused)");
  }
  CORRAL_RETURN_IF_ERROR(tx.security().insert_token(row));
  CORRAL_RETURN_IF_ERROR(api.pipeline.audit(
      tx, c, "token.create", principal_id(row.name), "",
      "role=" + row.role + " tenant=" + row.tenant + " node=" + row.node + " owner=" + row.owner +
          (row.expires_at ? " expires=" + core::format_utc(*row.expires_at) : "")));
  // The token is shown once; the idempotency row keeps this answer so a retry of the
  // same request gets the same token rather than minting a second one.
  json out = token_json(row);
  out["token"] = token;
  return json_reply(out, 201);
}

Result<Reply> list_tokens(ApiContext&, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const PageRequest page, c.page());
  CORRAL_ASSIGN_OR_RETURN(const std::string after, name_cursor(page));
  CORRAL_ASSIGN_OR_RETURN(auto rows, tx.security().list_tokens(after, page.limit + 1));
  std::vector<json> items;
  for (const auto& r : rows) items.push_back(token_json(r));
  return json_reply(
      page_answer("tokens", std::move(items), page, [&](std::size_t i) { return rows[i].name; }));
}

// The name as listed, or its id ("token:<name>").
std::string token_name(const Call& c) {
  std::string name = c.req.matches[1];
  if (name.starts_with("token:")) name = name.substr(6);
  return name;
}

Result<Reply> get_token(ApiContext&, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(auto row, tx.security().find_token_by_name(token_name(c)));
  if (!row) return core::not_found("token " + token_name(c) + " not found");
  return json_reply(token_json(*row));
}

// Idempotent: revoking a revoked token answers it as it is, the first revocation kept.
Result<Reply> revoke_token(ApiContext& api, const Call& c, store::Tx& tx) {
  const std::string name = token_name(c);
  CORRAL_ASSIGN_OR_RETURN(auto row, tx.security().find_token_by_name(name));
  if (!row) return core::not_found("token " + name + " not found");
  if (!row->revoked_at) {
    CORRAL_RETURN_IF_ERROR(tx.security().revoke_token(name, api.now(), c.who.id));
    CORRAL_RETURN_IF_ERROR(
        api.pipeline.audit(tx, c, "token.revoke", principal_id(name), "active", "revoked"));
    api.pipeline.auth().forget(row->hash);
    CORRAL_ASSIGN_OR_RETURN(row, tx.security().find_token_by_name(name));
  }
  return json_reply(token_json(*row));
}

}  // namespace

std::vector<Route> token_routes(ApiContext& api) {
  return {
      write_route("POST", "/v1/tokens", kAdmins, bind_api(api, create_token)),
      read_route("GET", "/v1/tokens", kAdmins, bind_api(api, list_tokens)),
      read_route("GET", R"(/v1/tokens/([^/]+))", kAdmins, bind_api(api, get_token)),
      write_route("DELETE", R"(/v1/tokens/([^/]+))", kAdmins, bind_api(api, revoke_token)),
  };
}

}  // namespace corral::server
