// SourceFile's line index and the UTF-8 check, against plain byte-at-a-time references: both have
// fast paths (memchr for newlines when a text has no carriage return, eight ASCII bytes at a time),
// which must give the same answers at every offset and for every line ending.
#include <gtest/gtest.h>

#include <random>
#include <string>
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

size_t reference_invalid_utf8(const std::string& s) {
  size_t i = 0, n = s.size();
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) { ++i; continue; }
    size_t len;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; }
    else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; }
    else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; }
    else return i;
    if (i + len > n) return i;
    for (size_t k = 1; k < len; ++k) {
      unsigned char d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (d & 0x3F);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return i;
    i += len;
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
