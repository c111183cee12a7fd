// SourceFile: one file's bytes and a line index. Offsets are bytes everywhere inside trainlint;
// columns are converted (code points for humans, UTF-16 for LSP) only at the edges.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tl {

struct LineCol {
  uint32_t line = 0;  // 1-based
  uint32_t col = 0;   // 1-based, in Unicode code points
};

// Where a line of a notebook's joined code comes from: the cell (1-based, counting every cell,
// markdown included, as a reader scrolls the notebook) and the line inside that cell (1-based).
struct CellLine {
  uint32_t cell = 0;
  uint32_t line = 0;
};

class SourceFile {
 public:
  SourceFile() = default;
  SourceFile(std::string path, std::string text);

  const std::string& path() const { return path_; }
  // Where the file lives, whatever the spelling of its path on the command line: its absolute,
  // lexically normal path and its path inside its project (relative to the project root). The
  // program model names modules and resolves imports with these, so that a file's analysis does
  // not depend on the working folder. Both default to path().
  void set_origin(std::string abs_path, std::string project_path) {
    abs_path_ = std::move(abs_path);
    project_path_ = std::move(project_path);
  }
  const std::string& abs_path() const { return abs_path_.empty() ? path_ : abs_path_; }
  const std::string& project_path() const { return project_path_.empty() ? path_ : project_path_; }
  const std::string& text() const { return text_; }
  std::string_view slice(uint32_t begin, uint32_t end) const;

  uint32_t line_count() const { return static_cast<uint32_t>(line_starts_.size()); }
  // 0-based line index of a byte offset.
  uint32_t line_index(uint32_t offset) const;
  LineCol line_col(uint32_t offset) const;
  // The text of a 1-based line, without its line terminator.
  std::string_view line_text(uint32_t line) const;
  uint32_t line_start(uint32_t line) const;  // 1-based line -> byte offset
  // UTF-16 column (0-based) of a byte offset, for the LSP edge.
  uint32_t utf16_col(uint32_t offset) const;

  // Notebooks (.ipynb): the text is the code cells joined in order (see analyzer/core/notebook.h)
  // and every line maps back to its cell. Empty for plain source files.
  bool is_notebook() const { return !cell_lines_.empty(); }
  void set_cell_lines(std::vector<CellLine> m) { cell_lines_ = std::move(m); }
  // The cell and cell line of a 1-based line of the joined text; {0, line} outside a notebook.
  CellLine cell_line(uint32_t line) const {
    if (line == 0 || line > cell_lines_.size()) return {0, line};
    return cell_lines_[line - 1];
  }

 private:
  std::string path_;
  std::string abs_path_, project_path_;
  std::string text_;
  std::vector<uint32_t> line_starts_;
  std::vector<CellLine> cell_lines_;
};

// Validates UTF-8; returns the byte offset of the first invalid sequence, or npos.
size_t first_invalid_utf8(std::string_view s);

}  // namespace tl
