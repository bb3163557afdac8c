#include "core/units.h"

#include <gtest/gtest.h>

namespace corral::core {
namespace {

TEST(ParseDuration, AcceptsUnitsAndCompounds) {
  EXPECT_EQ(*parse_duration("90s"), seconds(90));
  EXPECT_EQ(*parse_duration("30m"), seconds(1800));
  EXPECT_EQ(*parse_duration("24h"), seconds(86400));
  EXPECT_EQ(*parse_duration("2d"), seconds(2 * 86400));
  EXPECT_EQ(*parse_duration("1h30m"), seconds(5400));
  EXPECT_EQ(*parse_duration("250ms"), Duration(250));
}

TEST(ParseDuration, RejectsWithAReason) {
  for (const char* bad : {"", "h", "10", "10x", "-5s", "1.5h", "1h 30m", "99999999999999999999s",
                          "9999999999999999d"}) {
    SCOPED_TRACE(bad);
    const auto got = parse_duration(bad);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(got.status().message().find(std::string("\"") + bad + "\""), std::string::npos);
  }
}

TEST(FormatDuration, IsCanonicalAndRoundTrips) {
  EXPECT_EQ(format_duration(seconds(86400)), "1d");
  EXPECT_EQ(format_duration(seconds(90)), "1m30s");
  EXPECT_EQ(format_duration(Duration(0)), "0s");
  for (const char* text : {"1h30m", "24h", "2d", "90s", "250ms", "1d2h3m4s5ms"}) {
    const Duration d = *parse_duration(text);
    EXPECT_EQ(*parse_duration(format_duration(d)), d) << text;
  }
}

TEST(FormatUtc, CalendarDateToTheMinute) {
  EXPECT_EQ(format_utc(time_from_ms(0)), "1970-01-01 00:00 UTC");
  // 2026-12-04 10:00:59.999 UTC: seconds are dropped, not rounded.
  EXPECT_EQ(format_utc(time_from_ms(1'796'378'459'999)), "2026-12-04 10:00 UTC");
  // A leap day, and the last minute of a year.
  EXPECT_EQ(format_utc(time_from_ms(1'709'164'800'000)), "2024-02-29 00:00 UTC");
  EXPECT_EQ(format_utc(time_from_ms(1'798'761'540'000)), "2026-12-31 23:59 UTC");
}

TEST(ParseUtc, DatesAndTimesAsPeopleWriteThem) {
  EXPECT_EQ(*parse_utc("2026-12-04"), time_from_ms(1'796'342'400'000));
  EXPECT_EQ(*parse_utc("2026-12-04T10:00:59Z"), time_from_ms(1'796'378'459'000));
  EXPECT_EQ(*parse_utc("2026-12-04T10:00"), time_from_ms(1'796'378'400'000));
  EXPECT_EQ(*parse_utc("2024-02-29 00:00:00"), time_from_ms(1'709'164'800'000));
  for (const Time t : {time_from_ms(0), time_from_ms(1'798'761'540'000)}) {
    const std::string printed = format_utc(t);  // "YYYY-MM-DD hh:mm UTC"
    EXPECT_EQ(*parse_utc(printed.substr(0, 16)), t) << printed;
  }
  for (const char* bad : {"", "2026-13-01", "2026-02-30", "2026-12-04T25:00", "2026-12-04T10",
                          "2026-12-04T10:00+02:00", "26-12-04", "tomorrow"}) {
    const auto r = parse_utc(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("must be a UTC date"), std::string::npos) << bad;
  }
}

TEST(ParseMemory, BinaryAndDecimalUnits) {
  EXPECT_EQ(*parse_memory_mib("120Gi"), 120 * 1024);
  EXPECT_EQ(*parse_memory_mib("512Mi"), 512);
  EXPECT_EQ(*parse_memory_mib("1Ti"), 1024 * 1024);
  EXPECT_EQ(*parse_memory_mib("1Ki"), 1);      // rounded up to a whole MiB
  EXPECT_EQ(*parse_memory_mib("80G"), 76294);  // 80e9 bytes, rounded up
  EXPECT_EQ(*parse_memory_mib("1048576"), 1);
}

TEST(ParseMemory, RejectsWithAReason) {
  for (const char* bad : {"", "Gi", "12GB", "1.5Gi", "-1Gi", "99999999999Ti"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(parse_memory_mib(bad).ok());
  }
}

TEST(FormatBytes, UsesTheLargestUnitUnder1024) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(3584), "3.5 KiB");
  EXPECT_EQ(format_bytes(std::int64_t{12} << 20), "12.0 MiB");
  EXPECT_EQ(format_bytes(std::int64_t{3} << 29), "1.5 GiB");
  EXPECT_EQ(format_bytes(std::int64_t{2} << 40), "2.0 TiB");
}

TEST(FormatMemory, PrefersWholeGi) {
  EXPECT_EQ(format_memory_mib(120 * 1024), "120Gi");
  EXPECT_EQ(format_memory_mib(1536), "1536Mi");
}

}  // namespace
}  // namespace corral::core
