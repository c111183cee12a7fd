// Jupyter notebooks (.ipynb, nbformat 4): the code cells, in order, become one Python module.
//
// The SourceFile's text is every code cell's source, each ending with a newline, one after the
// other. A line that is IPython and not Python (a line magic, a shell escape, a help request, the
// body of a non-Python cell magic) stays in the text as a line of its own with the Python part
// removed, so that every line of the text is one line of one cell; SourceFile::cell_line maps it
// back. Markdown and raw cells add no lines but are counted, so cell numbers are the ones a reader
// counts scrolling the notebook. Outputs are never read. docs/notebooks.md describes it for users.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/core/finding.h"
#include "analyzer/core/source_file.h"

namespace tl {

// Is `path` a notebook (ends in `.ipynb`)?
bool is_notebook_path(std::string_view path);

// The notebook `path` whose bytes are `json`, as a SourceFile of its code cells (path = `path`).
// Null when it cannot be linted, with a warning appended to `messages` that says why: not JSON
// (with the position in the .ipynb file), not a notebook, nbformat 3 or older, a cell of the wrong
// shape, or a notebook in another language than Python. An empty notebook, or one with only
// markdown, is an empty SourceFile.
std::unique_ptr<SourceFile> read_notebook(const std::string& path, std::string_view json,
                                          std::vector<FileMessage>& messages);

// One code cell's source turned into Python, line for line: the result has exactly as many lines
// as `cell` (a last line without a newline counts; "" has none), each ending with '\n', CR LF and
// CR turned into '\n'. Exposed for tests.
std::string notebook_cell_python(std::string_view cell);

}  // namespace tl
