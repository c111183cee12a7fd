#include "analyzer/core/source_file.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace tl {

SourceFile::SourceFile(std::string path, std::string text) : path_(std::move(path)), text_(std::move(text)) {
  line_starts_.push_back(0);
  if (std::memchr(text_.data(), '\r', text_.size()) == nullptr) {
    // no carriage return (nearly every file): the line ends are the newlines, found with memchr
    const char* p = text_.data();
    const char* end = p + text_.size();
    while (p < end) {
      const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
      if (!nl) break;
      line_starts_.push_back(static_cast<uint32_t>(nl + 1 - text_.data()));
      p = nl + 1;
    }
    return;
  }
  for (uint32_t i = 0; i < text_.size(); ++i) {
    char c = text_[i];
    if (c == '\n') {
      line_starts_.push_back(i + 1);
    } else if (c == '\r') {
      if (i + 1 < text_.size() && text_[i + 1] == '\n') ++i;
      line_starts_.push_back(i + 1);
    }
  }
}

std::string_view SourceFile::slice(uint32_t begin, uint32_t end) const {
  if (begin > text_.size()) begin = static_cast<uint32_t>(text_.size());
  if (end > text_.size()) end = static_cast<uint32_t>(text_.size());
  if (end < begin) end = begin;
  return std::string_view(text_).substr(begin, end - begin);
}

uint32_t SourceFile::line_index(uint32_t offset) const {
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  return static_cast<uint32_t>(it - line_starts_.begin()) - 1;
}

static uint32_t count_code_points(std::string_view s) {
  uint32_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

LineCol SourceFile::line_col(uint32_t offset) const {
  if (offset > text_.size()) offset = static_cast<uint32_t>(text_.size());
  uint32_t li = line_index(offset);
  uint32_t start = line_starts_[li];
  return {li + 1, count_code_points(std::string_view(text_).substr(start, offset - start)) + 1};
}

uint32_t SourceFile::line_start(uint32_t line) const {
  if (line == 0) return 0;
  if (line > line_starts_.size()) return static_cast<uint32_t>(text_.size());
  return line_starts_[line - 1];
}

std::string_view SourceFile::line_text(uint32_t line) const {
  if (line == 0 || line > line_starts_.size()) return {};
  uint32_t b = line_starts_[line - 1];
  uint32_t e = line < line_starts_.size() ? line_starts_[line] : static_cast<uint32_t>(text_.size());
  while (e > b && (text_[e - 1] == '\n' || text_[e - 1] == '\r')) --e;
  return std::string_view(text_).substr(b, e - b);
}

uint32_t SourceFile::utf16_col(uint32_t offset) const {
  if (offset > text_.size()) offset = static_cast<uint32_t>(text_.size());
  uint32_t start = line_starts_[line_index(offset)];
  uint32_t units = 0;
  for (uint32_t i = start; i < offset; ++i) {
    unsigned char c = static_cast<unsigned char>(text_[i]);
    if ((c & 0xC0) == 0x80) continue;
    units += (c >= 0xF0) ? 2 : 1;
  }
  return units;
}

size_t first_invalid_utf8(std::string_view s) {
  size_t i = 0, n = s.size();
  while (i < n) {
    // ASCII, eight bytes at a time
    uint64_t w;
    while (i + 8 <= n && (std::memcpy(&w, s.data() + i, 8), (w & 0x8080808080808080ull) == 0)) i += 8;
    if (i >= n) break;
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
  return std::string_view::npos;
}

}  // namespace tl
