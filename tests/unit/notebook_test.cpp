// Notebooks: the .ipynb reader (cells joined into one module, IPython lines dropped line for line,
// the shapes and errors it meets), the exactness of its line -> cell map, and notebooks through
// the whole lint and the text and JSON reporters.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "analyzer/core/notebook.h"
#include "analyzer/report/report.h"
#include "support/test_support.h"

using namespace tl;
using nlohmann::json;

namespace {

const std::string kFixtures = "tests/fixtures/notebooks/";

json metadata(const std::string& lang = "python") {
  return {{"kernelspec", {{"display_name", "Python 3 (ipykernel)"}, {"language", lang}, {"name", "python3"}}},
          {"language_info", {{"name", lang}, {"version", "3.11.4"}, {"file_extension", ".py"}}}};
}

// A cell of nbformat 4.5; `source` is a string or a list of strings, as in real files.
json cell(const std::string& type, json source) {
  json c = {{"cell_type", type},
            {"id", "c" + std::to_string(std::hash<std::string>{}(source.dump()) % 100000)},
            {"metadata", json::object()},
            {"source", std::move(source)}};
  if (type == "code") {
    c["execution_count"] = nullptr;
    c["outputs"] = json::array();
  }
  return c;
}
json code(json source) { return cell("code", std::move(source)); }
json markdown(json source) { return cell("markdown", std::move(source)); }

std::string notebook(std::vector<json> cells, json meta = metadata()) {
  return json{{"cells", cells}, {"metadata", meta}, {"nbformat", 4}, {"nbformat_minor", 5}}.dump(1);
}

struct Read {
  std::unique_ptr<SourceFile> src;
  std::vector<FileMessage> messages;
};

Read read(const std::string& text, const std::string& path = "nb.ipynb") {
  Read r;
  r.src = read_notebook(path, text, r.messages);
  return r;
}

// The one warning a notebook that cannot be linted leaves.
std::string failure(const std::string& text) {
  Read r = read(text);
  EXPECT_EQ(r.src, nullptr);
  if (r.messages.size() != 1) return "<" + std::to_string(r.messages.size()) + " messages>";
  EXPECT_EQ(r.messages[0].kind, FileMessage::Kind::Warning);
  EXPECT_EQ(r.messages[0].path, "nb.ipynb");
  return r.messages[0].message;
}

std::string fixture_text(const std::string& name) {
  return test::read_file(test::source_dir() + "/" + kFixtures + name);
}

std::unique_ptr<SourceFile> fixture(const std::string& name) {
  std::vector<FileMessage> messages;
  auto src = read_notebook(kFixtures + name, fixture_text(name), messages);
  EXPECT_TRUE(messages.empty()) << messages.front().message;
  return src;
}

LintResult lint(std::vector<std::unique_ptr<SourceFile>> files) {
  LintOptions o;
  o.threads = 1;
  return lint_sources(std::move(files), o);
}

LintResult lint_one(std::unique_ptr<SourceFile> f) {
  std::vector<std::unique_ptr<SourceFile>> v;
  v.push_back(std::move(f));
  return lint(std::move(v));
}

const SourceFile& source_of(const LintResult& res, const std::string& path) {
  for (auto& m : res.model->modules())
    if (m->path == path) return *m->src;
  throw std::runtime_error("no module " + path);
}

// (code, cell, line in cell, column) of every finding.
std::vector<std::tuple<std::string, uint32_t, uint32_t, uint32_t>> cell_positions(const LintResult& res) {
  std::vector<std::tuple<std::string, uint32_t, uint32_t, uint32_t>> out;
  for (auto& f : res.findings) {
    CellLine cl = source_of(res, f.path).cell_line(f.range.start.line);
    out.emplace_back(f.code, cl.cell, cl.line, f.range.start.col);
  }
  return out;
}

const Finding& finding(const LintResult& res, const std::string& code, size_t n = 0) {
  for (auto& f : res.findings)
    if (f.code == code && n-- == 0) return f;
  throw std::runtime_error("no finding " + code);
}

std::string text_report(const LintResult& res, std::string* err = nullptr) {
  std::ostringstream out, e;
  report::TextOptions o;
  report::write_text(out, e, res, o);
  if (err) *err = e.str();
  return out.str();
}

}  // namespace

// ---- the reader: cells into one module -------------------------------------------------------

TEST(NotebookReader, CodeCellsJoinedInOrderEachEndingWithANewline) {
  auto r = read(notebook({markdown("# Title\n"), code(json::array({"import torch\n", "x = torch.ones(3)"})),
                          code("y = x * 2\nprint(y)\n"), markdown(json::array({"done"}))}));
  ASSERT_NE(r.src, nullptr);
  EXPECT_TRUE(r.messages.empty());
  EXPECT_EQ(r.src->path(), "nb.ipynb");
  EXPECT_TRUE(r.src->is_notebook());
  // the first code cell's last line had no newline: it gets one, so cell 3 starts on its own line
  EXPECT_EQ(r.src->text(), "import torch\nx = torch.ones(3)\ny = x * 2\nprint(y)\n");
  EXPECT_EQ(r.src->cell_line(1).cell, 2u);
  EXPECT_EQ(r.src->cell_line(1).line, 1u);
  EXPECT_EQ(r.src->cell_line(2).cell, 2u);
  EXPECT_EQ(r.src->cell_line(2).line, 2u);
  EXPECT_EQ(r.src->cell_line(3).cell, 3u);  // markdown cell 1 counts
  EXPECT_EQ(r.src->cell_line(3).line, 1u);
  EXPECT_EQ(r.src->cell_line(4).cell, 3u);
  EXPECT_EQ(r.src->cell_line(4).line, 2u);
}

TEST(NotebookReader, SourceAsStringOrListGivesTheSameText) {
  auto a = read(notebook({code("for i in range(3):\n    print(i)\n")}));
  auto b = read(notebook({code(json::array({"for i in range(3):\n", "    print(i)\n"}))}));
  // a list whose strings are not split at newlines is concatenated all the same
  auto c = read(notebook({code(json::array({"for i in ra", "nge(3):\n    print(", "i)\n"}))}));
  ASSERT_TRUE(a.src && b.src && c.src);
  EXPECT_EQ(a.src->text(), "for i in range(3):\n    print(i)\n");
  EXPECT_EQ(b.src->text(), a.src->text());
  EXPECT_EQ(c.src->text(), a.src->text());
}

TEST(NotebookReader, CrLfAndCrInsideSourcesBecomeNewlines) {
  auto r = read(notebook({code("a = 1\r\nb = 2\r\n"), code("c = 3\rd = 4"), code("e = 5\r\n\r\nf = 6")}));
  ASSERT_NE(r.src, nullptr);
  EXPECT_EQ(r.src->text(), "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n\nf = 6\n");
  EXPECT_EQ(r.src->cell_line(4).cell, 2u);
  EXPECT_EQ(r.src->cell_line(4).line, 2u);
  EXPECT_EQ(r.src->cell_line(7).cell, 3u);
  EXPECT_EQ(r.src->cell_line(7).line, 3u);
}

TEST(NotebookReader, EmptyCellsAddNoLinesButCount) {
  auto r = read(notebook({code(""), code(json::array()), code("\n"), code("x = 1")}));
  ASSERT_NE(r.src, nullptr);
  EXPECT_EQ(r.src->text(), "\nx = 1\n");  // cell 3 is one empty line
  EXPECT_EQ(r.src->cell_line(1).cell, 3u);
  EXPECT_EQ(r.src->cell_line(2).cell, 4u);
  EXPECT_EQ(r.src->cell_line(2).line, 1u);
}

TEST(NotebookReader, EmptyNotebookAndMarkdownOnlyNotebookAreEmptySources) {
  for (auto text : {notebook({}), notebook({markdown("# Notes\n\nNothing to run yet."), cell("raw", "raw text")})}) {
    auto r = read(text);
    ASSERT_NE(r.src, nullptr);
    EXPECT_TRUE(r.messages.empty());
    EXPECT_EQ(r.src->text(), "");
    // nothing to lint, and linting it finds nothing and says nothing
    auto res = lint_one(std::move(r.src));
    EXPECT_TRUE(res.findings.empty());
    EXPECT_TRUE(res.messages.empty());
    EXPECT_EQ(res.files_analysed, 1u);
  }
}

TEST(NotebookReader, EndOfFileMapsJustPastTheLastCell) {
  auto r = read(notebook({code("a = 1\n"), markdown("x"), code("b = 2\nc = 3")}));
  ASSERT_NE(r.src, nullptr);
  ASSERT_EQ(r.src->line_count(), 4u);  // three lines and the empty line after the last newline
  EXPECT_EQ(r.src->cell_line(4).cell, 3u);
  EXPECT_EQ(r.src->cell_line(4).line, 3u);
  // past the file: not in the notebook
  EXPECT_EQ(r.src->cell_line(5).cell, 0u);
}

TEST(NotebookReader, ByteOrderMarkBeforeTheJsonIsAccepted) {
  auto r = read("\xEF\xBB\xBF" + notebook({code("import torch\n")}));
  ASSERT_NE(r.src, nullptr) << (r.messages.empty() ? "" : r.messages[0].message);
  EXPECT_EQ(r.src->text(), "import torch\n");
}

TEST(NotebookReader, NonAsciiSourceKeepsCodePointColumns) {
  auto r = read(notebook({code("# température\nname = \"été\"; gc.collect()\n")}));
  ASSERT_NE(r.src, nullptr);
  auto at = r.src->text().find("gc.collect");
  EXPECT_EQ(r.src->line_col(static_cast<uint32_t>(at)).col, 15u);  // é is one column
}

// ---- IPython lines ------------------------------------------------------------------------

TEST(NotebookMagics, LineMagicsShellEscapesAndHelpBecomeEmptyLines) {
  std::string cell =
      "%matplotlib inline\n"
      "!pip install -q timm\n"
      "!!ls\n"
      "%time x = f()\n"
      "files = !ls data\n"
      "home = %env HOME\n"
      "cfg['path'] = !pwd\n"
      "model?\n"
      "torch.nn.Module.forward??\n"
      "??DataLoader\n"
      "?\n"
      "%timeit?\n"
      "x = torch.ones?\n"
      "/print hello world\n"
      ",f a b\n"
      ";f a b\n"
      "y = 1\n";
  EXPECT_EQ(notebook_cell_python(cell), std::string(16, '\n') + "y = 1\n");
}

TEST(NotebookMagics, IndentedEscapesKeepTheirBlockValidWithPass) {
  std::string cell =
      "for epoch in range(3):\n"
      "    train_one_epoch()\n"
      "    !nvidia-smi\n"
      "if debug:\n"
      "    %time evaluate()\n"
      "    out = !ls\n"
      "\tfiles = %sx ls\n";
  EXPECT_EQ(notebook_cell_python(cell),
            "for epoch in range(3):\n"
            "    train_one_epoch()\n"
            "    pass\n"
            "if debug:\n"
            "    pass\n"
            "    pass\n"
            "\tpass\n");
}

TEST(NotebookMagics, ShellEscapeContinuedWithBackslashesIsDroppedWhole) {
  std::string cell =
      "!pip install torch \\\n"
      "    torchvision \\\n"
      "    timm\n"
      "import timm\n";
  EXPECT_EQ(notebook_cell_python(cell), "\n\n\nimport timm\n");
}

TEST(NotebookMagics, PythonThatLooksLikeAnEscapeIsKept) {
  std::string cell =
      "rest = total % batch\n"
      "same = a != b\n"
      "x = (a\n"
      "     % b)\n"
      "y = a \\\n"
      "    % b\n"
      "doc = \"\"\"\n"
      "%matplotlib inline\n"
      "!pip install x\n"
      "what?\n"
      "\"\"\"\n"
      "q = \"why?\"\n"
      "r = 'a # b?'\n"
      "z = 1  # is this right?\n"
      "# what does this do?\n"
      "s = 'it\\'s' + \"\"\"one ? line\"\"\"\n"
      "w = a if b else c  # ok\n"
      "t = f(x=1, y=!z)\n";  // not Python at all, but not an escape either: IPython keeps it
  EXPECT_EQ(notebook_cell_python(cell), cell);
}

TEST(NotebookMagics, PythonBodiedCellMagicsDropOnlyTheirLine) {
  EXPECT_EQ(notebook_cell_python("%%time\nfor b in loader:\n    step(b)\n"), "\nfor b in loader:\n    step(b)\n");
  EXPECT_EQ(notebook_cell_python("%%timeit -n 10 -r 3 setup()\nf()\n"), "\nf()\n");
  EXPECT_EQ(notebook_cell_python("%%capture out\n!pip install x\nimport x\n"), "\n\nimport x\n");
  EXPECT_EQ(notebook_cell_python("%%prun -s cumulative\ntrain()\n"), "\ntrain()\n");
  EXPECT_EQ(notebook_cell_python("%%debug\ntrain()\n"), "\ntrain()\n");
  // stacked, after blank lines, indented
  EXPECT_EQ(notebook_cell_python("\n%%capture\n  %%time\ntrain()\n"), "\n\n\ntrain()\n");
}

TEST(NotebookMagics, OtherCellMagicsDropTheWholeCell) {
  for (std::string magic : {"%%bash", "%%sh", "%%script bash", "%%writefile train.py", "%%file x.py", "%%html",
                            "%%javascript", "%%latex", "%%markdown", "%%python3", "%%sql", "%%!"}) {
    std::string cell = magic + "\nimport gc\nfor s in range(10):\n    gc.collect()\n";
    EXPECT_EQ(notebook_cell_python(cell), "\n\n\n\n") << magic;
  }
  // %%time over a non-Python magic: the time line goes, and the rest is that magic's
  EXPECT_EQ(notebook_cell_python("%%time\n%%bash\nls -la\n"), "\n\n\n");
}

TEST(NotebookMagics, MagicsAreOnlyRecognisedAtTheStartOfAStatement) {
  // a cell magic is only a cell magic on the first line
  EXPECT_EQ(notebook_cell_python("x = 1\n%%time\ny = 2\n"), "x = 1\n\ny = 2\n");
  // inside an open bracket, the line continues the expression
  std::string cell = "config = dict(\n    lr=1e-3,\n)\n%config InlineBackend.figure_format = 'retina'\n";
  EXPECT_EQ(notebook_cell_python(cell), "config = dict(\n    lr=1e-3,\n)\n\n");
}

// ---- errors are values with a message --------------------------------------------------------

TEST(NotebookErrors, NotJsonSaysWhereInTheFile) {
  std::string text = "{\n \"cells\": [\n  {\"cell_type\": \"code\",, \"source\": \"x\"}\n ]\n}\n";
  Read r = read(text);
  ASSERT_EQ(r.src, nullptr);
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_EQ(r.messages[0].kind, FileMessage::Kind::Warning);
  EXPECT_NE(r.messages[0].message.find("skipped: not valid JSON ("), std::string::npos) << r.messages[0].message;
  EXPECT_NE(r.messages[0].message.find("syntax error"), std::string::npos) << r.messages[0].message;
  ASSERT_TRUE(r.messages[0].where.has_value());
  EXPECT_EQ(r.messages[0].where->line, 3u);
  EXPECT_EQ(r.messages[0].where->col, 24u);  // the second comma
}

TEST(NotebookErrors, TruncatedFileIsNotJson) {
  std::string full = notebook({code("import torch\n")});
  Read r = read(full.substr(0, full.size() / 2));
  ASSERT_EQ(r.src, nullptr);
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_EQ(r.messages[0].message.rfind("skipped: not valid JSON (", 0), 0u) << r.messages[0].message;
  EXPECT_TRUE(r.messages[0].where.has_value());
}

TEST(NotebookErrors, NotANotebook) {
  EXPECT_EQ(failure("[1, 2, 3]"),
            "skipped: not a Jupyter notebook: the JSON document is a list, not an object with `cells`");
  EXPECT_EQ(failure(R"({"name": "package.json", "version": "1.0.0"})"),
            "skipped: not a Jupyter notebook: the JSON object has no `cells`");
  EXPECT_EQ(failure(R"({"cells": {"a": 1}, "nbformat": 4})"),
            "skipped: not a Jupyter notebook: `cells` is an object, not a list");
  EXPECT_EQ(failure(R"({"cells": [], "nbformat": "4"})"),
            "skipped: not a Jupyter notebook: `nbformat` is a string, not a version number");
}

TEST(NotebookErrors, OldFormatsSayWhichVersion) {
  std::string v3 = R"({"metadata": {"name": "old"}, "nbformat": 3, "nbformat_minor": 0,
    "worksheets": [{"cells": [{"cell_type": "code", "input": ["import torch"], "language": "python"}]}]})";
  std::string msg = failure(v3);
  EXPECT_EQ(msg.rfind("skipped: nbformat 3 notebook; only nbformat 4 is read", 0), 0u) << msg;
  EXPECT_NE(msg.find("jupyter nbconvert --to notebook --inplace"), std::string::npos);
  EXPECT_EQ(failure(R"({"nbformat": 2, "worksheets": []})").rfind("skipped: nbformat 2 notebook", 0), 0u);
  EXPECT_EQ(failure(R"({"worksheets": [{"cells": []}]})"),
            "skipped: nbformat 3 or older notebook (it has `worksheets`, no `nbformat`); only nbformat 4 is read");
  EXPECT_EQ(failure(R"({"cells": [], "nbformat": 5})"), "skipped: nbformat 5 notebook; only nbformat 4 is read");
}

TEST(NotebookErrors, CellsOfTheWrongShape) {
  auto with_cells = [](json cells) { return json{{"cells", cells}, {"nbformat", 4}, {"nbformat_minor", 5}}.dump(); };
  EXPECT_EQ(failure(with_cells({markdown("# x"), {{"cell_type", "code"}, {"source", 42}}})),
            "skipped: cell 2: `source` is a number; expected a string or a list of strings");
  EXPECT_EQ(failure(with_cells({{{"cell_type", "code"}, {"source", {"x = 1\n", nullptr}}}})),
            "skipped: cell 1: `source` is a list holding null; expected a string or a list of strings");
  EXPECT_EQ(failure(with_cells({code("x = 1"), "print(1)"})), "skipped: cell 2 is a string, not an object");
  EXPECT_EQ(failure(with_cells({{{"source", "x = 1"}}})), "skipped: cell 1 has no `cell_type` string");
  EXPECT_EQ(failure(with_cells({{{"cell_type", "code"}, {"outputs", json::array()}}})),
            "skipped: cell 1 (code) has no `source`");
  EXPECT_EQ(failure(with_cells({code("x = 1\n"), code(std::string("y = \"a\0b\"\n", 11))})),
            "skipped: cell 2 contains a NUL character");
}

TEST(NotebookErrors, NonPythonNotebooksAreSkipped) {
  json r_meta = {{"kernelspec", {{"display_name", "R"}, {"language", "R"}, {"name", "ir"}}},
                 {"language_info", {{"name", "R"}, {"version", "4.3.1"}}}};
  EXPECT_EQ(failure(notebook({code("library(ggplot2)\n")}, r_meta)),
            "skipped: a R notebook (metadata.language_info.name is \"R\"); only Python notebooks are linted");
  json julia = {{"kernelspec", {{"display_name", "Julia 1.9"}, {"language", "julia"}, {"name", "julia-1.9"}}}};
  EXPECT_EQ(failure(notebook({code("using Flux\n")}, julia)),
            "skipped: a julia notebook (metadata.kernelspec.language is \"julia\"); only Python notebooks are "
            "linted");
  // Python under any of its spellings, or no language at all, is read
  for (json meta : {metadata("Python"), metadata("python3"), json::object(),
                    json{{"kernelspec", {{"name", "conda-env-torch-py"}, {"language", "python"}}}}}) {
    auto r = read(notebook({code("import torch\n")}, meta));
    EXPECT_NE(r.src, nullptr) << meta.dump();
  }
}

// ---- the fixtures: line mapping exactness ----------------------------------------------------

// Every line of the joined text is the line of the cell that cell_line names: the same text, or
// (an IPython line) empty or `pass` at its indentation. And every line of every code cell is there,
// in order.
TEST(NotebookMapping, EveryLineMapsBackToItsCellLine) {
  for (std::string name : {"train_cifar.ipynb", "cross_cell.ipynb"}) {
    auto src = fixture(name);
    ASSERT_NE(src, nullptr);
    json nb = json::parse(fixture_text(name));
    std::vector<std::pair<uint32_t, std::string>> expected;  // (cell, line) of every code line
    for (size_t i = 0; i < nb["cells"].size(); ++i) {
      auto& c = nb["cells"][i];
      if (c["cell_type"] != "code") continue;
      std::string s;
      if (c["source"].is_string())
        s = c["source"];
      else
        for (auto& part : c["source"]) s += part.get<std::string>();
      std::istringstream in(s);
      for (std::string line; std::getline(in, line);) expected.emplace_back(static_cast<uint32_t>(i + 1), line);
    }
    ASSERT_EQ(src->line_count(), expected.size() + 1) << name;  // + the empty line at the end
    uint32_t dropped = 0;
    for (uint32_t l = 1; l <= expected.size(); ++l) {
      auto& [cell_no, original] = expected[l - 1];
      CellLine cl = src->cell_line(l);
      EXPECT_EQ(cl.cell, cell_no) << name << " line " << l;
      // the line number inside the cell: count the earlier lines of the same cell
      uint32_t in_cell = 1;
      for (uint32_t k = l - 1; k >= 1 && expected[k - 1].first == cell_no; --k) ++in_cell;
      EXPECT_EQ(cl.line, in_cell) << name << " line " << l;
      std::string got(src->line_text(l));
      if (got != original) {
        ++dropped;
        std::string trimmed = original.substr(original.find_first_not_of(" \t"));
        EXPECT_TRUE(trimmed[0] == '!' || trimmed[0] == '%' || trimmed.back() == '?' || cell_no == 13)
            << name << " line " << l << " changed: " << original;
        std::string indent = original.substr(0, original.find_first_not_of(" \t"));
        EXPECT_TRUE(got.empty() || got == indent + "pass") << got;
      }
    }
    if (name == "train_cifar.ipynb") {
      // cell 2: 4 magics; cell 5: `!du`; cell 6: `DataLoader?`; cell 10: `%%time` and the
      // indented `!nvidia-smi`; cell 13: the whole %%bash cell (3 lines)
      EXPECT_EQ(dropped, 4u + 1 + 1 + 2 + 3);
    }
  }
}

// ---- end to end: lint_sources with the reader's SourceFile, then the reporters --------------

TEST(NotebookLint, TrainingNotebookFindingsReadAsCellAndLine) {
  auto res = lint_one(fixture("train_cifar.ipynb"));
  EXPECT_TRUE(res.messages.empty()) << res.messages.front().message;  // the magics left valid Python
  EXPECT_EQ(res.files_analysed, 1u);
  auto pos = cell_positions(res);
  using P = std::tuple<std::string, uint32_t, uint32_t, uint32_t>;
  // the per-step gc.collect() in the training-loop cell (10), line 13 of that cell, and the
  // DataLoaders of the data cell (5) without workers or pinned memory
  EXPECT_NE(std::find(pos.begin(), pos.end(), P{"TL101", 10, 13, 9}), pos.end());
  EXPECT_NE(std::find(pos.begin(), pos.end(), P{"TL201", 5, 12, 16}), pos.end());
  EXPECT_NE(std::find(pos.begin(), pos.end(), P{"TL201", 5, 13, 15}), pos.end());
  EXPECT_NE(std::find(pos.begin(), pos.end(), P{"TL202", 5, 12, 16}), pos.end());
  // the loop the gc.collect() runs in: the inner `for step, ...` of cell 10
  const Finding& gc = finding(res, "TL101");
  ASSERT_EQ(gc.notes.size(), 1u);
  CellLine loop = source_of(res, gc.path).cell_line(gc.notes[0].range.start.line);
  EXPECT_EQ(loop.cell, 10u);
  EXPECT_EQ(loop.line, 6u);
  // nothing is reported on a dropped line, nor in the %%bash cell (13)
  for (auto& [code, c, l, col] : pos) {
    EXPECT_NE(c, 13u) << code;
    EXPECT_NE(c, 2u) << code;
  }
}

TEST(NotebookLint, LoopInOneCellCallsAFunctionDefinedInAnEarlierCell) {
  auto res = lint_one(fixture("cross_cell.ipynb"));
  EXPECT_TRUE(res.messages.empty());
  const Finding& gc = finding(res, "TL101");
  const SourceFile& src = source_of(res, gc.path);
  CellLine at = src.cell_line(gc.range.start.line);
  EXPECT_EQ(at.cell, 2u);  // inside free_memory(), defined in cell 2
  EXPECT_EQ(at.line, 8u);
  ASSERT_EQ(gc.notes.size(), 2u);
  CellLine loop = src.cell_line(gc.notes[0].range.start.line);
  CellLine call = src.cell_line(gc.notes[1].range.start.line);
  EXPECT_EQ(gc.notes[0].message, "runs every iteration of this training step loop");
  EXPECT_EQ(loop.cell, 4u);  // the loop of cell 4 (cell 3 between them sets up data and model)
  EXPECT_EQ(loop.line, 2u);
  EXPECT_EQ(gc.notes[1].message, "through this call to `free_memory`, made every step");
  EXPECT_EQ(call.cell, 4u);
  EXPECT_EQ(call.line, 8u);
}

TEST(NotebookLint, NoqaOnTheCellLineSuppresses) {
  std::string loop =
      "import gc\n"
      "for step, batch in enumerate(loader):\n"
      "    loss = model(batch).sum()\n"
      "    loss.backward()\n"
      "    optimizer.step()\n"
      "    gc.collect()%s\n";
  char plain[512], quiet[512];
  std::snprintf(plain, sizeof plain, loop.c_str(), "");
  std::snprintf(quiet, sizeof quiet, loop.c_str(), "  # noqa: TL101");
  auto noisy =
      lint_one(read(notebook({markdown("# x"), code("%load_ext autoreload\n"), code(std::string(plain))})).src);
  auto silent =
      lint_one(read(notebook({markdown("# x"), code("%load_ext autoreload\n"), code(std::string(quiet))})).src);
  auto pos = cell_positions(noisy);
  using P = std::tuple<std::string, uint32_t, uint32_t, uint32_t>;
  EXPECT_NE(std::find(pos.begin(), pos.end(), P{"TL101", 3, 6, 5}), pos.end());
  for (auto& f : silent.findings) EXPECT_NE(f.code, "TL101");
}

TEST(NotebookReport, TextPrintsCellAndLineForFindingsNotesAndExcerpt) {
  auto res = lint_one(fixture("cross_cell.ipynb"));
  std::string out = text_report(res);
  const std::string p = kFixtures + "cross_cell.ipynb";
  std::string expected = p +
                         ":cell 2:line 8:5: warning: `gc.collect()` runs every step: a full garbage-collection pass "
                         "stalls the host, and the GPU waiting on it, on each iteration [TL101 gc-collect-per-step]\n"
                         " 8 |     gc.collect()\n"
                         "   |     ^~~~~~~~~~~~\n" +
                         p + ":cell 4:line 2:5: note: runs every iteration of this training step loop\n" + p +
                         ":cell 4:line 8:9: note: through this call to `free_memory`, made every step\n";
  EXPECT_NE(out.find(expected), std::string::npos) << out;
  // no plain `path:line:` position anywhere for the notebook
  EXPECT_FALSE(std::regex_search(out, std::regex("cross_cell\\.ipynb:[0-9]"))) << out;
}

TEST(NotebookReport, TextExcerptNumbersTheCellLine) {
  auto res = lint_one(fixture("train_cifar.ipynb"));
  std::string out = text_report(res);
  const std::string p = kFixtures + "train_cifar.ipynb";
  EXPECT_NE(out.find(p + ":cell 10:line 13:9: warning: `gc.collect()` runs every step"), std::string::npos) << out;
  EXPECT_NE(out.find(" 13 |         gc.collect()\n    |         ^~~~~~~~~~~~\n" + p +
                     ":cell 10:line 6:5: note: runs every iteration of this training step loop\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(p + ":cell 5:line 12:16: warning: DataLoader has no `num_workers`"), std::string::npos);
  EXPECT_NE(out.find(" 12 | train_loader = DataLoader(train_set, batch_size=128, shuffle=True)\n"), std::string::npos);
}

TEST(NotebookReport, SyntaxErrorInACellReadsAsCellAndLine) {
  auto src = read(notebook({markdown("# x"), code("import torch\n"), code("%matplotlib inline\nx = [1, 2\ny = 3\n")}),
                  "broken.ipynb")
                 .src;
  ASSERT_NE(src, nullptr);
  auto res = lint_one(std::move(src));
  ASSERT_EQ(res.messages.size(), 1u);
  std::string err;
  text_report(res, &err);
  EXPECT_EQ(err.rfind("broken.ipynb:cell 3:line ", 0), 0u) << err;
  EXPECT_NE(err.find(": warning: syntax error"), std::string::npos) << err;
  json doc = report::to_json(res);
  auto& m = doc["messages"][0];
  EXPECT_EQ(m["cell"], 3);
  CellLine cl = source_of(res, "broken.ipynb").cell_line(res.messages[0].where->line);
  EXPECT_EQ(m["line"], cl.line);
  EXPECT_EQ(cl.cell, 3u);
  EXPECT_GE(cl.line, 2u);
}

TEST(NotebookReport, InvalidJsonPositionIsInTheIpynbFile) {
  LintResult res;
  std::string text = "{\n \"cells\": [\n  {\"cell_type\": \"code\",, \"source\": \"x\"}\n ]\n}\n";
  EXPECT_EQ(read_notebook("bad.ipynb", text, res.messages), nullptr);
  std::string err;
  text_report(res, &err);
  EXPECT_EQ(err.rfind("bad.ipynb:3:24: warning: skipped: not valid JSON (", 0), 0u) << err;
  json m = report::to_json(res)["messages"][0];
  EXPECT_EQ(m["line"], 3);
  EXPECT_EQ(m["column"], 24);
  EXPECT_FALSE(m.contains("cell"));
}

TEST(NotebookReport, JsonFindingsNotesAndEditsCarryTheCell) {
  auto res = lint_one(fixture("cross_cell.ipynb"));
  // no rule offers a fix on this code; give the finding one so that edits are shown too
  Finding& gc = res.findings[0];
  ASSERT_EQ(gc.code, "TL101");
  gc.fix = Fix{"remove the per-step collection", {Edit{gc.range, "pass"}}, Applicability::Unsafe};
  json doc = report::to_json(res);
  json f = doc["findings"][0];
  EXPECT_EQ(f["code"], "TL101");
  EXPECT_EQ(f["path"], kFixtures + "cross_cell.ipynb");
  EXPECT_EQ(f["cell"], 2);
  EXPECT_EQ(f["range"]["start"]["line"], 8);
  EXPECT_EQ(f["range"]["start"]["column"], 5);
  EXPECT_EQ(f["range"]["end"]["line"], 8);
  EXPECT_EQ(f["range"]["end"]["column"], 17);
  ASSERT_EQ(f["notes"].size(), 2u);
  EXPECT_EQ(f["notes"][0]["cell"], 4);
  EXPECT_EQ(f["notes"][0]["range"]["start"]["line"], 2);
  EXPECT_EQ(f["notes"][0]["range"]["end"]["line"], 8);  // the loop's body ends on cell 4, line 8
  EXPECT_EQ(f["notes"][1]["cell"], 4);
  EXPECT_EQ(f["notes"][1]["range"]["start"]["line"], 8);
  json edit = f["fix"]["edits"][0];
  EXPECT_EQ(edit["cell"], 2);
  EXPECT_EQ(edit["range"]["start"]["line"], 8);
  // byte offsets stay offsets into the joined code, as the reader built it
  const SourceFile& src = source_of(res, gc.path);
  EXPECT_EQ(src.slice(f["range"]["byte_start"], f["range"]["byte_end"]), "gc.collect()");
}

TEST(NotebookReport, PlainFilesJsonHasNoCell) {
  auto res = test::lint_texts({{"train.py",
                                "import gc\n"
                                "for step, batch in enumerate(loader):\n"
                                "    loss = model(batch).sum()\n"
                                "    loss.backward()\n"
                                "    gc.collect()\n"}},
                              {"TL101"});
  ASSERT_EQ(res.findings.size(), 1u);
  json doc = report::to_json(res);
  json f = doc["findings"][0];
  std::vector<std::string> keys;
  for (auto& [k, v] : f.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"code", "fingerprint", "fix", "message", "notes", "path", "probe", "range",
                                            "severity", "slug"}));
  EXPECT_FALSE(f["notes"][0].contains("cell"));
  EXPECT_EQ(f["range"]["start"]["line"], 5);
  EXPECT_EQ(text_report(res).rfind("train.py:5:5: warning: ", 0), 0u);
}

// A notebook that mixes with .py files: a note in a plain file stays plain, one in the notebook
// gets its cell.
TEST(NotebookReport, NotesFollowTheirOwnFile) {
  std::vector<std::unique_ptr<SourceFile>> files;
  files.push_back(std::make_unique<SourceFile>("helpers.py", "import gc\n\n\ndef tidy():\n    gc.collect()\n"));
  files.push_back(read(notebook({markdown("# run"), code("from helpers import tidy\n"),
                                 code("for step, batch in enumerate(loader):\n    model(batch).sum().backward()\n"
                                      "    opt.step()\n    tidy()\n")}),
                       "run.ipynb")
                      .src);
  auto res = lint(std::move(files));
  const Finding& gc = finding(res, "TL101");
  EXPECT_EQ(gc.path, "helpers.py");
  json f = report::to_json(res)["findings"][0];
  EXPECT_FALSE(f.contains("cell"));
  EXPECT_EQ(f["range"]["start"]["line"], 5);
  ASSERT_EQ(f["notes"].size(), 2u);
  EXPECT_EQ(f["notes"][0]["path"], "run.ipynb");
  EXPECT_EQ(f["notes"][0]["cell"], 3);
  EXPECT_EQ(f["notes"][0]["range"]["start"]["line"], 1);
  EXPECT_EQ(f["notes"][1]["cell"], 3);
  EXPECT_EQ(f["notes"][1]["range"]["start"]["line"], 4);
  std::string out = text_report(res);
  EXPECT_NE(out.find("helpers.py:5:5: warning: "), std::string::npos) << out;
  EXPECT_NE(out.find("run.ipynb:cell 3:line 1:1: note: "), std::string::npos) << out;
  EXPECT_NE(out.find("run.ipynb:cell 3:line 4:5: note: "), std::string::npos) << out;
}

// ---- size: outputs are parsed but not kept ----------------------------------------------------

namespace {
// VmHWM (peak) or VmRSS (now) of this process, in KiB.
size_t status_kb(const char* field) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(field, 0) == 0) return std::stoul(line.substr(std::strlen(field)));
  return 0;
}
}  // namespace

TEST(NotebookSize, FiftyMegabytesOfImageOutputs) {
  // the training notebook with eleven 500 KB base64 PNG outputs on each code cell, about 50 MB,
  // written straight into one string so that building it leaves no peak of its own
  json nb = json::parse(fixture_text("train_cifar.ipynb"));
  for (auto& c : nb["cells"])
    if (c["cell_type"] == "code") c["outputs"] = "@OUTPUTS@";
  std::string skeleton = nb.dump(1);
  std::string blob(500 * 1024, 'A');
  for (size_t i = 0; i < blob.size(); ++i)
    blob[i] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[(i * 7919) % 64];
  std::string outputs = "[";
  for (int k = 0; k < 11; ++k)
    outputs += std::string(k ? "," : "") + "\n    {\"data\": {\"image/png\": \"" + blob +
               "\", \"text/plain\": [\"<Figure size 640x480 with 1 Axes>\"]}, \"metadata\": {}, \"output_type\": "
               "\"display_data\"}";
  outputs += "]";
  std::string text;
  text.reserve(skeleton.size() + 14 * outputs.size());
  for (size_t at = 0;;) {
    size_t hit = skeleton.find("\"@OUTPUTS@\"", at);
    text.append(skeleton, at, hit == std::string::npos ? std::string::npos : hit - at);
    if (hit == std::string::npos) break;
    text += outputs;
    at = hit + 11;
  }
  outputs.clear();
  outputs.shrink_to_fit();
  ASSERT_GT(text.size(), 50u * 1000 * 1000);
  std::string expected = fixture("train_cifar.ipynb")->text();

  // reset the peak to what is in use now (Linux: "5" to clear_refs), then read
  bool peak_reset = static_cast<bool>(std::ofstream("/proc/self/clear_refs") << "5");
  size_t before = status_kb("VmRSS:");
  auto t0 = std::chrono::steady_clock::now();
  std::vector<FileMessage> messages;
  auto src = read_notebook("big.ipynb", text, messages);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  size_t grew_mb = (status_kb("VmHWM:") - std::min(before, status_kb("VmHWM:"))) / 1024;
  ASSERT_NE(src, nullptr);
  EXPECT_EQ(src->text(), expected);
  std::printf("read a %.1f MB notebook in %.2f s; peak memory grew by %zu MB\n", text.size() / 1e6, secs, grew_mb);
#if !defined(__SANITIZE_ADDRESS__)
  // outputs are dropped while parsing: they never sit in memory as a JSON document
  if (peak_reset) EXPECT_LT(grew_mb, 20u) << "parsing kept the outputs";
#endif
}
