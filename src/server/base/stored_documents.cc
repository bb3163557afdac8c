#include "server/base/stored_documents.h"

#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "core/decode_memo.h"
#include "server/base/log.h"

namespace corral::server {
namespace {

struct Reports {
  std::mutex mu;
  std::set<std::string> seen;  // table, id and content of each row reported
  std::map<std::string, std::int64_t> by_table;
};

Reports& reports() {
  static Reports r;
  return r;
}

// Logs and counts the row `id` of `table`, holding `text`, once per content.
void report(const std::string& table, const std::string& id, const std::string& text,
            const core::Status& why) {
  Reports& r = reports();
  {
    const std::lock_guard<std::mutex> lock(r.mu);
    if (!r.seen.insert(table + '\n' + id + '\n' + text).second) return;
    ++r.by_table[table];
  }
  // DataLoss, not the decoder's InvalidArgument: the row is stored, so nothing a caller
  // sends can mend it; the log line says which row and what its decoder found.
  const core::Status loss(core::StatusCode::kDataLoss,
                          "cannot read the stored row: " + why.to_string());
  process_log().write(LogEvent("unreadable_row", LogLevel::kError)
                          .add("table", table)
                          .add("id", id)
                          .add("code", std::string(core::to_string(loss.code())))
                          .add("why", loss.to_string()));
}

// What `decode` makes of each row of `rows`, in order, less the rows it cannot read,
// which are reported; `text` is the row's stored document, for the report.
template <class Value, class Row, class Decode>
std::vector<Value> decode_rows(const std::vector<Row>& rows, const std::string& table,
                               std::string Row::*text, Decode decode) {
  std::vector<Value> out;
  out.reserve(rows.size());
  for (const Row& row : rows) {
    core::Result<Value> value = decode(row);
    if (value.ok()) {
      out.push_back(*std::move(value));
    } else {
      report(table, row.id.value, row.*text, value.status());
    }
  }
  return out;
}

}  // namespace

std::vector<TenantConfig> stored_tenants(const std::vector<store::TenantRow>& rows) {
  return decode_rows<TenantConfig>(rows, "tenants", &store::TenantRow::config_json,
                                   [](const store::TenantRow& row) {
                                     return tenant_config_from_json(row.id.value, row.config_json);
                                   });
}

core::Result<core::Node> stored_node_from_json(std::string_view spec_json) {
  // Far above the nodes of one fleet; every node's text is read each cycle.
  static core::DecodeMemo<core::Node> memo(1 << 15);
  return memo.get(spec_json, [](std::string_view text) { return node_from_json(text); });
}

std::vector<StoredNode> stored_nodes(const std::vector<store::NodeRow>& rows) {
  return decode_rows<StoredNode>(rows, "nodes", &store::NodeRow::spec_json,
                                 [](const store::NodeRow& row) -> core::Result<StoredNode> {
                                   CORRAL_ASSIGN_OR_RETURN(core::Node node,
                                                           stored_node_from_json(row.spec_json));
                                   return StoredNode{.row = &row, .node = std::move(node)};
                                 });
}

std::vector<StoredReservation> stored_reservations(const std::vector<store::ReservationRow>& rows) {
  return decode_rows<StoredReservation>(
      rows, "reservations", &store::ReservationRow::spec_json,
      [](const store::ReservationRow& row) -> core::Result<StoredReservation> {
        CORRAL_ASSIGN_OR_RETURN(core::Reservation r, reservation_from_json(row.spec_json));
        return StoredReservation{.row = &row, .reservation = std::move(r)};
      });
}

std::map<std::string, std::int64_t> unreadable_rows() {
  Reports& r = reports();
  const std::lock_guard<std::mutex> lock(r.mu);
  return r.by_table;
}

}  // namespace corral::server
