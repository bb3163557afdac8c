// core::DecodeMemo: a text read again is not decoded again, a hit is exactly what
// decoding gives, errors are never kept, the capacity bounds what is kept, and
// concurrent readers agree.
#include "core/decode_memo.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/status.h"

namespace corral::core {
namespace {

// A decoder that counts its calls: the text's length, or an error for "bad".
struct CountingDecode {
  std::atomic<int>* calls;
  Result<std::size_t> operator()(std::string_view text) const {
    ++*calls;
    if (text == "bad") return invalid_argument("text", "cannot decode");
    return text.size();
  }
};

TEST(DecodeMemo, DecodesEachDistinctTextOnce) {
  std::atomic<int> calls = 0;
  DecodeMemo<std::size_t> memo(16);
  const CountingDecode decode{&calls};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(*memo.get("abc", decode), 3u);
    EXPECT_EQ(*memo.get("abcdef", decode), 6u);
  }
  EXPECT_EQ(calls.load(), 2);
  // Only the exact text hits: a text that differs in one byte is decoded.
  EXPECT_EQ(*memo.get(std::string("abd"), decode), 3u);
  EXPECT_EQ(calls.load(), 3);
  EXPECT_EQ(memo.size(), 3u);
}

TEST(DecodeMemo, NeverKeepsAnError) {
  std::atomic<int> calls = 0;
  DecodeMemo<std::size_t> memo(16);
  const CountingDecode decode{&calls};
  for (int i = 0; i < 3; ++i) {
    const auto r = memo.get("bad", decode);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().field(), "text");
    EXPECT_EQ(r.status().message(), "cannot decode");
  }
  EXPECT_EQ(calls.load(), 3) << "each read of a bad text reports its error";
  EXPECT_EQ(memo.size(), 0u);
}

TEST(DecodeMemo, ForgetsEverythingAtCapacityAndFillsAgain) {
  std::atomic<int> calls = 0;
  DecodeMemo<std::size_t> memo(4);
  const CountingDecode decode{&calls};
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(memo.get(std::string(i + 1, 'x'), decode).ok());
  EXPECT_EQ(memo.size(), 4u);
  ASSERT_TRUE(memo.get("y", decode).ok());  // the fifth: the four are forgotten
  EXPECT_EQ(memo.size(), 1u);
  EXPECT_EQ(*memo.get("x", decode), 1u);  // decoded again, still right
  EXPECT_EQ(calls.load(), 6);
}

TEST(DecodeMemo, ConcurrentReadersGetTheDecodedValue) {
  std::atomic<int> calls = 0;
  DecodeMemo<std::size_t> memo(8);  // small: the threads also race the clearing
  const CountingDecode decode{&calls};
  std::atomic<int> wrong = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        const std::string text((i * 7 + t) % 13 + 1, 'z');
        const auto r = memo.get(text, decode);
        if (!r.ok() || *r != text.size()) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_LE(memo.size(), 8u);
  // Still a memo after the races: a text read twice is decoded once. (How many of the
  // threads' reads hit depends on the interleaving: 13 texts cycle through 8 places.)
  ASSERT_TRUE(memo.get("after", decode).ok());
  const int after = calls.load();
  EXPECT_EQ(*memo.get("after", decode), 5u);
  EXPECT_EQ(calls.load(), after);
}

}  // namespace
}  // namespace corral::core
