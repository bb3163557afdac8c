// SecurityRepo over SQL: tokens (hashes only) and idempotency_keys.
#include <string>
#include <utility>
#include <vector>

#include "store/internal/sql_rows.h"
#include "store/internal/sql_tx.h"

namespace corral::store::detail {
namespace {

using core::Result;
using core::Status;

constexpr std::string_view kTokenColumns =
    "hash, role, tenant, node, created_at, name, owner, expires_at, last_used_at, revoked_at, "
    "revoked_by";
constexpr std::string_view kIdempotencyColumns =
    "scope, key, request_hash, status, response_body, created_at";

// The token columns keep 0 for "never" (NOT NULL, so old rows read the same).
std::optional<core::Time> never_is_zero(std::int64_t at) {
  if (at == 0) return std::nullopt;
  return core::time_from_ms(at);
}
std::int64_t zero_is_never(const std::optional<core::Time>& t) { return t ? ms(*t) : 0; }

Result<TokenRow> token_row(const SqlRow& r) {
  RowReader in(r, "tokens", kTokenColumns);
  TokenRow row{.hash = in.str(0),
               .role = in.str(1),
               .tenant = in.str(2),
               .node = in.str(3),
               .created_at = in.time(4),
               .name = in.str(5),
               .owner = in.str(6),
               .expires_at = never_is_zero(in.i64(7)),
               .last_used_at = never_is_zero(in.i64(8)),
               .revoked_at = never_is_zero(in.i64(9)),
               .revoked_by = in.str(10)};
  if (!in.ok()) return in.status();
  return row;
}

}  // namespace

Result<std::vector<TokenRow>> SqlTx::tokens(std::string_view where_order,
                                            std::vector<SqlValue> params) {
  CORRAL_ASSIGN_OR_RETURN(
      auto res, q(cat("SELECT ", kTokenColumns, cat(" FROM tokens ", where_order, "")), params));
  std::vector<TokenRow> out;
  for (const auto& r : res.rows) {
    CORRAL_ASSIGN_OR_RETURN(auto row, token_row(r));
    out.push_back(std::move(row));
  }
  return out;
}

Status SqlTx::insert_token(const TokenRow& t) {
  const std::string name = t.name.empty() ? "token-" + t.hash.substr(0, 12) : t.name;
  return q(cat("INSERT INTO tokens (", kTokenColumns,
               ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"),
           {t.hash, t.role, t.tenant, t.node, ms(t.created_at), name, t.owner,
            zero_is_never(t.expires_at), zero_is_never(t.last_used_at), zero_is_never(t.revoked_at),
            t.revoked_by})
      .status();
}

Result<std::optional<TokenRow>> SqlTx::find_token(std::string_view hash) {
  CORRAL_ASSIGN_OR_RETURN(auto rows, tokens("WHERE hash = $1", {std::string(hash)}));
  if (rows.empty()) return std::optional<TokenRow>();
  return std::optional<TokenRow>(std::move(rows[0]));
}

Result<std::optional<TokenRow>> SqlTx::find_token_by_name(std::string_view name) {
  CORRAL_ASSIGN_OR_RETURN(auto rows, tokens("WHERE name = $1", {std::string(name)}));
  if (rows.empty()) return std::optional<TokenRow>();
  return std::optional<TokenRow>(std::move(rows[0]));
}

Result<std::vector<TokenRow>> SqlTx::list_tokens(std::string_view after, std::int32_t limit) {
  return tokens("WHERE name > $1 ORDER BY name LIMIT $2",
                {std::string(after), std::int64_t{limit}});
}

Status SqlTx::revoke_token(std::string_view name, core::Time at, std::string_view by) {
  return q("UPDATE tokens SET revoked_at = $1, revoked_by = $2 WHERE name = $3 AND revoked_at = 0",
           {ms(at), std::string(by), std::string(name)})
      .status();
}

Status SqlTx::touch_token(std::string_view hash, core::Time at) {
  return q("UPDATE tokens SET last_used_at = $1 WHERE hash = $2", {ms(at), std::string(hash)})
      .status();
}

Result<std::int64_t> SqlTx::count_tokens() {
  CORRAL_ASSIGN_OR_RETURN(auto res, q("SELECT COUNT(*) FROM tokens", {}));
  if (res.rows.size() != 1) return core::internal_error("count_tokens: no row returned");
  RowReader in(res.rows[0], "tokens", "COUNT(*)");
  const std::int64_t count = in.i64(0);
  if (!in.ok()) return in.status();
  return count;
}

Result<std::optional<IdempotencyRow>> SqlTx::get_idempotency(std::string_view scope,
                                                             std::string_view key) {
  CORRAL_ASSIGN_OR_RETURN(auto res, q(cat("SELECT ", kIdempotencyColumns,
                                          " FROM idempotency_keys WHERE scope = $1 AND key = $2"),
                                      {std::string(scope), std::string(key)}));
  if (res.rows.empty()) return std::optional<IdempotencyRow>();
  RowReader in(res.rows[0], "idempotency_keys", kIdempotencyColumns);
  IdempotencyRow row{.scope = in.str(0),
                     .key = in.str(1),
                     .request_hash = in.str(2),
                     .status = in.i32(3),
                     .response_body = in.str(4),
                     .created_at = in.time(5)};
  if (!in.ok()) return in.status();
  return std::optional<IdempotencyRow>(std::move(row));
}

Status SqlTx::put_idempotency(const IdempotencyRow& row) {
  return q("INSERT INTO idempotency_keys (scope, key, request_hash, status, response_body, "
           "created_at) VALUES ($1, $2, $3, $4, $5, $6)",
           {row.scope, row.key, row.request_hash, std::int64_t{row.status}, row.response_body,
            ms(row.created_at)})
      .status();
}

Result<std::vector<DataKeyRow>> SqlTx::list_data_keys() {
  constexpr std::string_view kColumns = "id, kek_id, kek_fingerprint, wrapped, created_at";
  CORRAL_ASSIGN_OR_RETURN(auto res, q(cat("SELECT ", kColumns, " FROM data_keys ORDER BY id"), {}));
  std::vector<DataKeyRow> out;
  for (const auto& r : res.rows) {
    RowReader in(r, "data_keys", kColumns);
    out.push_back({.id = in.str(0),
                   .kek_id = in.str(1),
                   .kek_fingerprint = in.str(2),
                   .wrapped = in.str(3),
                   .created_at = in.time(4)});
    if (!in.ok()) return in.status();
  }
  return out;
}

Result<bool> SqlTx::insert_data_key(const DataKeyRow& row) {
  CORRAL_ASSIGN_OR_RETURN(
      auto res,
      q("INSERT INTO data_keys (id, kek_id, kek_fingerprint, wrapped, created_at) VALUES ($1, $2, "
        "$3, $4, $5) ON CONFLICT (id) DO NOTHING RETURNING id",
        {row.id, row.kek_id, row.kek_fingerprint, row.wrapped, ms(row.created_at)}));
  return !res.rows.empty();
}

Status SqlTx::rewrap_data_key(const DataKeyRow& row) {
  return q("UPDATE data_keys SET kek_id = $1, kek_fingerprint = $2, wrapped = $3 WHERE id = $4",
           {row.kek_id, row.kek_fingerprint, row.wrapped, row.id})
      .status();
}

}  // namespace corral::store::detail
