// A job as the scheduler leaves it once placed, written straight into a store for the
// controller tests (lifecycle, idle sessions) that start from there: inserted, moved to
// its phase at attempt 1, holding H100 GPUs from its insert time; and read back.
//
// Thread safety: as the Tx it is given.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/job_phase.h"
#include "core/result.h"
#include "store/store.h"

namespace corral::testing {

// Inserts `job` and moves it to `phase` at attempt 1, holding `gpus` ({node, index}).
inline core::Result<store::JobRow> insert_placed_job(
    store::Tx& tx, const store::NewJob& job, core::JobPhase phase,
    const std::vector<std::pair<std::string, std::int32_t>>& gpus) {
  CORRAL_ASSIGN_OR_RETURN(store::JobRow row, tx.jobs().insert_job(job));
  store::JobRow next = row;
  next.phase = phase;
  next.attempt = 1;
  CORRAL_ASSIGN_OR_RETURN(const bool won, tx.jobs().update_job(next, core::JobPhase::kPending));
  if (!won) return core::raced("insert");
  for (const auto& [node, index] : gpus) {
    CORRAL_RETURN_IF_ERROR(tx.allocations().insert_allocation({.job = row.id,
                                                               .attempt = 1,
                                                               .node = core::NodeId(node),
                                                               .gpu_index = index,
                                                               .gpu_type = core::GpuTypeId("H100"),
                                                               .epoch = 1,
                                                               .created_at = job.now}));
  }
  return next;
}

// The job's row as `store` holds it now; NotFound when there is none.
inline core::Result<store::JobRow> read_job(store::Store& store, core::JobId id) {
  store::JobRow out;
  CORRAL_RETURN_IF_ERROR(store.read([&](store::Tx& tx) {
    CORRAL_ASSIGN_OR_RETURN(auto row, tx.jobs().get_job(id));
    if (!row) return core::not_found("job " + std::to_string(id.value));
    out = *row;
    return core::Status();
  }));
  return out;
}

}  // namespace corral::testing
