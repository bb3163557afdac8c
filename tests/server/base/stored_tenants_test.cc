// The tenant table read once for every reader: good rows become configs in their order,
// a row this build cannot read is left out (and logged) instead of failing the reader.
#include "server/base/stored_tenants.h"

#include <gtest/gtest.h>

namespace corral::server {
namespace {

TEST(StoredTenants, AnUnreadableRowIsLeftOutAndTheOthersAreRead) {
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
  // Read again (the snapshot reads the table every cycle): the same answer.
  EXPECT_EQ(stored_tenants(rows).size(), 2u);
}

}  // namespace
}  // namespace corral::server
