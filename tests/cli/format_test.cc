// The CLI's text formatting: durations and instants (now and the zone frozen), the
// instants people type, node lists, tables, and YAML output, which a seeded property
// test reads back (through the same reader as -f files) to the JSON it came from.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/commands/input_file.h"
#include "cli/format/node_list.h"
#include "cli/format/table.h"
#include "cli/format/time_text.h"
#include "cli/format/units_text.h"
#include "cli/format/yaml_text.h"
#include "core/units.h"

namespace corral::cli {
namespace {

using nlohmann::json;

constexpr std::int64_t kNowMs = 1796306700000;  // 2026-12-03 14:05:00 UTC
const core::Time kNow = core::time_from_ms(kNowMs);
constexpr std::int64_t kS = 1000, kM = 60 * kS, kH = 60 * kM, kD = 24 * kH;

TEST(TimeText, DurationsInTwoUnits) {
  const std::vector<std::pair<std::int64_t, std::string>> cases = {{0, "0s"},
                                                                   {999, "0s"},
                                                                   {45 * kS, "45s"},
                                                                   {4 * kM + 12 * kS, "4m 12s"},
                                                                   {60 * kM, "1h 00m"},
                                                                   {3 * kH + 5 * kM, "3h 05m"},
                                                                   {2 * kD + 4 * kH, "2d 04h"},
                                                                   {-5 * kS, "0s"}};
  for (const auto& [ms, want] : cases) {
    SCOPED_TRACE(want);
    EXPECT_EQ(duration_text(core::Duration(ms)), want);
  }
  EXPECT_EQ(short_duration_text(core::Duration(3 * kH + 59 * kM)), "3h");
}

TEST(TimeText, RelativeToNow) {
  EXPECT_EQ(relative_text(kNow - core::Duration(3 * kM + 10 * kS), kNow), "3m ago");
  EXPECT_EQ(relative_text(kNow + core::Duration(2 * kH), kNow), "in 2h");
  EXPECT_EQ(relative_text(kNow + core::Duration(500), kNow), "now");
  EXPECT_EQ(relative_text(kNow - core::Duration(9 * kD), kNow), "9d ago");
}

TEST(TimeText, AbsoluteInTheZone) {
  EXPECT_EQ(date_text(kNow, Zone::utc()), "2026-12-03 14:05:00 UTC");
  EXPECT_EQ(date_text(kNow, Zone::fixed(60)), "2026-12-03 15:05:00");
  EXPECT_EQ(date_text(kNow, Zone::fixed(-10 * 60)), "2026-12-03 04:05:00");
  EXPECT_EQ(date_text(kNow + core::Duration(10 * kH), Zone::fixed(60)), "2026-12-04 01:05:00");
  const TimeStyle style{.now = kNow, .zone = Zone::utc()};
  EXPECT_EQ(when_text(kNow - core::Duration(kH), style), "2026-12-03 13:05:00 UTC (1h ago)");
  EXPECT_EQ(when_text(json(nullptr), style), "-");
  EXPECT_EQ(when_text(json(0), style), "-");  // the API's "never"
}

TEST(TimeText, ReasonsLoseTheirEpochMilliseconds) {
  const TimeStyle style{.now = kNow, .zone = Zone::utc()};
  EXPECT_EQ(
      reason_text("restart backoff until " + std::to_string(kNowMs + 90 * kS) + " (ms since epoch)",
                  style),
      "restart backoff until 2026-12-03 14:06:30 UTC (in 1m)");
  EXPECT_EQ(reason_text("needs 8 GPUs", style), "needs 8 GPUs");
  EXPECT_EQ(reason_text("odd (ms since epoch)", style), "odd (ms since epoch)");
}

TEST(TimeText, ParsesWhatPeopleWrite) {
  const TimeStyle berlin{.now = kNow, .zone = Zone::fixed(60)};
  const std::vector<std::pair<std::string, std::int64_t>> cases = {
      {"now", kNowMs},
      {"+2h", kNowMs + 2 * kH},
      {"-30m", kNowMs - 30 * kM},
      {"+1d12h", kNowMs + kD + 12 * kH},
      {"2026-12-03T15:05", kNowMs},  // local (UTC+1)
      {"2026-12-03 15:05:00", kNowMs},
      {"2026-12-03T14:05Z", kNowMs},  // UTC, whatever the zone
      {"2026-12-04", kNowMs + 9 * kH + 55 * kM - kH},
  };
  for (const auto& [text, want] : cases) {
    SCOPED_TRACE(text);
    const auto got = parse_when(text, berlin);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    EXPECT_EQ(core::to_ms(*got), want);
  }
  for (const char* bad : {"", "tomorrow", "+2", "2026-13-01", "12:00"}) {
    SCOPED_TRACE(bad);
    const auto got = parse_when(bad, berlin);
    ASSERT_FALSE(got.ok());
    EXPECT_NE(got.status().message().find("+DURATION"), std::string::npos);
  }
}

TEST(NodeList, FoldsLikeASlurmHostlist) {
  EXPECT_EQ(node_list_text({}), "");
  EXPECT_EQ(node_list_text({"dgx02", "dgx01", "dgx01"}), "dgx[01-02]");
  EXPECT_EQ(node_list_text({"dgx01", "dgx02", "dgx03", "dgx07", "login", "a100-7"}),
            "a100-7,dgx[01-03,07],login");
  EXPECT_EQ(node_list_text({"n9", "n10"}), "n10,n9");  // widths differ: not one range
}

TEST(Table, AlignsAndMarksEmptyCells) {
  const Table t{.headers = {"NAME", "TEMP", "NOTE"},
                .rows = {{"dgx01", "71°C", ""}, {"a", "5°C", "x"}}};
  EXPECT_EQ(table_text(t),
            "NAME   TEMP  NOTE\n"
            "dgx01  71°C  -\n"
            "a      5°C   x\n");
  EXPECT_EQ(csv_text({.headers = {"A", "B"}, .rows = {{"1,2", "say \"hi\""}}}),
            "A,B\r\n\"1,2\",\"say \"\"hi\"\"\"\r\n");
}

TEST(UnitsText, HumanUnits) {
  EXPECT_EQ(gib_text(81920), "80 GiB");
  EXPECT_EQ(gib_text(62669), "61.2 GiB");
  EXPECT_EQ(power_text(650.4), "650 W");
  EXPECT_EQ(power_text(5520), "5.5 kW");
  EXPECT_EQ(money_text(12345678), "12.35");
  EXPECT_EQ(text(field(json::object(), "missing")), "");
}

TEST(YamlText, WritesBlockYamlAsKubectlDoes) {
  const json doc = {{"name", "nlp"},
                    {"weight", 2.5},
                    {"parent", nullptr},
                    {"quotas", {{"H100", {{"guaranteed", 16}}}}},
                    {"nodes", {"dgx01", "dgx02"}},
                    {"items", json::array({{{"a", 1}, {"b", "true"}}})},
                    {"empty", json::object()},
                    {"note", "a: b"}};
  EXPECT_EQ(yaml_text(doc),
            "empty: {}\n"
            "items:\n"
            "- a: 1\n"
            "  b: \"true\"\n"
            "name: nlp\n"
            "nodes:\n"
            "- dgx01\n"
            "- dgx02\n"
            "note: \"a: b\"\n"
            "parent: null\n"
            "quotas:\n"
            "  H100:\n"
            "    guaranteed: 16\n"
            "weight: 2.5\n");
}

// A random JSON value of depth at most `depth`, strings drawn from characters that YAML
// gives meaning to.
json random_value(std::mt19937_64& rng, int depth) {
  static const std::vector<std::string> kWords = {
      "",     "true",  "no",    "null",   "~",    "12",    "1e3",     "-",    "- x",
      "a: b", "#c",    " lead", "trail ", "x\ny", "tab\t", "quote\"", "it's", "[1]",
      "{a}",  "dgx01", "H100",  "é",      "*ref", "&a",    "!t"};
  const int kind = static_cast<int>(rng() % (depth > 0 ? 8 : 5));
  switch (kind) {
    case 0:
      return nullptr;
    case 1:
      return rng() % 2 == 0;
    case 2:
      return static_cast<std::int64_t>(rng() % 2000) - 1000;
    case 3:
      return static_cast<double>(rng() % 1000) / 8.0;
    case 4:
    case 5:
      return kWords[rng() % kWords.size()] + (rng() % 3 == 0 ? kWords[rng() % kWords.size()] : "");
    case 6: {
      json a = json::array();
      for (int i = static_cast<int>(rng() % 4); i > 0; --i)
        a.push_back(random_value(rng, depth - 1));
      return a;
    }
    default: {
      json o = json::object();
      for (int i = static_cast<int>(rng() % 4); i > 0; --i) {
        o[kWords[rng() % kWords.size()] + std::to_string(i)] = random_value(rng, depth - 1);
      }
      return o;
    }
  }
}

TEST(YamlText, ReadsBackToTheSameJson) {
  const char* env = std::getenv("CORRAL_SEED");
  const std::uint64_t base = env != nullptr ? std::stoull(env) : 20;
  const int runs = env != nullptr ? 1 : 2000;
  for (int i = 0; i < runs; ++i) {
    const std::uint64_t seed = base + static_cast<std::uint64_t>(i);
    std::mt19937_64 rng(seed);
    json doc = json::object();
    doc["root"] = random_value(rng, 4);
    const std::string yaml = yaml_text(doc);
    const auto back = parse_document(yaml, "generated");
    ASSERT_TRUE(back.ok()) << "CORRAL_SEED=" << seed << " " << back.status().to_string() << "\n"
                           << yaml;
    ASSERT_EQ(*back, doc) << "CORRAL_SEED=" << seed << "\n" << yaml;
  }
}

}  // namespace
}  // namespace corral::cli
