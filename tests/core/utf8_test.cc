// Where a document stops being UTF-8, named as the API names fields (core/utf8.h).
#include "core/utf8.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace corral::core {
namespace {

TEST(InvalidUtf8Offset, FindsTheFirstBadByte) {
  EXPECT_EQ(invalid_utf8_offset(""), std::nullopt);
  EXPECT_EQ(invalid_utf8_offset("plain \xc3\xa9 \xf0\x9f\x98\x80"), std::nullopt);  // é, emoji
  EXPECT_EQ(invalid_utf8_offset("ab\xff"), 2u);
  EXPECT_EQ(invalid_utf8_offset("a\xc0\xaf"), 1u);          // overlong '/'
  EXPECT_EQ(invalid_utf8_offset("a\xed\xa0\x80"), 1u);      // a UTF-16 surrogate
  EXPECT_EQ(invalid_utf8_offset("a\xf4\x90\x80\x80"), 1u);  // past U+10FFFF
  EXPECT_EQ(invalid_utf8_offset("a\xc3"), 1u);              // cut short
}

TEST(CheckJsonUtf8, NamesTheFieldHoldingTheByte) {
  struct Utf8Case {
    std::string name, text, field, message;
  };
  const std::vector<Utf8Case> cases = {
      {"top-level value", "{\"name\": \"\xff\"}", "name",
       "must be valid UTF-8, got byte 0xff at line 1, column 11"},
      {"nested list item", "{\"r\": {\"n\": 1, \"t\": [\"H100\", \"x\xfe\"]}}", "r.t[1]",
       "must be valid UTF-8, got byte 0xfe at line 1, column 32"},
      {"a key", "{\"env\": {\"A\": \"x\", \"\xff\": \"y\"}}", "env",
       "has a key that is not valid UTF-8, got byte 0xff at line 1, column 21"},
      {"a top-level key", "{\"\xff\": 1}", "",
       "document has a key that is not valid UTF-8, got byte 0xff at line 1, column 3"},
      {"lists in mappings in lists", "{\"a\": [[1], {\"b\": [2, \"\xc0\x80\"]}]}", "a[1].b[1]",
       "must be valid UTF-8, got byte 0xc0 at line 1, column 24"},
      {"second line", "{\"a\": 1,\n \"b\": \"\xff\"}", "b",
       "must be valid UTF-8, got byte 0xff at line 2, column 8"},
      // A syntax error before the byte says nothing about where it is.
      {"broken before", "{\"a\": 1 \"b\": \"\xff\"}", "",
       "document must be valid UTF-8, got byte 0xff at line 1, column 15"},
      {"not json (yaml)", "name: \"\xff\"\n", "",
       "document must be valid UTF-8, got byte 0xff at line 1, column 8"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const Status s = check_json_utf8(c.text);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(s.field(), c.field);
    EXPECT_EQ(s.message(), c.message);
  }
  EXPECT_TRUE(check_json_utf8("{\"ok\": \"\xc3\xa9\"}").ok());
}

}  // namespace
}  // namespace corral::core
