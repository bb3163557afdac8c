// The readers of the versioned documents (model versions, feature set versions) and of
// versioned names as listed (datasets, models), shared by their repositories.
#include <string>
#include <utility>
#include <vector>

#include "store/internal/sql_rows.h"
#include "store/internal/sql_tx.h"

namespace corral::store::detail {

using core::Result;

Result<std::vector<VersionedDoc>> SqlTx::versioned_docs(std::string_view table,
                                                        std::string_view name_column,
                                                        std::string_view where_order,
                                                        std::vector<SqlValue> params) {
  const std::string columns =
      std::string(name_column) + ", version, tenant, content, created_by, created_at";
  CORRAL_ASSIGN_OR_RETURN(
      auto res,
      q(cat("SELECT ", columns, cat(" FROM ", table, cat(" ", where_order))), std::move(params)));
  std::vector<VersionedDoc> out;
  out.reserve(res.rows.size());
  for (const auto& row : res.rows) {
    RowReader in(row, table, columns);
    out.push_back({.name = in.str(0),
                   .version = in.str(1),
                   .tenant = core::TenantId(in.str(2)),
                   .content = in.str(3),
                   .created_by = in.str(4),
                   .created_at = in.time(5)});
    if (!in.ok()) return in.status();
  }
  return out;
}

Result<std::vector<VersionedSummary>> read_summaries(const std::vector<SqlRow>& rows,
                                                     std::string_view table,
                                                     std::string_view columns) {
  std::vector<VersionedSummary> out;
  for (const auto& row : rows) {
    RowReader in(row, table, columns);
    out.push_back({.id = in.str(0),
                   .tenant = core::TenantId(in.str(1)),
                   .versions = in.i64(2),
                   .latest = in.time(3)});
    if (!in.ok()) return in.status();
  }
  return out;
}

}  // namespace corral::store::detail
