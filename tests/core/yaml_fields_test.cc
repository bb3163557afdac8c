// core::YamlFields: one rule for the YAML files read by hand. Absent and null read alike,
// every error names the field by its path, and a key nobody asked about is refused.
#include "core/yaml_fields.h"

#include <gtest/gtest.h>

namespace corral::core {
namespace {

YAML::Node yaml(const char* text) { return YAML::Load(text); }

TEST(YamlFields, AbsentAndNullTakeTheFallbackOrAreRequired) {
  const YAML::Node doc = yaml("{a: ~, b: 3}");
  YamlFields f(doc, "pools[1]");
  EXPECT_EQ(*f.integer("a", 7, 0, 10), 7);
  EXPECT_EQ(*f.integer("missing", 8, 0, 10), 8);
  const auto required = f.integer("a", std::nullopt, 0, 10);
  ASSERT_FALSE(required.ok());
  EXPECT_EQ(required.status().field(), "pools[1].a");
  EXPECT_EQ(required.status().message(), "is required");
  int kept = 5;
  EXPECT_TRUE(f.read_int("a", 0, 10, kept).ok());
  EXPECT_EQ(kept, 5);
  EXPECT_TRUE(f.read_int("b", 0, 10, kept).ok());
  EXPECT_EQ(kept, 3);
}

TEST(YamlFields, WrongTypesAndRangesNameTheFieldAndTheValue) {
  const YAML::Node doc = yaml("{n: lots, r: 1.5, i: 0, s: [x], list: [1, 2]}");
  YamlFields f(doc, "failures");
  const auto n = f.number("n", std::nullopt, 0, 1);
  EXPECT_EQ(n.status().field(), "failures.n");
  EXPECT_EQ(n.status().message(), "must be a number, got 'lots'");
  EXPECT_EQ(f.number("r", std::nullopt, 0, 1).status().message(),
            "must be between 0 and 1, got 1.5");
  EXPECT_EQ(f.integer("r", std::nullopt, 0, 9).status().message(), "must be an integer, got '1.5'");
  EXPECT_EQ(f.integer("i", std::nullopt, 1, 64).status().message(),
            "must be between 1 and 64, got 0");
  EXPECT_EQ(f.integer("list", std::nullopt, 1, 64).status().message(),
            "must be an integer, got '?'");
  EXPECT_EQ(f.str("s", std::nullopt).status().message(), "must be a string");
  std::string kept = "before";
  EXPECT_FALSE(f.read_string("s", kept).ok());
  EXPECT_EQ(kept, "before");
}

TEST(YamlFields, UnknownKeysAreRefusedUpFrontOrAfterTheReads) {
  const YAML::Node doc = yaml("{cpus: 4, cpu: 8}");
  const Status up_front = YamlFields(doc, "").only({"cpus", "memoryMib"});
  EXPECT_EQ(up_front.field(), "cpu");
  EXPECT_EQ(up_front.message(), "unknown field");
  YamlFields f(doc, "node");
  EXPECT_EQ(*f.integer("cpus", std::nullopt, 1, 64), 4);
  const Status after = f.no_unknown();
  EXPECT_EQ(after.field(), "node.cpu");
  EXPECT_TRUE(YamlFields(doc, "").only({"cpus", "cpu"}).ok());
  EXPECT_TRUE(f.has("cpu"));
  EXPECT_TRUE(f.no_unknown().ok());  // has() marks a key known, as every read does
}

}  // namespace
}  // namespace corral::core
