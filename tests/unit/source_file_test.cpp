// SourceFile's line index and the UTF-8 check, against independent references (a byte-at-a-time
// line scan; the Unicode standard's table of well-formed sequences): both have fast paths (memchr
// for newlines when a text has no carriage return, eight ASCII bytes at a time), which must give
// the same answers at every offset and for every line ending.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/core/source_file.h"

using namespace tl;

namespace {

std::vector<uint32_t> reference_line_starts(const std::string& t) {
  std::vector<uint32_t> out{0};
  for (uint32_t i = 0; i < t.size(); ++i) {
    if (t[i] == '\n') out.push_back(i + 1);
    else if (t[i] == '\r') {
      if (i + 1 < t.size() && t[i + 1] == '\n') ++i;
      out.push_back(i + 1);
    }
  }
  return out;
}

// The well-formed byte sequences of the Unicode standard's table 3-7, row by row: an oracle that
// shares nothing with the decoder under test (which computes code points and range-checks them).
size_t reference_invalid_utf8(const std::string& s) {
  struct Row {
    unsigned char lo, hi;                                     // the lead byte
    std::vector<std::pair<unsigned char, unsigned char>> rest;  // each continuation byte's range
  };
  static const std::vector<Row> rows = {
      {0x00, 0x7F, {}},
      {0xC2, 0xDF, {{0x80, 0xBF}}},
      {0xE0, 0xE0, {{0xA0, 0xBF}, {0x80, 0xBF}}},
      {0xE1, 0xEC, {{0x80, 0xBF}, {0x80, 0xBF}}},
      {0xED, 0xED, {{0x80, 0x9F}, {0x80, 0xBF}}},
      {0xEE, 0xEF, {{0x80, 0xBF}, {0x80, 0xBF}}},
      {0xF0, 0xF0, {{0x90, 0xBF}, {0x80, 0xBF}, {0x80, 0xBF}}},
      {0xF1, 0xF3, {{0x80, 0xBF}, {0x80, 0xBF}, {0x80, 0xBF}}},
      {0xF4, 0xF4, {{0x80, 0x8F}, {0x80, 0xBF}, {0x80, 0xBF}}},
  };
  size_t i = 0;
  while (i < s.size()) {
    const auto lead = static_cast<unsigned char>(s[i]);
    const Row* row = nullptr;
    for (const Row& r : rows)
      if (lead >= r.lo && lead <= r.hi) row = &r;
    if (!row || i + 1 + row->rest.size() > s.size()) return i;
    for (size_t k = 0; k < row->rest.size(); ++k) {
      const auto b = static_cast<unsigned char>(s[i + 1 + k]);
      if (b < row->rest[k].first || b > row->rest[k].second) return i;
    }
    i += 1 + row->rest.size();
  }
  return std::string::npos;
}

std::vector<uint32_t> line_starts(const SourceFile& f) {
  std::vector<uint32_t> out;
  for (uint32_t l = 1; l <= f.line_count(); ++l) out.push_back(f.line_start(l));
  return out;
}

}  // namespace

TEST(SourceFileText, LineStartsForEveryLineEnding) {
  for (std::string t : {"", "a", "a\n", "\n\n", "a\nb", "a\r\nb\r\n", "a\rb\r", "a\r\n\rb\n\r\n", "x = 1\r", "\r\n"}) {
    SourceFile f("t.py", t);
    EXPECT_EQ(line_starts(f), reference_line_starts(t)) << testing::PrintToString(t);
  }
  std::mt19937 rng(7);
  const char pieces[] = {'a', 'b', ' ', '\n', '\r'};
  for (int round = 0; round < 300; ++round) {
    std::string t;
    size_t len = rng() % 200;
    for (size_t i = 0; i < len; ++i) t.push_back(pieces[rng() % (round % 2 ? 4 : 5)]);  // half without '\r'
    SourceFile f("t.py", t);
    EXPECT_EQ(line_starts(f), reference_line_starts(t)) << testing::PrintToString(t);
  }
}

TEST(SourceFileText, InvalidUtf8FoundAtEveryOffset) {
  const std::vector<std::string> bad = {"\xff", "\xc0\xaf", "\xe2\x82", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\x80"};
  const std::vector<std::string> good = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"};
  for (size_t prefix = 0; prefix < 20; ++prefix)
    for (size_t suffix = 0; suffix < 10; suffix += 3) {
      for (auto& b : bad) {
        std::string s = std::string(prefix, 'x') + b + std::string(suffix, 'y');
        EXPECT_EQ(first_invalid_utf8(s), reference_invalid_utf8(s)) << prefix << " " << testing::PrintToString(s);
        EXPECT_EQ(first_invalid_utf8(s), prefix);
      }
      for (auto& g : good) {
        std::string s = std::string(prefix, 'x') + g + std::string(suffix, 'y') + g;
        EXPECT_EQ(first_invalid_utf8(s), std::string::npos) << testing::PrintToString(s);
      }
    }
  std::mt19937 rng(11);
  for (int round = 0; round < 2000; ++round) {
    std::string s;
    size_t len = rng() % 40;
    for (size_t i = 0; i < len; ++i) s.push_back(rng() % 8 ? static_cast<char>('a' + rng() % 26) : static_cast<char>(rng() % 256));
    EXPECT_EQ(first_invalid_utf8(s), reference_invalid_utf8(s)) << testing::PrintToString(s);
  }
}
