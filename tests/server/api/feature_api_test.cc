// Feature sets and point-in-time lookups (docs/features.md) through real HTTP against a
// real corrald, on both stores: bad input named by field, values written in shuffled
// batches (late arrivals) and looked up against a brute-force reference (equal event
// times, TTL edges, no value from after the instant), watermarks that only rise, and
// tenant isolation over every feature endpoint.
#include <random>
#include <string>
#include <vector>

#include "api_fixture.h"
#include <gtest/gtest.h>

#include "testing/point_in_time_reference.h"

namespace corral::testing {
namespace {

template <typename Factory>
class FeatureApiTest : public TwoTenantApiTest<Factory> {
 protected:
  void SetUp() override {
    TwoTenantApiTest<Factory>::SetUp();
    if (this->IsSkipped() || this->HasFatalFailure()) return;
    const json set = {{"version", "v1"},
                      {"schema", {{"clicks", "int"}, {"ctr", "float"}, {"country", "string"}}},
                      {"source", "kafka://events/clicks"}};
    const auto r = this->as(this->nlp_).post("/v1/features/user-stats/versions", set.dump());
    ASSERT_EQ(r.status, 201) << r.body;
  }
  static constexpr const char* kSet = "/v1/features/user-stats/versions/v1";
};

TYPED_TEST_SUITE(FeatureApiTest, Stores, StoreNames);

TYPED_TEST(FeatureApiTest, BadInputIsNamedByField) {
  struct Bad {
    std::string path;
    json body;
    const char* field;
  };
  const std::string set = this->kSet;
  const auto value = [](json row) { return json{{"values", {std::move(row)}}}; };
  const std::vector<Bad> bad = {
      {"/v1/features/user-stats/versions",
       {{"version", "v 2"}, {"schema", {{"x", "int"}}}},
       "version"},
      {"/v1/features/user-stats/versions",
       {{"version", "v2"}, {"schema", json::object()}},
       "schema"},
      {"/v1/features/user-stats/versions",
       {{"version", "v2"}, {"schema", {{"x", "decimal"}}}},
       "schema.x"},
      {"/v1/features/user-stats/versions",
       {{"version", "v2"}, {"schema", {{"x", "int"}}}, {"owner", "me"}},
       "owner"},
      {"/v1/features/user-stats/versions",
       {{"version", "v1"}, {"schema", {{"x", "int"}}}},
       "version"},
      {set + "/values", value({{"entity", "u1"}, {"eventTimeMs", 5}, {"values", {{"views", 1}}}}),
       "values[0].values.views"},
      {set + "/values",
       value({{"entity", "u1"}, {"eventTimeMs", 5}, {"values", {{"clicks", 1.5}}}}),
       "values[0].values.clicks"},
      {set + "/values", value({{"entity", "u1"}, {"eventTimeMs", -5}, {"values", {{"clicks", 1}}}}),
       "values[0].eventTimeMs"},
      {set + "/values", value({{"entity", ""}, {"eventTimeMs", 5}, {"values", {{"clicks", 1}}}}),
       "values[0].entity"},
      {set + "/values", value({{"entity", "u1"}, {"eventTimeMs", 5}, {"values", json::object()}}),
       "values[0].values"},
      {set + "/values",
       {{"values", json::array()}, {"watermarks", {{"kafka", "now"}}}},
       "watermarks.kafka"},
      {set + "/lookup", {{"rows", json::array()}}, "ttlMs"},
      {set + "/lookup", {{"rows", {{{"entity", "u1"}}}}, {"ttlMs", 10}}, "rows[0].atMs"},
      {set + "/lookup", {{"rows", {{{"atMs", 1}}}}, {"ttlMs", 10}}, "rows[0].entity"},
  };
  for (const Bad& b : bad) {
    SCOPED_TRACE(b.path + " " + b.body.dump());
    const auto r = this->as(this->nlp_).post(b.path, b.body.dump());
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(body(r)["error"].value("field", ""), b.field) << r.body;
  }
}

TYPED_TEST(FeatureApiTest, LookupsMatchTheBruteForceReferenceOverLateArrivals) {
  std::mt19937_64 rng(7);
  std::vector<core::FeatureValue> written;  // seq: the order they were sent in
  std::vector<json> rows;
  for (int i = 0; i < 600; ++i) {
    const std::string entity = "u" + std::to_string(rng() % 12);
    const std::int64_t at =
        1'000 + static_cast<std::int64_t>(rng() % 300) * 10;  // equal times are common
    rows.push_back({{"entity", entity}, {"eventTimeMs", at}, {"values", {{"clicks", i}}}});
  }
  std::shuffle(rows.begin(), rows.end(), rng);  // arrival order is not event order
  for (std::size_t b = 0; b < rows.size(); b += 100) {
    json batch = json::array();
    for (std::size_t i = b; i < b + 100; ++i) {
      batch.push_back(rows[i]);
      written.push_back({.entity = rows[i]["entity"],
                         .event_ms = rows[i]["eventTimeMs"],
                         .seq = static_cast<std::int64_t>(i),
                         .values = rows[i]["values"].dump()});
    }
    const auto r = this->as(this->nlp_)
                       .post(std::string(this->kSet) + "/values", json{{"values", batch}}.dump());
    ASSERT_EQ(r.status, 201) << r.body;
  }
  const std::int64_t ttl = 200;
  json queries = json::array();
  std::vector<registry::LookupRow> lookups;
  for (int i = 0; i < 500; ++i) {
    const auto& v = written[rng() % written.size()];
    const std::int64_t offsets[] = {0, -1, ttl, ttl + 1, static_cast<std::int64_t>(rng() % 400)};
    const registry::LookupRow row{.entity = rng() % 10 == 0 ? "nobody" : v.entity,
                                  .at_ms = v.event_ms + offsets[rng() % 5]};
    lookups.push_back(row);
    queries.push_back({{"entity", row.entity}, {"atMs", row.at_ms}});
  }
  const auto r = this->as(this->nlp_)
                     .post(std::string(this->kSet) + "/lookup",
                           json{{"rows", queries}, {"ttlMs", ttl}}.dump());
  ASSERT_EQ(r.status, 200) << r.body.substr(0, 500);
  const json results = body(r)["results"];
  ASSERT_EQ(results.size(), lookups.size());
  for (std::size_t i = 0; i < lookups.size(); ++i) {
    SCOPED_TRACE("row " + std::to_string(i));
    const std::int64_t want = point_in_time_reference(written, lookups[i], ttl);
    if (want < 0) {
      EXPECT_TRUE(results[i]["values"].is_null()) << results[i].dump();
      continue;
    }
    const auto& w = written[static_cast<std::size_t>(want)];
    EXPECT_EQ(results[i]["eventTimeMs"], w.event_ms);
    EXPECT_EQ(results[i]["values"].dump(), w.values);
    EXPECT_LE(results[i]["eventTimeMs"].get<std::int64_t>(), lookups[i].at_ms)
        << "leaked the future";
  }
}

TYPED_TEST(FeatureApiTest, WatermarksOnlyRiseAndOtherTenantsSeeNothing) {
  const std::string set = this->kSet;
  const auto write = [&](std::int64_t mark) {
    return this->as(this->nlp_)
        .post(set + "/values",
              json{{"values",
                    {{{"entity", "u1"}, {"eventTimeMs", 5}, {"values", {{"country", "NZ"}}}}}},
                   {"watermarks", {{"kafka", mark}}}}
                  .dump());
  };
  ASSERT_EQ(write(500).status, 201);
  ASSERT_EQ(write(300).status, 201);  // late: the watermark stays
  EXPECT_EQ(body(this->as(this->nlp_).get(set))["watermarks"]["kafka"], 500);
  for (const std::string& token : {this->vision_, this->token({{"role", "metrics"}})}) {
    for (const auto& [method, path, b] :
         std::vector<std::tuple<std::string, std::string, std::string>>{
             {"GET", set, ""},
             {"POST", set + "/values", R"({"values": []})"},
             {"POST", set + "/lookup",
              R"({"rows": [{"entity": "u1", "atMs": 10}], "ttlMs": 100})"}}) {
      SCOPED_TRACE(method + " " + path);
      const auto r = this->as(token).send(method, path, b, {}, "application/json");
      EXPECT_TRUE(r.status == 403 || r.status == 404) << r.status << " " << r.body;
      EXPECT_EQ(r.body.find("NZ"), std::string::npos);
      EXPECT_EQ(r.body.find("kafka"), std::string::npos);
    }
    EXPECT_EQ(this->as(token).get("/v1/features").body.find("user-stats"), std::string::npos);
  }
  // vision may not take the name either.
  const auto r =
      this->as(this->vision_)
          .post("/v1/features/user-stats/versions", R"({"version": "v9", "schema": {"x": "int"}})");
  EXPECT_EQ(r.status, 409) << r.body;
}

}  // namespace
}  // namespace corral::testing
