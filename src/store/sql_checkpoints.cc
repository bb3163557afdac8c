// CheckpointRepo over SQL: checkpoint metadata (the bytes live at the uri).
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "store/internal/sql_rows.h"
#include "store/internal/sql_tx.h"

namespace corral::store::detail {
namespace {

using core::Result;
using core::Status;

constexpr std::string_view kCheckpointColumns =
    "job_id, attempt, step, uri, bytes, checksum, time, gpus, throughput";
constexpr std::string_view kHolderTimeColumns = "job_id, MAX(time)";
constexpr std::string_view kThroughputColumns = "job_id, gpu_type, gpus, throughput, time";

}  // namespace

Result<std::vector<core::Checkpoint>> SqlTx::checkpoints(std::string_view where_order,
                                                         std::vector<SqlValue> params) {
  CORRAL_ASSIGN_OR_RETURN(
      auto res, q(cat("SELECT ", kCheckpointColumns, cat(" FROM checkpoints ", where_order)),
                  std::move(params)));
  return read_rows<core::Checkpoint>(res, "checkpoints", kCheckpointColumns, [](RowReader& in) {
    return core::Checkpoint{.job = core::JobId(in.i64(0)),
                            .attempt = in.i32(1),
                            .step = in.i64(2),
                            .uri = in.str(3),
                            .bytes = in.i64(4),
                            .checksum = in.str(5),
                            .time = in.time(6),
                            .gpus = in.i32(7),
                            .throughput = in.f64(8)};
  });
}

Status SqlTx::insert_checkpoint(const core::Checkpoint& c) {
  return q("INSERT INTO checkpoints (job_id, attempt, step, uri, bytes, checksum, time, gpus, "
           "throughput) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
           {c.job.value, std::int64_t{c.attempt}, c.step, c.uri, c.bytes, c.checksum, ms(c.time),
            std::int64_t{c.gpus}, fmt::format("{}", c.throughput)})  // shortest exact text
      .status();
}

Result<std::vector<core::Checkpoint>> SqlTx::list_checkpoints(core::JobId job) {
  return checkpoints("WHERE job_id = $1 ORDER BY time, id", {job.value});
}

Result<std::optional<core::Checkpoint>> SqlTx::latest_checkpoint(core::JobId job) {
  CORRAL_ASSIGN_OR_RETURN(
      auto rows, checkpoints("WHERE job_id = $1 ORDER BY time DESC, id DESC LIMIT 1", {job.value}));
  return first_row(std::move(rows));
}

Result<std::vector<CheckpointTimeRow>> SqlTx::list_holders_checkpoint_times() {
  CORRAL_ASSIGN_OR_RETURN(auto res, q(cat("SELECT ", kHolderTimeColumns,
                                          " FROM checkpoints WHERE job_id IN (SELECT DISTINCT "
                                          "job_id FROM allocations WHERE active = 1) GROUP BY "
                                          "job_id ORDER BY job_id"),
                                      {}));
  return read_rows<CheckpointTimeRow>(res, "checkpoints", kHolderTimeColumns, [](RowReader& in) {
    return CheckpointTimeRow{.job = core::JobId(in.i64(0)), .time = in.time(1)};
  });
}

Status SqlTx::record_throughput(const ThroughputRow& r) {
  return q("INSERT INTO job_throughput (job_id, gpu_type, gpus, throughput, time) VALUES ($1, "
           "$2, $3, $4, $5) ON CONFLICT (job_id, gpu_type, gpus) DO UPDATE SET throughput = "
           "excluded.throughput, time = excluded.time",
           {r.job.value, r.gpu_type.value, std::int64_t{r.gpus}, fmt::format("{}", r.throughput),
            ms(r.time)})
      .status();
}

Result<std::vector<ThroughputRow>> SqlTx::list_observed_throughput() {
  CORRAL_ASSIGN_OR_RETURN(
      auto res, q(cat("SELECT ", kThroughputColumns,
                      " FROM job_throughput WHERE job_id IN (SELECT id FROM jobs WHERE phase NOT "
                      "IN ('succeeded', 'failed', 'cancelled')) ORDER BY job_id, gpu_type, gpus"),
                  {}));
  return read_rows<ThroughputRow>(res, "job_throughput", kThroughputColumns, [](RowReader& in) {
    return ThroughputRow{.job = core::JobId(in.i64(0)),
                         .gpu_type = core::GpuTypeId(in.str(1)),
                         .gpus = in.i32(2),
                         .throughput = in.f64(3),
                         .time = in.time(4)};
  });
}

}  // namespace corral::store::detail
