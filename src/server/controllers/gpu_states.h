// The GPU state history the ledger bills from (store::GpuStateSpan): the controllers that
// change a GPU's condition or a node's admin state call these in the same transaction,
// so the history can never disagree with what was decided.
//   - a GPU judged unhealthy opens an "unhealthy" span; judged ok or hot again, closes it
//     (a hot GPU keeps running its work: that time is its job's);
//   - a node cordoned or draining opens a "drained" span of the whole node; made active
//     again, closes it;
//   - a lost node opens an "unhealthy" span of the whole node, closed when its agent joins.
//
// Thread safety: functions of the transaction they write.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "core/time.h"
#include "core/topology.h"
#include "store/store.h"

namespace corral::server {

core::Status record_gpu_conditions(store::LedgerRepo& ledger, const core::NodeId& node,
                                   const std::vector<store::GpuObservation>& before,
                                   const std::vector<store::GpuObservation>& after, core::Time now);
core::Status record_admin_state(store::LedgerRepo& ledger, const core::NodeId& node,
                                core::NodeAdminState before, core::NodeAdminState after,
                                const std::string& reason, core::Time now);
core::Status record_node_lost(store::LedgerRepo& ledger, const core::NodeId& node,
                              const std::string& why, core::Time now);
core::Status record_node_joined(store::LedgerRepo& ledger, const core::NodeId& node,
                                core::Time now);

}  // namespace corral::server
