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

constexpr std::string_view kTokenColumns = "hash, role, tenant, node, created_at";
constexpr std::string_view kIdempotencyColumns =
    "scope, key, request_hash, status, response_body, created_at";

}  // namespace

Status SqlTx::insert_token(const TokenRow& t) {
  return q("INSERT INTO tokens (hash, role, tenant, node, created_at) VALUES ($1, $2, $3, $4, $5)",
           {t.hash, t.role, t.tenant, t.node, ms(t.created_at)})
      .status();
}

Result<std::optional<TokenRow>> SqlTx::find_token(std::string_view hash) {
  CORRAL_ASSIGN_OR_RETURN(auto res, q(cat("SELECT ", kTokenColumns, " FROM tokens WHERE hash = $1"),
                                      {std::string(hash)}));
  if (res.rows.empty()) return std::optional<TokenRow>();
  RowReader in(res.rows[0], "tokens", kTokenColumns);
  TokenRow row{.hash = in.str(0),
               .role = in.str(1),
               .tenant = in.str(2),
               .node = in.str(3),
               .created_at = in.time(4)};
  if (!in.ok()) return in.status();
  return std::optional<TokenRow>(std::move(row));
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

}  // namespace corral::store::detail
