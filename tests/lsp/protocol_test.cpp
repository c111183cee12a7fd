// The LSP edge: positions in the three encodings, clamping, incremental changes, file URIs.
#include <gtest/gtest.h>

#include "analyzer/lsp/protocol.h"

using namespace tl::lsp;

TEST(LspProtocol, PositionsCountCodeUnitsOfTheNegotiatedEncoding) {
  // "x = '步🚀'; y" : 步 is 3 UTF-8 bytes and 1 UTF-16 unit, 🚀 4 bytes and 2 UTF-16 units
  std::string text = "a\nx = '\xE6\xAD\xA5\xF0\x9F\x9A\x80'; y\n";
  LineIndex idx(text);
  uint32_t y = static_cast<uint32_t>(text.find('y'));
  EXPECT_EQ(idx.position(y, Encoding::Utf16), (Position{1, 11}));
  EXPECT_EQ(idx.position(y, Encoding::Utf8), (Position{1, 15}));
  EXPECT_EQ(idx.position(y, Encoding::Utf32), (Position{1, 10}));
  EXPECT_EQ(idx.offset({1, 11}, Encoding::Utf16), y);
  EXPECT_EQ(idx.offset({1, 15}, Encoding::Utf8), y);
  EXPECT_EQ(idx.offset({1, 10}, Encoding::Utf32), y);
  // inside the surrogate pair of 🚀: the offset stays before the emoji, never inside its bytes
  uint32_t rocket = static_cast<uint32_t>(text.find("\xF0"));
  EXPECT_EQ(idx.offset({1, 7}, Encoding::Utf16), rocket);
}

TEST(LspProtocol, OutOfRangePositionsAreClamped) {
  std::string text = "ab\r\ncd\n";
  LineIndex idx(text);
  EXPECT_EQ(idx.offset({0, 99}, Encoding::Utf16), 2u) << "end of the line, before its CRLF";
  EXPECT_EQ(idx.offset({99, 0}, Encoding::Utf16), text.size());
  EXPECT_EQ(idx.position(1000, Encoding::Utf16), (Position{2, 0}));
}

TEST(LspProtocol, IncrementalChangesApplyInOrder) {
  std::string text = "def f():\n    return 1\n";
  apply_change(text, {Range{{1, 11}, {1, 12}}, "2"}, Encoding::Utf16);
  apply_change(text, {Range{{0, 0}, {0, 0}}, "import gc\n"}, Encoding::Utf16);
  EXPECT_EQ(text, "import gc\ndef f():\n    return 2\n");
  apply_change(text, {std::nullopt, "x = 1\n"}, Encoding::Utf16);
  EXPECT_EQ(text, "x = 1\n");
}

TEST(LspProtocol, FileUris) {
  EXPECT_EQ(uri_to_path("file:///home/me/my%20project/train.py"), "/home/me/my project/train.py");
  EXPECT_EQ(uri_to_path("FILE://localhost/tmp/a.py"), "/tmp/a.py");
  EXPECT_EQ(uri_to_path("untitled:Untitled-1"), "");
  EXPECT_EQ(uri_to_path("file://otherhost/tmp/a.py"), "");
  EXPECT_EQ(path_to_uri("/home/me/my project/训练.py"), "file:///home/me/my%20project/%E8%AE%AD%E7%BB%83.py");
  EXPECT_EQ(uri_to_path(path_to_uri("/a b/c#d.py")), "/a b/c#d.py");
}
