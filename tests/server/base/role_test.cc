#include "server/base/role.h"

#include <gtest/gtest.h>

namespace corral::server {
namespace {

TEST(Role, EveryRoleReadsBackAsItself) {
  for (const Role r : {Role::kAdmin, Role::kMember, Role::kAgent, Role::kJoin, Role::kMetrics}) {
    const auto parsed = parse_role(to_string(r));
    ASSERT_TRUE(parsed.ok()) << to_string(r);
    EXPECT_EQ(*parsed, r);
  }
  EXPECT_EQ(to_string(Role::kMember), "member");
}

TEST(Role, AnUnknownRoleNamesTheFieldAndTheValue) {
  for (const char* bad : {"", "Admin", "root", "admin "}) {
    const auto parsed = parse_role(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), core::StatusCode::kInvalidArgument);
    EXPECT_EQ(parsed.status().field(), "role");
    EXPECT_NE(parsed.status().message().find(std::string("'") + bad + "'"), std::string::npos)
        << parsed.status().message();
  }
}

}  // namespace
}  // namespace corral::server
