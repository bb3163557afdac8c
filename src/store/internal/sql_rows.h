// Shared plumbing of the SQL store's repositories (sql_*.cc): decoding result rows with
// checked parsing, and the small helpers every query uses.
//
// Stored values are decoded, never trusted: a number that is not one, an int32 column out
// of range or an enum name this build does not know is DataLoss naming the table, the
// column and the value (`jobs.phase: unknown stored value "bogus"`), never a default such
// as kFailed or kActive that would make the scheduler act on a guess. Nothing here throws.
//
// Thread safety: a RowReader is used by one thread; the free functions are pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/agent_protocol.h"
#include "core/ids.h"
#include "core/job_phase.h"
#include "core/status.h"
#include "core/time.h"
#include "core/topology.h"
#include "store/internal/sql.h"

namespace corral::store::detail {

// Reads the fields of one row. Each getter returns a neutral value when its field fails
// to decode and keeps the first failure; a mapper reads every field and then returns
// status() unless ok(), so one check covers the whole row.
class RowReader {
 public:
  // `columns` is the SELECT list of the row, as written in the query ("id, tenant, ..."):
  // a failure names its column from it, so the names cannot drift from the query.
  RowReader(const SqlRow& row, std::string_view table, std::string_view columns)
      : row_(row), table_(table), columns_(columns) {}

  // NULL reads as "".
  std::string str(std::size_t col) const;
  // NULL reads as 0; anything but a base-10 integer is DataLoss.
  std::int64_t i64(std::size_t col);
  // As i64, and DataLoss outside int32.
  std::int32_t i32(std::size_t col);
  // A stored 0 or 1 (NULL: false).
  bool flag(std::size_t col);
  core::Time time(std::size_t col) { return core::time_from_ms(i64(col)); }
  std::optional<core::Time> optional_time(std::size_t col);
  double f64(std::size_t col);
  core::JobPhase job_phase(std::size_t col);
  core::NodeAdminState admin_state(std::size_t col);
  core::GpuCondition gpu_condition(std::size_t col);
  core::WorkerStatus::State worker_state(std::size_t col);
  // The agent protocol's encodings of observed state (core/agent_protocol.h).
  core::ObservedInventory observed_inventory(std::size_t col);
  std::vector<core::GpuHealth> gpu_readings(std::size_t col);

  bool ok() const { return status_.ok(); }
  const core::Status& status() const { return status_; }

 private:
  void fail(std::size_t col, std::string_view why);
  // The value of `values` whose to_string() the column holds, else DataLoss `why`.
  template <typename Enum>
  Enum one_of(std::size_t col, std::initializer_list<Enum> values, std::string_view why);
  // What a core decoder made of the column, else DataLoss `why` with the decoder's error.
  template <typename T>
  T decoded(std::size_t col, core::Result<T> result, std::string_view why);

  const SqlRow& row_;
  std::string_view table_;
  std::string_view columns_;
  core::Status status_;
};

// The name of column `col` in a SELECT list ("a, b, c" -> "b" for 1).
std::string_view column_name(std::string_view columns, std::size_t col);

inline std::int64_t ms(core::Time t) { return core::to_ms(t); }
// What an active allocations row holds of its GPU, in thousandths: its share, or the whole
// GPU (share_milli 0). The one spelling of it in SQL, for every query that counts them.
inline constexpr std::string_view kHeldMilli =
    "CASE WHEN share_milli = 0 THEN 1000 ELSE share_milli END";
// A double bound as text, read back with CAST($n AS DOUBLE PRECISION): both drivers
// then keep all of its precision.
std::string double_text(double v);

// Summaries of versioned names from rows of (id, tenant, count, newest time)
// (sql_versioned.cc).
core::Result<std::vector<VersionedSummary>> read_summaries(const std::vector<SqlRow>& rows,
                                                           std::string_view table,
                                                           std::string_view columns);

// The items of a comma-separated column ("a,b" -> {a, b}; "" -> {}): lists of names and
// refs, which never hold a comma.
std::vector<std::string> split_commas(const std::string& text);

// Every row of a SELECT's `result`, each made a Row by `read` (a function of the row's
// RowReader), in order: the one loop of the per-table loaders. The first row that does
// not decode is the answer, DataLoss naming `table` and the column.
template <typename Row, typename Read>
core::Result<std::vector<Row>> read_rows(const SqlResult& result, std::string_view table,
                                         std::string_view columns, Read read) {
  std::vector<Row> out;
  out.reserve(result.rows.size());
  for (const SqlRow& r : result.rows) {
    RowReader in(r, table, columns);
    Row row = read(in);
    if (!in.ok()) return in.status();
    out.push_back(std::move(row));
  }
  return out;
}

// The one row a lookup by key reads, or nullopt when there is none.
template <typename Row>
std::optional<Row> first_row(std::vector<Row> rows) {
  if (rows.empty()) return std::nullopt;
  return std::move(rows.front());
}

// The distinct ids of a batch read, sorted, in chunks that keep each query far under both
// databases' limits on bound parameters; `list` is the chunk's "($1, $2, ...)".
struct IdChunk {
  std::string list;
  std::vector<SqlValue> params;
};
std::vector<IdChunk> id_chunks(const std::vector<core::JobId>& ids);
// The distinct `names` of a few rows (tenants, racks, nodes), sorted, as one
// "($1, $2, ...)" list: the order locks are taken in. REQUIRES: `names` is not empty.
IdChunk name_list(std::vector<std::string> names);
IdChunk tenant_list(const std::vector<core::TenantId>& tenants);

inline std::string cat(std::string_view a, std::string_view b, std::string_view c = {}) {
  std::string s(a);
  s += b;
  s += c;
  return s;
}

}  // namespace corral::store::detail
