// The JSON documents of the tenant, node and reservation tables read once for every
// reader: good rows become typed values in their order, a row this build cannot read is
// left out, logged and counted (once per content), instead of failing the reader or
// being skipped in silence.
#include "server/base/stored_documents.h"

#include <gtest/gtest.h>

namespace corral::server {
namespace {

std::int64_t unreadable(const std::string& table) {
  const auto counts = unreadable_rows();
  const auto it = counts.find(table);
  return it == counts.end() ? 0 : it->second;
}

TEST(StoredDocuments, AnUnreadableTenantIsLeftOutCountedOnceAndTheOthersAreRead) {
  const std::int64_t before = unreadable("tenants");
  const std::vector<store::TenantRow> rows = {
      {.id = core::TenantId("vision"), .config_json = R"({"weight": 2, "maxPendingJobs": 7})"},
      {.id = core::TenantId("broken"), .config_json = R"({"weight": "heavy"})"},
      {.id = core::TenantId("nlp"), .config_json = "{}"},
      {.id = core::TenantId("future"), .config_json = R"({"aFieldOfANewerBuild": 1})"},
  };
  const std::vector<TenantConfig> configs = stored_tenants(rows);
  ASSERT_EQ(configs.size(), 2u);
  EXPECT_EQ(configs[0].tenant.id.value, "vision");
  EXPECT_EQ(configs[0].tenant.weight, 2.0);
  EXPECT_EQ(configs[0].max_pending_jobs, 7);
  EXPECT_EQ(configs[1].tenant.id.value, "nlp");
  EXPECT_EQ(configs[1].tenant.weight, 1.0);
  EXPECT_EQ(unreadable("tenants"), before + 2);
  // Read again (the snapshot reads the table every cycle): the same answer, not counted
  // again; a row whose content changed and still cannot be read is counted anew.
  EXPECT_EQ(stored_tenants(rows).size(), 2u);
  EXPECT_EQ(unreadable("tenants"), before + 2);
  EXPECT_EQ(stored_tenants({{.id = core::TenantId("broken"), .config_json = "[]"}}).size(), 0u);
  EXPECT_EQ(unreadable("tenants"), before + 3);
}

TEST(StoredDocuments, NodesKeepTheirRowsAndAnUnreadableOneIsLeftOutAndCounted) {
  const std::int64_t before = unreadable("nodes");
  const std::vector<store::NodeRow> rows = {
      {.id = core::NodeId("n1"),
       .spec_json = R"({"id": "n1", "gpus": [{"index": 0, "type": "H100"}]})",
       .admin = core::NodeAdminState::kCordoned},
      {.id = core::NodeId("n2"), .spec_json = "not json"},
      {.id = core::NodeId("n3"), .spec_json = R"({"id": "n3", "gpus": "eight"})"},
      {.id = core::NodeId("n4"), .spec_json = R"({"id": "n4", "gpus": []})"},
  };
  const std::vector<StoredNode> nodes = stored_nodes(rows);
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].row, &rows[0]);
  EXPECT_EQ(nodes[0].row->admin, core::NodeAdminState::kCordoned);
  ASSERT_EQ(nodes[0].node.gpus.size(), 1u);
  EXPECT_EQ(nodes[0].node.gpus[0].type.value, "H100");
  EXPECT_EQ(nodes[1].row, &rows[3]);
  EXPECT_EQ(unreadable("nodes"), before + 2);
  EXPECT_EQ(stored_nodes(rows).size(), 2u);
  EXPECT_EQ(unreadable("nodes"), before + 2);
}

TEST(StoredDocuments, AnUnreadableReservationIsLeftOutAndCounted) {
  const std::int64_t before = unreadable("reservations");
  const std::vector<store::ReservationRow> rows = {
      {.id = core::ReservationId("r1"),
       .tenant = core::TenantId("vision"),
       .spec_json = R"({"id": "r1", "tenant": "vision", "startMs": 0, "endMs": 3600000,
                        "nodes": ["n1"]})"},
      {.id = core::ReservationId("r2"),
       .tenant = core::TenantId("vision"),
       .spec_json = R"({"id": "r2", "tenant": "vision", "startMs": "soon"})"},
  };
  const std::vector<StoredReservation> reservations = stored_reservations(rows);
  ASSERT_EQ(reservations.size(), 1u);
  EXPECT_EQ(reservations[0].row, &rows[0]);
  EXPECT_EQ(reservations[0].reservation.id.value, "r1");
  ASSERT_EQ(reservations[0].reservation.nodes.size(), 1u);
  EXPECT_EQ(unreadable("reservations"), before + 1);
}

}  // namespace
}  // namespace corral::server
