// The typed field readers every field-by-field body shares: absent and null read alike,
// a required field's absence and every wrong value name the field by its full path.
#include "core/json_fields.h"

#include <gtest/gtest.h>

namespace corral::core::json_fields {
namespace {

using nlohmann::json;

TEST(JsonFields, AbsentAndNullLeaveTheValueAndRequiredNamesTheField) {
  const json obj = json::parse(R"({"rank": null})");
  const std::string path = "workers[2]";
  std::int32_t rank = 5;
  EXPECT_TRUE(read_int(Field{obj, path, "rank"}, 0, 10, rank).ok());
  EXPECT_EQ(rank, 5);
  const Status missing = read_int(Field{obj, path, "rank", true}, 0, 10, rank);
  EXPECT_EQ(missing.field(), "workers[2].rank");
  EXPECT_EQ(missing.message(), "is required");
}

TEST(JsonFields, WrongValuesAreRefusedWithTheirPath) {
  const json obj = json::parse(
      R"({"rank": 11, "share": "half", "name": "a\u0001b", "ids": [1, 2, "3"], "on": 1})");
  const std::string path = "";
  std::int32_t rank = 0;
  EXPECT_EQ(read_int(Field{obj, path, "rank"}, 0, 10, rank).message(),
            "must be between 0 and 10, got 11");
  double share = 0;
  EXPECT_EQ(read_double(Field{obj, path, "share"}, 0, 1, share).message(), "must be a number");
  std::string name;
  EXPECT_EQ(read_string(Field{obj, path, "name"}, 64, name).message(),
            "must not contain control characters");
  std::vector<std::int64_t> ids;
  EXPECT_EQ(read_int_array(Field{obj, path, "ids"}, 0, 10, ids).field(), "ids[2]");
  EXPECT_TRUE(ids.empty());  // nothing is written on an error
  bool on = false;
  EXPECT_EQ(read_bool(Field{obj, path, "on"}, on).message(), "must be true or false");
}

TEST(JsonFields, ObjectsOfAnArrayAreReadEachAtItsPath) {
  const json obj = json::parse(R"({"gpus": [{"index": 0}, {"index": 99}]})");
  const std::string path = "inventory";
  std::vector<std::int64_t> indexes;
  const Status s = read_objects(Field{obj, path, "gpus"}, indexes,
                                [](const json& g, const std::string& at, std::int64_t& out) {
                                  return read_int(Field{g, at, "index", true}, 0, 63, out);
                                });
  EXPECT_EQ(s.field(), "inventory.gpus[1].index");
  std::map<std::string, std::string> env;
  const json e = json::parse(R"({"env": {"A": "1", "B": 2}})");
  EXPECT_EQ(read_string_map(Field{e, path, "env"}, 16, env).field(), "inventory.env.B");
}

TEST(JsonFields, UnknownKeysAreRefusedByName) {
  const json obj = json::parse(R"({"name": "x", "colour": "red"})");
  EXPECT_TRUE(only_fields(obj, "spec", {"name", "colour"}).ok());
  const Status s = only_fields(obj, "spec", {"name"});
  EXPECT_EQ(s.field(), "spec.colour");
  EXPECT_EQ(s.message(), "unknown field");
  EXPECT_EQ(only_fields(obj, "", {"name"}).field(), "colour");
}

}  // namespace
}  // namespace corral::core::json_fields
