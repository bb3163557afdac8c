// The documents the store keeps as JSON (tenant configs, node registrations,
// reservations) decoded once at the store edge, for every reader of those tables (the
// scheduler's snapshot, admission, the dashboard, billing, metrics, racks' power, the
// gates), so each reads types and one rule decides what a row this build cannot read
// does: it is left out, as a row that is not there, and reported, never skipped in
// silence. The report is a log line (event unreadable_row, at error level, naming the
// table, the row and why) and a count (unreadable_rows(), /metrics'
// corral_store_unreadable_rows_total), each once per row content per process: the
// snapshot reads the tables every cycle. The line is written at once, not with a
// transaction's Effects (log.h): it tells of what a read found, which a retried or failed
// transaction found too.
//
// A reader that must not go on without a row (billing: a GPU left out would be billed to
// nobody) decodes it itself and fails with the decoder's error.
//
// Thread safety: safe to call concurrently.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/reservation.h"
#include "core/topology.h"
#include "server/base/model_json.h"
#include "store/store.h"

namespace corral::server {

// A node as registered, beside the row it was read from (its id, admin state and times).
// `row` points into the vector given to stored_nodes(), which must outlive it.
struct StoredNode {
  const store::NodeRow* row = nullptr;
  core::Node node;
};

// A reservation as stored, beside its row (`row` as in StoredNode).
struct StoredReservation {
  const store::ReservationRow* row = nullptr;
  core::Reservation reservation;
};

// The configs of `rows`, in their order, less the rows that cannot be read.
std::vector<TenantConfig> stored_tenants(const std::vector<store::TenantRow>& rows);
// A node's stored registration (NodeRow::spec_json), as node_from_json() decodes it,
// parsed once per distinct text in the process (core::DecodeMemo): every cycle and
// heartbeat reads it.
core::Result<core::Node> stored_node_from_json(std::string_view spec_json);
// The nodes of `rows`, in their order, less the rows that cannot be read.
std::vector<StoredNode> stored_nodes(const std::vector<store::NodeRow>& rows);
// The reservations of `rows`, in their order, less the rows that cannot be read.
std::vector<StoredReservation> stored_reservations(const std::vector<store::ReservationRow>& rows);

// The distinct unreadable rows this process has found since it started, by table
// ("tenants", "nodes", "reservations"); a row counts again only if its content changes.
std::map<std::string, std::int64_t> unreadable_rows();

}  // namespace corral::server
