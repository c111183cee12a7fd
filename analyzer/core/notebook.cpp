#include "analyzer/core/notebook.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include <nlohmann/json.hpp>

namespace tl {
namespace {

using nlohmann::json;

// The cell magics of IPython whose body is Python run in the kernel's own namespace: the magic line
// is dropped and the body linted. Every other cell magic (%%bash, %%script, %%writefile, %%html,
// %%python3 in a subprocess, an extension's %%sql or %%cython...) runs the body elsewhere or as
// another language, so the whole cell is dropped.
constexpr std::string_view kPythonBodyCellMagics[] = {"time", "timeit", "capture", "prun", "debug"};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\f' || c == '\v'; }

std::string_view ltrim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  return s;
}

std::string_view rtrim(std::string_view s) {
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// Lines without their terminators (\n, \r\n or \r); a last line without one counts, "" has none.
std::vector<std::string_view> split_lines(std::string_view s) {
  std::vector<std::string_view> out;
  size_t b = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\n' && s[i] != '\r') continue;
    out.push_back(s.substr(b, i - b));
    if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ++i;
    b = i + 1;
  }
  if (b < s.size()) out.push_back(s.substr(b));
  return out;
}

// Just enough of Python's tokenizer to know, line by line, whether the next line starts a new
// statement: open strings (triple-quoted ones span lines), open brackets, backslash continuations
// and comments. Only at a statement's start can a line be an IPython escape.
struct PyLines {
  char quote = 0;  // the quote of the string still open, 0 outside strings
  bool triple = false;
  int depth = 0;   // brackets open
  bool continued = false;

  bool at_statement_start() const { return quote == 0 && depth == 0 && !continued; }

  // Scans one line of Python. Returns the last character of code on it (outside strings and the
  // comment), 0 when there is none.
  char scan(std::string_view line) {
    continued = false;
    char last = 0;
    size_t n = line.size();
    for (size_t i = 0; i < n;) {
      char c = line[i];
      if (quote) {
        if (c == '\\') {
          if (i + 1 == n && !triple) return last;  // "abc\ continues on the next line
          i += 2;
          continue;
        }
        if (c == quote && (!triple || (i + 2 < n && line[i + 1] == quote && line[i + 2] == quote))) {
          i += triple ? 3 : 1;
          quote = 0;
          last = c;
          continue;
        }
        ++i;
        continue;
      }
      if (c == '#') break;
      if (c == '"' || c == '\'') {
        quote = c;
        last = c;
        triple = i + 2 < n && line[i + 1] == c && line[i + 2] == c;
        i += triple ? 3 : 1;
        continue;
      }
      if (c == '(' || c == '[' || c == '{') ++depth;
      else if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
      else if (c == '\\' && i + 1 == n) continued = true;
      if (!is_space(c)) last = c;
      ++i;
    }
    if (quote && !triple) quote = 0;  // an unterminated string ends with its line (a syntax error)
    return last;
  }
};

// `target = !cmd` or `target = %magic`: the first `=` outside brackets and strings is followed by
// an escape (IPython's MagicAssign and SystemAssign).
bool is_escape_assignment(std::string_view s) {
  char quote = 0;
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (quote) {
      if (c == '\\') ++i;
      else if (c == quote) quote = 0;
      continue;
    }
    if (c == '#') return false;
    if (c == '"' || c == '\'') quote = c;
    else if (c == '(' || c == '[' || c == '{') ++depth;
    else if (c == ')' || c == ']' || c == '}') --depth;
    else if (c == '=' && depth == 0) {
      char prev = i > 0 ? s[i - 1] : 0;
      if (i + 1 < s.size() && s[i + 1] == '=') return false;  // ==
      if (prev && std::string_view("=!<>:+-*/%&|^@~").find(prev) != std::string_view::npos) return false;
      std::string_view rest = ltrim(s.substr(i + 1));
      return !rest.empty() && (rest.front() == '!' || rest.front() == '%');
    }
  }
  return false;
}

// Is this line, at the start of a statement, IPython rather than Python? A line magic (`%time
// f()`), a shell escape (`!pip install x`, `!!ls`), a help request (`?obj`, `obj?`, `obj.attr??`),
// an autocall escape (`/f x`, `,f a b`, `;f a b`), or an assignment from a magic or the shell
// (`files = !ls`). None of these can begin or end a Python statement, so there is no ambiguity.
bool is_ipython_line(std::string_view line) {
  std::string_view s = ltrim(line);
  if (s.empty()) return false;
  if (std::string_view("!%?/,;").find(s.front()) != std::string_view::npos) return true;
  if (is_escape_assignment(s)) return true;
  PyLines probe;
  return probe.scan(s) == '?';  // `obj?`, `obj??`, `x = obj?`: help (Python never ends a line with ?)
}

std::string_view cell_magic_name(std::string_view line) {
  std::string_view s = ltrim(line);
  if (s.substr(0, 2) != "%%") return {};
  s.remove_prefix(2);
  size_t e = 0;
  while (e < s.size() && !is_space(s[e])) ++e;
  return s.substr(0, e);
}

bool blank(std::string_view line) { return ltrim(line).empty(); }

std::string describe_type(const json& j) {
  switch (j.type()) {
    case json::value_t::null: return "null";
    case json::value_t::object: return "an object";
    case json::value_t::array: return "a list";
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "a boolean";
    default: return "a number";
  }
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// 1-based line and code-point column of a byte offset into `text`.
LineCol position_in(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  LineCol lc{1, 1};
  for (size_t i = 0; i < offset; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      ++lc.line;
      lc.col = 1;
    } else if ((c & 0xC0) != 0x80) {
      ++lc.col;
    }
  }
  return lc;
}

struct Failure {
  std::string message;
  std::optional<LineCol> where;
};

// The source of a cell as one string: nbformat allows a string or a list of strings (the lines,
// each keeping its newline) that are concatenated.
std::optional<std::string> cell_source(const json& source, size_t cell_no, Failure& fail) {
  if (source.is_string()) return source.get<std::string>();
  if (source.is_array()) {
    std::string s;
    for (auto& part : source) {
      if (!part.is_string()) {
        fail.message = "cell " + std::to_string(cell_no) + ": `source` is a list holding " + describe_type(part) +
                       "; expected a string or a list of strings";
        return std::nullopt;
      }
      s += part.get_ref<const std::string&>();
    }
    return s;
  }
  fail.message = "cell " + std::to_string(cell_no) + ": `source` is " + describe_type(source) +
                 "; expected a string or a list of strings";
  return std::nullopt;
}

// The notebook's language when it says one: language_info (written by the kernel that ran it),
// else the kernelspec's.
std::optional<std::pair<std::string, std::string>> notebook_language(const json& nb) {
  auto meta = nb.find("metadata");
  if (meta == nb.end() || !meta->is_object()) return std::nullopt;
  auto field = [&](const char* obj, const char* key) -> std::optional<std::string> {
    auto o = meta->find(obj);
    if (o == meta->end() || !o->is_object()) return std::nullopt;
    auto v = o->find(key);
    if (v == o->end() || !v->is_string()) return std::nullopt;
    return v->get<std::string>();
  };
  if (auto l = field("language_info", "name")) return std::make_pair(*l, std::string("metadata.language_info.name"));
  if (auto l = field("kernelspec", "language")) return std::make_pair(*l, std::string("metadata.kernelspec.language"));
  return std::nullopt;
}

bool is_python_language(const std::string& lang) {
  std::string l = lower(lang);
  return l.rfind("python", 0) == 0 || l.rfind("ipython", 0) == 0;
}

std::unique_ptr<SourceFile> build(const std::string& path, std::string_view text_json, Failure& fail) {
  // Outputs (base64 images, long logs) and attachments are most of a large notebook's bytes and
  // are never read: drop them while parsing instead of keeping them in the document. Depth 3 is
  // a key of an object inside a top-level list: a cell's own keys.
  json::parser_callback_t drop_outputs = [](int depth, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::key && depth == 3 && parsed.is_string()) {
      const auto& k = parsed.get_ref<const std::string&>();
      return k != "outputs" && k != "attachments";
    }
    return true;
  };
  json nb;
  try {
    nb = json::parse(text_json.begin(), text_json.end(), drop_outputs);
  } catch (const json::parse_error& e) {
    std::string what = e.what();
    // "[json.exception.parse_error.101] parse error at line 3, column 5: syntax error ..."
    auto col = what.find(", column ");
    auto colon = col == std::string::npos ? std::string::npos : what.find(": ", col);
    std::string reason = colon == std::string::npos ? what : what.substr(colon + 2);
    fail.message = "not valid JSON (" + reason + "); a notebook is a JSON document";
    fail.where = position_in(text_json, e.byte > 0 ? e.byte - 1 : 0);
    return nullptr;
  } catch (const json::exception& e) {
    fail.message = std::string("not valid JSON (") + e.what() + ")";
    return nullptr;
  }

  if (!nb.is_object()) {
    fail.message = "not a Jupyter notebook: the JSON document is " + describe_type(nb) + ", not an object with `cells`";
    return nullptr;
  }
  if (auto v = nb.find("nbformat"); v != nb.end()) {
    if (!v->is_number_integer()) {
      fail.message = "not a Jupyter notebook: `nbformat` is " + describe_type(*v) + ", not a version number";
      return nullptr;
    }
    auto major = v->get<long long>();
    if (major < 4) {
      fail.message = "nbformat " + std::to_string(major) +
                     " notebook; only nbformat 4 is read (open and save it in Jupyter, or run `jupyter nbconvert "
                     "--to notebook --inplace` on it, to upgrade it)";
      return nullptr;
    }
    if (major > 4) {
      fail.message = "nbformat " + std::to_string(major) + " notebook; only nbformat 4 is read";
      return nullptr;
    }
  } else if (nb.contains("worksheets")) {
    fail.message = "nbformat 3 or older notebook (it has `worksheets`, no `nbformat`); only nbformat 4 is read";
    return nullptr;
  }
  auto cells = nb.find("cells");
  if (cells == nb.end()) {
    fail.message = "not a Jupyter notebook: the JSON object has no `cells`";
    return nullptr;
  }
  if (!cells->is_array()) {
    fail.message = "not a Jupyter notebook: `cells` is " + describe_type(*cells) + ", not a list";
    return nullptr;
  }
  if (auto lang = notebook_language(nb); lang && !is_python_language(lang->first)) {
    fail.message = "a " + lang->first + " notebook (" + lang->second + " is \"" + lang->first +
                   "\"); only Python notebooks are linted";
    return nullptr;
  }

  std::string text;
  std::vector<CellLine> map;
  for (size_t i = 0; i < cells->size(); ++i) {
    const json& cell = (*cells)[i];
    uint32_t cell_no = static_cast<uint32_t>(i + 1);
    if (!cell.is_object()) {
      fail.message = "cell " + std::to_string(cell_no) + " is " + describe_type(cell) + ", not an object";
      return nullptr;
    }
    auto type = cell.find("cell_type");
    if (type == cell.end() || !type->is_string()) {
      fail.message = "cell " + std::to_string(cell_no) + " has no `cell_type` string";
      return nullptr;
    }
    if (type->get_ref<const std::string&>() != "code") continue;  // markdown, raw: counted, not read
    auto source = cell.find("source");
    if (source == cell.end()) {
      fail.message = "cell " + std::to_string(cell_no) + " (code) has no `source`";
      return nullptr;
    }
    auto src = cell_source(*source, cell_no, fail);
    if (!src) return nullptr;
    if (src->find('\0') != std::string::npos) {
      fail.message = "cell " + std::to_string(cell_no) + " contains a NUL character";
      return nullptr;
    }
    std::string py = notebook_cell_python(*src);
    uint32_t lines = static_cast<uint32_t>(std::count(py.begin(), py.end(), '\n'));
    for (uint32_t k = 1; k <= lines; ++k) map.push_back({cell_no, k});
    text += py;
  }
  // The position just past the last newline (end of file) reads as the line after the last cell's
  // last line, so every line of the SourceFile maps to a cell.
  if (!map.empty()) map.push_back({map.back().cell, map.back().line + 1});
  auto sf = std::make_unique<SourceFile>(path, std::move(text));
  sf->set_cell_lines(std::move(map));
  return sf;
}

}  // namespace

bool is_notebook_path(std::string_view path) {
  constexpr std::string_view ext = ".ipynb";
  return path.size() > ext.size() && path.substr(path.size() - ext.size()) == ext;
}

std::string notebook_cell_python(std::string_view cell) {
  std::vector<std::string_view> lines = split_lines(cell);
  std::vector<std::string> out(lines.size());  // each starts empty: a dropped line
  size_t first = 0;
  // Cell magics: the first line that is not blank. The Python-bodied ones can be stacked
  // (%%capture then %%time), so look again after each.
  while (true) {
    size_t k = first;
    while (k < lines.size() && blank(lines[k])) ++k;
    if (k == lines.size()) break;
    if (ltrim(lines[k]).substr(0, 2) != "%%") break;
    std::string_view name = cell_magic_name(lines[k]);
    for (size_t j = first; j < k; ++j) out[j] = std::string(lines[j]);
    if (std::find(std::begin(kPythonBodyCellMagics), std::end(kPythonBodyCellMagics), name) ==
        std::end(kPythonBodyCellMagics)) {
      first = lines.size();  // not Python: the whole cell is dropped
      break;
    }
    first = k + 1;
  }
  PyLines py;
  for (size_t i = first; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    if (py.at_statement_start() && is_ipython_line(line)) {
      // An indented escape sits in a block that must not become empty: it reads as `pass` there,
      // as IPython turns it into a call at the same indentation.
      std::string_view indent = line.substr(0, line.size() - ltrim(line).size());
      if (!indent.empty()) out[i] = std::string(indent) + "pass";
      // an escape continues over lines ending with a backslash
      while (rtrim(line).ends_with('\\') && i + 1 < lines.size()) line = lines[++i];
      continue;
    }
    py.scan(line);
    out[i] = std::string(line);
  }
  std::string text;
  for (auto& l : out) {
    text += l;
    text += '\n';
  }
  return text;
}

std::unique_ptr<SourceFile> read_notebook(const std::string& path, std::string_view json_text,
                                          std::vector<FileMessage>& messages) {
  Failure fail;
  auto sf = build(path, json_text, fail);
  if (!sf) messages.push_back({FileMessage::Kind::Warning, path, "skipped: " + fail.message, fail.where});
  return sf;
}

}  // namespace tl
