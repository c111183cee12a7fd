#include "analyzer/engine/engine.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyzer/core/baseline.h"
#include "analyzer/core/gitdiff.h"
#include "analyzer/core/gitignore.h"
#include "analyzer/core/huge_pages.h"
#include "analyzer/core/notebook.h"
#include "analyzer/core/parallel.h"
#include "analyzer/core/suppression.h"
#include "analyzer/cpp/compile_db.h"
#include "analyzer/cpp/model.h"
#include "analyzer/engine/cache.h"
#include "analyzer/cpp/typed_path.h"
#include "rules/cpp/rule_context.h"
#include "rules/python/rule_context.h"
#include "rules/registry.h"

namespace fs = std::filesystem;

namespace tl {
namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
void timing(const char* what, double ms) {
  if (std::getenv("TRAINLINT_TIMING")) std::fprintf(stderr, "trainlint: %-28s %8.1f ms\n", what, ms);
}

std::string display(const fs::path& p) {
  std::string s = p.lexically_normal().generic_string();
  if (s.rfind("./", 0) == 0) s = s.substr(2);
  return s;
}

fs::path absolute_normal(const fs::path& p) {
  std::error_code ec;
  fs::path a = fs::absolute(p, ec);
  return (ec ? p : a).lexically_normal();
}

// `abs` relative to `anc`, a folder that holds it (both absolute and lexically normal), '/'-separated:
// abs.lexically_relative(anc).generic_string(), without building paths in the common case.
std::string relative_to_ancestor(const fs::path& abs, const fs::path& anc) {
  std::string rel = relative_below(abs, anc);
  return rel.empty() ? abs.lexically_relative(anc).generic_string() : rel;
}

// How a context file found by walking a project is shown: relative to the working folder when
// it is below it, else absolute.
std::string display_found(const fs::path& abs, const fs::path& cwd) {
  fs::path rel = abs.lexically_relative(cwd);
  if (!rel.empty() && rel.native().rfind("..", 0) != 0) return rel.generic_string();
  return abs.generic_string();
}

enum class FileKind { Python, Notebook, Cpp, Other };

// The extension of a file name as std::filesystem::path::extension() reads it: from the last '.',
// none for a name whose only '.' leads it (".bashrc"), nor for "." and "..".
std::string_view name_extension(std::string_view name) {
  if (name == "." || name == "..") return {};
  size_t dot = name.rfind('.');
  return dot == std::string_view::npos || dot == 0 ? std::string_view() : name.substr(dot);
}

FileKind kind_by_extension(std::string_view name) {
  std::string ext(name_extension(name));
  for (auto& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == ".py" || ext == ".pyw" || ext == ".pyi") return FileKind::Python;
  if (ext == ".ipynb") return FileKind::Notebook;
  // C++ (the LibTorch fast path); CUDA sources, C and textual includes are not analysed
  for (const char* e : {".cpp", ".cc", ".cxx", ".c++", ".h", ".hh", ".hpp", ".hxx"})
    if (ext == e) return FileKind::Cpp;
  return FileKind::Other;
}

FileKind kind_by_extension(const fs::path& p) { return kind_by_extension(std::string_view(p.filename().native())); }

// An extension-less script with a python shebang (`#!/usr/bin/env python3`) is Python: pre-commit
// passes such files to Python hooks.
bool has_python_shebang(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  char buf[128] = {};
  in.read(buf, sizeof buf - 1);
  std::string_view head(buf, static_cast<size_t>(in.gcount()));
  if (head.rfind("#!", 0) != 0) return false;
  head = head.substr(0, head.find('\n'));
  return head.find("python") != std::string_view::npos;
}

std::string canon_code(std::string_view s) {
  const RuleInfo* r = find_rule(s);
  return r ? std::string(r->code) : std::string();
}

bool known_selector(std::string_view s) {
  if (s == "ALL" || s == "all") return true;
  for (auto& r : registry())
    if (selector_matches(s, r.code, r.slug)) return true;
  return false;
}

// One file to analyse: a target (reported on) or context (analysed, not reported).
struct Entry {
  fs::path abs;
  std::string display;
  bool target = false;
  bool from_stdin = false;
  FileKind kind = FileKind::Python;
};

// Walks folders the way the configuration and .gitignore say.
class Walker {
 public:
  Walker(ConfigSet& cs, const LintOptions& o, std::vector<FileMessage>& messages) : cs_(cs), o_(o), messages_(messages) {}

  // Is `abs` (a path named on the command line), or a folder above it, excluded by its
  // configuration's exclude / extend-exclude, or by .gitignore? (A walk asks excluded_in().)
  bool excluded(const fs::path& abs, bool is_dir) {
    const Config& c = cs_.for_dir(abs.parent_path());
    if (!c.exclude_globs.empty()) {
      std::string rel;
      if (!c.dir.empty()) {
        fs::path r = abs.lexically_relative(c.dir);
        if (!r.empty() && r.native().rfind("..", 0) != 0) rel = r.generic_string();
      }
      if (rel.empty()) rel = abs.filename().generic_string();
      if (c.exclude_globs.matches(rel, is_dir)) return true;
    }
    if (o_.respect_gitignore && gi_.ignored_or_inside_ignored(abs, is_dir)) return true;
    return false;
  }

  // Every Python file and notebook below `root` (not excluded), sorted by path.
  void walk(const fs::path& root_abs, const fs::path& root_display, std::vector<Entry>& out, bool target) {
    std::vector<Entry> found;
    std::string root = root_abs.native();
    while (root.size() > 1 && root.back() == '/') root.pop_back();
    walk_dir(root, display(root_display), found, target);
    std::sort(found.begin(), found.end(), [](const Entry& a, const Entry& b) { return a.display < b.display; });
    for (auto& e : found) out.push_back(std::move(e));
  }

 private:
  static bool match_last(const GlobSet& g, const std::string& rel, bool is_dir) {
    for (auto& p : g.patterns())
      if (p.matches(rel, is_dir)) return true;
    return false;
  }

  static bool content_says_skip(const std::string& dir) {
    struct stat st;
    return ::stat((dir + "/pyvenv.cfg").c_str(), &st) == 0 || ::stat((dir + "/CMakeCache.txt").c_str(), &st) == 0;
  }

  // `parent` joined with an entry's name, as fs::path's operator/ would ("/" + "x" is "/x").
  static std::string join(const std::string& parent, std::string_view name) {
    std::string out = parent;
    if (out.empty() || out.back() != '/') out += '/';
    out.append(name);
    return out;
  }

  // What excluded_in() needs of an entry's folder, worked out once for all its entries: the
  // folder's configuration, the folder's path relative to that configuration's folder (so that an
  // entry's is this prefix and its name), and its .gitignore chain. An entry's own name is
  // matched, not the folders above it: the walk did not enter an excluded folder.
  struct FolderRules {
    const Config* config = nullptr;
    bool names_only = true;  // not below the configuration's folder: globs see the name alone
    std::string prefix;      // else "" (the folder itself) or "sub/dir/"
    const GitIgnore::Folder* git = nullptr;
  };
  FolderRules folder_rules(const std::string& dir) {
    FolderRules f;
    fs::path d(dir);
    f.config = &cs_.for_dir(d);
    if (!f.config->exclude_globs.empty() && !f.config->dir.empty()) {
      fs::path r = d.lexically_relative(f.config->dir);
      if (r == ".") f.names_only = false;
      else if (!r.empty() && r.native().rfind("..", 0) != 0) {
        f.names_only = false;
        f.prefix = r.generic_string() + '/';
      }
    }
    if (o_.respect_gitignore) f.git = &gi_.folder(d);
    return f;
  }
  bool excluded_in(const FolderRules& f, std::string_view name, bool is_dir) {
    if (!f.config->exclude_globs.empty()) {
      std::string rel = f.names_only ? std::string(name) : f.prefix + std::string(name);
      if (match_last(f.config->exclude_globs, rel, is_dir)) return true;
    }
    return f.git && GitIgnore::ignored_in(*f.git, name, is_dir);
  }

  // One folder's entries, by readdir: the entry's type comes with its name, so a regular file or
  // a folder costs no stat; a symlink (and a file system that gives no types) is looked up.
  void walk_dir(const std::string& dir, const std::string& shown, std::vector<Entry>& out, bool target) {
    DIR* d = ::opendir(dir.c_str());  // an unreadable folder is reported, not skipped silently
    if (!d) {
      if (target)
        messages_.push_back({FileMessage::Kind::Warning, shown, "skipped folder: " + std::string(std::strerror(errno)),
                             std::nullopt});
      return;
    }
    struct Closer {
      DIR* d;
      ~Closer() { ::closedir(d); }
    } closer{d};
    const FolderRules rules = folder_rules(dir);
    // how an entry is shown: display(shown / name)
    const std::string shown_prefix = shown == "." || shown.empty() ? std::string() : join(shown, "");
    int read_error = 0;
    for (;;) {
      errno = 0;
      const dirent* de = ::readdir(d);
      if (!de) {
        read_error = errno;
        break;
      }
      std::string_view name(de->d_name);
      if (name == "." || name == "..") continue;
      unsigned char type = de->d_type;
      bool is_link = type == DT_LNK;
      if (type == DT_UNKNOWN) {  // some file systems give no types: ask
        struct stat lst;
        if (::lstat(join(dir, name).c_str(), &lst) == 0)
          type = S_ISLNK(lst.st_mode) ? DT_LNK : S_ISDIR(lst.st_mode) ? DT_DIR : S_ISREG(lst.st_mode) ? DT_REG : DT_UNKNOWN;
        is_link = type == DT_LNK;
      }
      if (type == DT_DIR) {
        std::string abs = join(dir, name);
        if (excluded_in(rules, name, true) || content_says_skip(abs)) continue;
        walk_dir(abs, shown_prefix + std::string(name), out, target);
        continue;
      }
      FileKind k = kind_by_extension(name);
      if (k != FileKind::Python && k != FileKind::Notebook && !(k == FileKind::Cpp && cpp_)) continue;
      if (name_extension(name) == ".pyi") continue;  // stubs hold no code that runs
      std::string abs = join(dir, name);
      if (type != DT_REG) {
        // a symlink (followed: to a folder, it is skipped, as symlinked folders are not followed),
        // or a type the listing did not give
        struct stat st;
        if (::stat(abs.c_str(), &st) != 0) {
          if (target) {
            int err = errno;
            std::string why = err == ELOOP ? "symlink loop" : std::strerror(err);
            messages_.push_back({FileMessage::Kind::Warning, shown_prefix + std::string(name), "skipped: " + why,
                                 std::nullopt});
          }
          continue;
        }
        if (S_ISDIR(st.st_mode) && is_link) continue;
        if (!S_ISREG(st.st_mode)) continue;
      }
      if (excluded_in(rules, name, false)) continue;
      out.push_back({fs::path(std::move(abs)), shown_prefix + std::string(name), target, false, k});
    }
    if (read_error && target)
      messages_.push_back({FileMessage::Kind::Warning, shown, "skipped while walking: " + std::string(std::strerror(read_error)),
                           std::nullopt});
  }

  ConfigSet& cs_;
  const LintOptions& o_;
  std::vector<FileMessage>& messages_;
  GitIgnore gi_;

 public:
  // Walk C++ files too: always for folders named on the command line; for a project's context
  // only when a C++ file is linted (a Python run does not parse a project's C++ sources).
  bool cpp_ = true;
};

std::vector<std::pair<uint32_t, uint32_t>> comment_ranges(const py::Tree& t) {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (py::NodeId n = 0; n < t.size(); ++n)
    if (t.kind(n) == py::K::Comment) out.emplace_back(t[n].start, t[n].end);
  return out;
}

std::string normalize(const SourceFile& src, const std::vector<std::pair<uint32_t, uint32_t>>& comments, uint32_t b,
                      uint32_t e, bool drop_comments) {
  std::string out;
  auto it = std::lower_bound(comments.begin(), comments.end(), std::make_pair(b, 0u));
  uint32_t i = b;
  const std::string& t = src.text();
  e = std::min<uint32_t>(e, static_cast<uint32_t>(t.size()));
  while (i < e) {
    if (drop_comments && it != comments.end() && it->first == i) {
      i = it->second;
      ++it;
      continue;
    }
    while (drop_comments && it != comments.end() && it->second <= i) ++it;
    char c = t[i++];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') continue;
    if (c == '\\' && i < e && (t[i] == '\n' || t[i] == '\r')) continue;
    out.push_back(c);
  }
  return out;
}

// A short, one-line form of the statement for a baseline's reader.
std::string statement_for_humans(const SourceFile& src, const Range& r) {
  std::string s(src.slice(r.begin, r.end));
  std::string out;
  bool space = false;
  for (char c : s) {
    if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(c);
  }
  if (out.size() > 160) {
    size_t cut = 157;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
    out = out.substr(0, cut) + "...";
  }
  return out;
}

const Config* root_config_for(ConfigSet& cs, const std::vector<Entry>& entries) {
  std::error_code ec;
  fs::path cwd = fs::current_path(ec);
  if (!ec) {
    const Config& c = cs.for_dir(cwd);
    if (!c.path.empty()) return &c;
  }
  for (auto& e : entries)
    if (e.target) return &cs.for_dir(e.abs.parent_path());
  return &cs.defaults();
}

struct Prepared {
  std::vector<Entry> entries;
  std::vector<std::unique_ptr<SourceFile>> sources;  // parallel to `entries` where read
  std::vector<size_t> entry_of_source;
};

// The threads a run uses: -j N, else one per core.
unsigned run_threads(const LintOptions& opts) {
  return opts.threads ? threads_under_limit(opts.threads) : default_threads();
}

// Where the on-disk cache keeps the C++ half of a run: its findings depend on the C++ files, the
// options and the configurations only, so an edit to a Python file does not re-analyse them.
struct CppHalfCache {
  cache::DiskCache* disk = nullptr;
  cache::Hash key;
};

// A cache entry as (part of) a run's result: its findings, messages and counts, the reported
// files' infos, and the files themselves moved into `sources` (reporters quote them).
void take_cached(LintResult& res, cache::RunResult&& hit, std::vector<std::unique_ptr<SourceFile>>& files,
                 const std::vector<bool>& target, const std::vector<FileInfo>& infos,
                 std::vector<std::shared_ptr<const SourceFile>>& sources) {
  res.findings = std::move(hit.findings);
  res.messages = std::move(hit.messages);
  res.files_analysed = hit.files_analysed;
  res.context_files = hit.context_files;
  for (size_t i = 0; i < files.size(); ++i) {
    if (target[i]) res.files[files[i]->path()] = infos[i];
    sources.push_back(std::shared_ptr<const SourceFile>(std::move(files[i])));
  }
}

// Model + rules + per-file filtering over read sources. `infos[i]` describes sources[i].
LintResult analyse(std::vector<std::unique_ptr<SourceFile>> files, std::vector<bool> target, std::vector<FileInfo> infos,
                   const LintOptions& opts, std::shared_ptr<ConfigSet> cs, const CppHalfCache* cpp_cache = nullptr);

}  // namespace

const SourceFile* LintResult::source(const std::string& path) const {
  for (auto& s : cpp_sources)
    if (s->path() == path) return s.get();
  for (auto& s : cached_sources)
    if (s->path() == path) return s.get();
  if (!model) return nullptr;
  for (auto& m : model->modules())
    if (m->path == path) return m->src.get();
  return nullptr;
}

std::vector<std::string> discover_files(const std::vector<std::string>& paths, std::vector<FileMessage>& messages,
                                        bool& io_error) {
  ConfigSet cs(known_selector, canon_code);
  std::string err;
  cs.init("", true, &err);
  LintOptions o;
  o.respect_gitignore = false;
  Walker w(cs, o, messages);
  std::vector<Entry> out;
  for (auto& raw : paths) {
    std::error_code ec;
    fs::path p(raw);
    if (fs::is_directory(p, ec)) w.walk(absolute_normal(p), p, out, true);
    else if (fs::exists(p, ec)) out.push_back({absolute_normal(p), display(p), true, false, kind_by_extension(p)});
    else {
      messages.push_back({FileMessage::Kind::Error, raw, "cannot read: no such file or directory", std::nullopt});
      io_error = true;
    }
  }
  std::vector<std::string> r;
  for (auto& e : out)
    if (e.kind == FileKind::Python) r.push_back(e.display);
  return r;
}

std::unique_ptr<SourceFile> source_from_text(const std::string& path, std::string text, std::vector<FileMessage>& messages) {
  // a notebook's JSON parser rejects NUL bytes and bad UTF-8 itself, with a position
  if (is_notebook_path(path)) return read_notebook(path, text, messages);
  if (text.find('\0') != std::string::npos) {
    messages.push_back({FileMessage::Kind::Warning, path, "skipped: binary file (contains NUL bytes)", std::nullopt});
    return nullptr;
  }
  size_t bad = first_invalid_utf8(text);
  if (bad != std::string::npos) {
    SourceFile tmp(path, text);
    messages.push_back({FileMessage::Kind::Warning, path,
                        "skipped: not valid UTF-8 (byte " + std::to_string(bad) + "); Python source must be UTF-8",
                        tmp.line_col(static_cast<uint32_t>(bad))});
    return nullptr;
  }
  return std::make_unique<SourceFile>(path, std::move(text));
}

std::unique_ptr<SourceFile> read_source(const std::string& path, size_t max_bytes, std::vector<FileMessage>& messages,
                                        bool& io_error) {
  auto fail = [&](std::string why) -> std::unique_ptr<SourceFile> {
    messages.push_back({FileMessage::Kind::Error, path, "cannot read: " + std::move(why), std::nullopt});
    io_error = true;
    return nullptr;
  };
  // one open and one fstat: O_NONBLOCK so that opening a FIFO cannot wait for a writer (it has no
  // effect on a regular file's reads); a FIFO or a device is refused before any read
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return fail(std::strerror(errno));
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st{};
  if (::fstat(fd, &st) != 0) return fail(std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return fail("not a regular file");  // a FIFO would block; a device never ends
  auto size = static_cast<size_t>(st.st_size);
  // notebooks carry their outputs (images as base64): the reader drops them while parsing
  if (is_notebook_path(path)) max_bytes = std::max<size_t>(max_bytes, size_t(512) << 20);
  if (size > max_bytes) {
    messages.push_back({FileMessage::Kind::Warning, path,
                        "skipped: " + std::to_string(size >> 20) + " MiB is over the " + std::to_string(max_bytes >> 20) +
                            " MiB limit for one file",
                        std::nullopt});
    return nullptr;
  }
  // the size fstat gave: a file that grows while being read is read as it was; one that shrinks
  // (or is truncated) as far as it goes
  std::string text;
  reserve_with_huge_pages(text, size);  // before the first touch: a huge file's text faults in 2 MiB pages
  text.resize(size);
  size_t got = 0;
  while (got < size) {
    ssize_t n = ::read(fd, text.data() + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("I/O error");
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  text.resize(got);
  // a UTF-8 byte-order mark is allowed and kept (tree-sitter skips it as whitespace-free text)
  return source_from_text(path, std::move(text), messages);
}

bool rule_enabled_for(const LintOptions& opts, const Config& c, std::string_view rel, std::string_view code,
                      std::string_view slug) {
  auto any = [&](const std::vector<std::string>& sels) {
    for (auto& s : sels)
      if (selector_matches(s, code, slug)) return true;
    return false;
  };
  bool on;
  if (!opts.select.empty()) {
    // --select on the command line is the whole choice: the configuration's select, extend-select
    // and ignore step aside (as ruff does), so that `--select TL106` shows TL106 even where the
    // configuration ignores it; per-file-ignores still apply
    on = any(opts.select) || any(opts.extend_select);
    if (any(opts.ignore)) on = false;
  } else {
    if (c.select) on = any(*c.select);
    else {
      const RuleInfo* r = find_rule(code);
      on = !(r && r->off_by_default);
    }
    if (any(c.extend_select) || any(opts.extend_select)) on = true;
    if (any(c.ignore) || any(opts.ignore)) on = false;
  }
  if (on && !rel.empty())
    for (auto& p : c.per_file_ignores)
      if (any(p.selectors) && p.glob.matches(rel, false)) return false;
  return on;
}

bool rule_enabled(const LintOptions& opts, std::string_view code, std::string_view slug) {
  static const Config defaults = [] {
    Config c;
    c.finish();
    return c;
  }();
  return rule_enabled_for(opts, defaults, "", code, slug);
}

std::string normalized_statement(const LintResult& res, const Finding& f) {
  const SourceFile* src = res.source(f.path);
  if (!src) return "";
  std::vector<std::pair<uint32_t, uint32_t>> comments;
  if (res.model)
    for (auto& m : res.model->modules())
      if (m->path == f.path) comments = comment_ranges(m->tree);
  const Range& r = f.statement.end > f.statement.begin ? f.statement : f.range;
  return normalize(*src, comments, r.begin, r.end, f.code != "TL001");
}

std::vector<BaselineEntry> baseline_entries(const LintResult& res) {
  std::vector<BaselineEntry> out;
  for (auto& f : res.findings) {
    BaselineEntry e;
    auto it = res.files.find(f.path);
    e.path = it == res.files.end() || it->second.project_path.empty() ? f.path : it->second.project_path;
    e.code = f.code;
    e.slug = f.slug;
    e.scope = f.scope;
    if (const SourceFile* src = res.source(f.path))
      e.statement = statement_for_humans(*src, f.statement.end > f.statement.begin ? f.statement : f.range);
    e.fingerprint = f.fingerprint;
    out.push_back(std::move(e));
  }
  return out;
}

namespace {

// ---- what the Python and C++ halves of a run share

// The path per-file-ignores match: relative to the folder of the file's configuration (its name
// alone when it lies outside that folder), else its project path.
std::string rel_to_config(const FileInfo& fi) {
  if (!fi.config || fi.config->dir.empty() || fi.abs_path.empty()) return fi.project_path;
  fs::path r = fs::path(fi.abs_path).lexically_relative(fi.config->dir);
  if (r.empty() || r.native().rfind("..", 0) == 0) return fs::path(fi.abs_path).filename().generic_string();
  return r.generic_string();
}

bool has_check(const RuleEntry& r, Language lang) { return lang == Language::Python ? r.python != nullptr : r.cpp != nullptr; }

// The rules whose `lang` checks a run calls: those on in the configuration of any reported file
// (each file's own configuration filters their findings afterwards). `any_tl001`: TL001, which
// judges the suppressions after the checks, is on somewhere.
struct RunRules {
  std::vector<const RuleEntry*> checks;
  bool any_tl001 = false;
};
RunRules run_rules(const LintOptions& opts, const ConfigSet& cs, const std::vector<FileInfo>& infos,
                   const std::vector<bool>& target, Language lang) {
  std::set<const Config*> configs;
  for (size_t i = 0; i < target.size(); ++i)
    if (target[i] || opts.report_context) configs.insert(infos[i].config);
  RunRules out;
  for (auto& r : registry()) {
    bool on = false;
    for (auto* c : configs) on = on || rule_enabled_for(opts, c ? *c : cs.defaults(), "", r.code, r.slug);
    if (!on) continue;
    if (has_check(r, lang)) out.checks.push_back(&r);
    if (r.code == "TL001") out.any_tl001 = true;
  }
  return out;
}

// One reported file's findings under its configuration: the rules it turns off dropped (and,
// with `only_correctness`, a test module's, all but TL4xx: docs/concepts.md "Test modules"), its
// severities applied, what its suppressions silence removed, and TL001 added for each suppression
// that silences nothing among the rules judged in `lang` (`sups` records which were used).
std::vector<Finding> file_findings(const LintOptions& opts, const Config& c, const FileInfo& fi, const SourceFile& src,
                                   std::vector<Suppression>& sups, std::vector<Finding> in, bool any_tl001,
                                   Language lang, bool only_correctness) {
  std::string rel = rel_to_config(fi);
  std::unordered_map<std::string, bool> enabled;
  auto on = [&](const std::string& code) {
    auto it = enabled.find(code);
    if (it != enabled.end()) return it->second;
    const RuleInfo* r = find_rule(code);
    bool v = r && rule_enabled_for(opts, c, rel, r->code, r->slug);
    enabled[code] = v;
    return v;
  };
  auto severity = [&](Finding& f) {
    if (auto sv = c.severity.find(f.code); sv != c.severity.end()) f.severity = sv->second;
  };
  std::vector<Finding> out;
  for (auto& f : in) {
    if (!on(f.code)) continue;
    if (only_correctness && f.code.rfind("TL4", 0) != 0) continue;
    severity(f);
    if (apply_suppressions(sups, f)) continue;
    out.push_back(std::move(f));
  }
  if (any_tl001 && on("TL001")) {
    auto judged = [&](const std::string& code) {
      const RuleEntry* r = find_rule(code);
      return r && has_check(*r, lang) && on(code);
    };
    for (auto& f : unused_suppressions(src, sups, judged)) {
      severity(f);
      out.push_back(std::move(f));
    }
  }
  return out;
}

LintResult analyse_python(std::vector<std::unique_ptr<SourceFile>> files, std::vector<bool> target, std::vector<FileInfo> infos,
                   const LintOptions& opts, std::shared_ptr<ConfigSet> cs) {
  LintResult res;
  res.configs = cs;
  unsigned threads = run_threads(opts);
  std::unordered_map<std::string, size_t> index_of;  // display path -> index
  for (size_t i = 0; i < files.size(); ++i) {
    index_of[files[i]->path()] = i;
    if (target[i]) {
      ++res.files_analysed;
      res.files[files[i]->path()] = infos[i];
    } else {
      ++res.context_files;
    }
  }
  auto model = std::make_shared<py::ProgramModel>(
      py::ProgramModel::build(std::move(files), threads, opts.parse_cache.get(), opts.tree_store));
  res.model = model;
  const auto& mods = model->modules();
  std::vector<const py::Module*> mod_of(mods.size(), nullptr);
  std::vector<size_t> index_of_mod(mods.size());
  for (size_t mi = 0; mi < mods.size(); ++mi) {
    auto it = index_of.find(mods[mi]->path);
    size_t i = it == index_of.end() ? 0 : it->second;
    index_of_mod[mi] = i;
    mod_of[i] = mods[mi].get();
  }
  for (size_t mi = 0; mi < mods.size(); ++mi) {
    auto& m = mods[mi];
    if (!target[index_of_mod[mi]] || m->tree.errors().empty()) continue;
    auto& e = m->tree.errors().front();
    std::string msg = "syntax error";
    if (e.second != "syntax error") msg += " (" + e.second + ")";
    if (m->tree.errors().size() > 1) msg += " and " + std::to_string(m->tree.errors().size() - 1) + " more";
    msg += "; the rest of the file was analysed";
    res.messages.push_back({FileMessage::Kind::Warning, m->path, msg, m->src->line_col(e.first)});
  }

  // The rules to run: those enabled for any reported file's configuration.
  const RunRules rr = run_rules(opts, *cs, infos, target, Language::Python);
  const auto& rules = rr.checks;

  std::vector<std::vector<Finding>> per_module(mods.size());
  FactCache facts(mods.size());
  auto rules_start = std::chrono::steady_clock::now();
  parallel_for(mods.size(), threads, [&](size_t i) {
    for (auto* r : rules) {
      RuleContext ctx(*model, *mods[i], *r, per_module[i], facts);
      r->python(ctx);
    }
  });
  timing("rules", ms_since(rules_start));

  // Per reported file: its configuration, its suppressions, TL001.
  auto post_start = std::chrono::steady_clock::now();
  std::unordered_map<std::string, std::vector<Finding>> by_path;
  for (auto& v : per_module)
    for (auto& f : v) by_path[f.path].push_back(std::move(f));
  std::vector<std::string> paths;
  for (size_t i = 0; i < target.size(); ++i)
    if (target[i] || opts.report_context)
      if (mod_of[i]) paths.push_back(mod_of[i]->path);
  std::vector<std::vector<Finding>> kept(paths.size());
  auto post = [&](size_t pi) {
    const std::string& path = paths[pi];
    size_t i = index_of.at(path);
    const py::Module* m = mod_of[i];
    const FileInfo& fi = infos[i];
    auto fit = by_path.find(path);
    std::vector<Finding> fs_in = fit == by_path.end() ? std::vector<Finding>{} : std::move(fit->second);
    // code a literal condition rules out (`if 0:`, the `else:` of `if True:`) never runs
    if (!fs_in.empty())
      if (auto dead = py::dead_branches(m->tree); !dead.empty())
        std::erase_if(fs_in, [&](const Finding& f) {
          for (auto& [b, e] : dead)
            if (f.range.begin >= b && f.range.begin < e) return true;
          return false;
        });
    std::vector<Suppression> sups = parse_python_suppressions(*m->src, comment_ranges(m->tree), canon_code);
    // a test module is not a training program: only the correctness rules (TL4xx) report in it
    kept[pi] = file_findings(opts, fi.config ? *fi.config : cs->defaults(), fi, *m->src, sups, std::move(fs_in),
                             rr.any_tl001, Language::Python, m->is_test);
  };
  parallel_for(paths.size(), threads, post);
  for (auto& v : kept)
    for (auto& f : v) res.findings.push_back(std::move(f));
  sort_and_dedupe(res.findings);

  // Fingerprints: rule, project-relative path, scope, normalised statement, occurrence.
  std::unordered_map<std::string, std::vector<std::pair<uint32_t, uint32_t>>> comments;
  for (auto& f : res.findings) {
    size_t i = index_of[f.path];
    const py::Module* m = mod_of[i];
    if (!m) continue;
    auto cit = comments.find(f.path);
    if (cit == comments.end()) cit = comments.emplace(f.path, comment_ranges(m->tree)).first;
    const Range& r = f.statement.end > f.statement.begin ? f.statement : f.range;
    std::string norm = normalize(*m->src, cit->second, r.begin, r.end, f.code != "TL001");
    const std::string& pp = infos[i].project_path.empty() ? f.path : infos[i].project_path;
    f.fingerprint = fingerprint_key(f.code, pp, f.scope, norm);
  }
  assign_occurrences(res.findings);
  timing("suppressions, fingerprints", ms_since(post_start));
  return res;
}

// The C++ files of a run (tree-sitter fast path): one C++ program model over all of them, the
// rules' C++ checks, then the same configuration, suppressions (`// NOLINT(CODE)`,
// `// NOLINTNEXTLINE(CODE)`), TL001 and fingerprints as Python files get. Adds to `res`.
void analyse_cpp(std::vector<std::unique_ptr<SourceFile>> files, const std::vector<bool>& target,
                 const std::vector<FileInfo>& infos, const LintOptions& opts, ConfigSet& cs, LintResult& res) {
  auto start = std::chrono::steady_clock::now();
  std::vector<const SourceFile*> ptrs;
  for (auto& f : files) ptrs.push_back(f.get());
  // The typed path: exact types from Clang into the same model (docs/cpp.md).
  bool typed = !opts.cpp_fast_only && (opts.cpp_typed || !opts.compile_db.empty());
  std::string typed_reason = opts.cpp_typed ? "--clang" : "-p " + opts.compile_db;
  std::unique_ptr<cpp::TypedFacts> facts;
#ifdef TRAINLINT_HAVE_CLANG
  if (!typed && !opts.cpp_fast_only) {
    cpp::CompileDbFinder finder;
    for (size_t i = 0; i < files.size() && !typed; ++i)
      if (target[i]) {
        const std::string& db =
            finder.near(files[i]->abs_path().empty() ? files[i]->path() : files[i]->abs_path()).commands_dir;
        if (!db.empty()) {
          typed = true;
          typed_reason = "compile_commands.json in " + db;
        }
      }
  }
  const cpp::TypedPathModule* typed_module = nullptr;
  if (typed) {
    std::string why;
    typed_module = cpp::typed_path_module(&why);
    if (!typed_module)
      res.messages.push_back({FileMessage::Kind::Warning, "", why + "; C++ files were analysed by the fast path (" +
                              typed_reason + " asks for the typed path)", std::nullopt});
  }
  if (typed_module) {
    cpp::ClangOptions co;
    co.compile_db_dir = opts.compile_db;
    co.pch_dir = opts.clang_pch_dir;
    co.threads = run_threads(opts);
    auto typed_start = std::chrono::steady_clock::now();
    cpp::ClangResult cr = typed_module->typed_facts(ptrs, target, co);
    std::unordered_set<std::string> targets;
    for (size_t i = 0; i < files.size(); ++i)
      if (target[i]) targets.insert(files[i]->path());
    for (auto& msg : cr.messages)
      if (targets.count(msg.path)) res.messages.push_back({FileMessage::Kind::Warning, msg.path, msg.text, std::nullopt});
    facts = std::make_unique<cpp::TypedFacts>(std::move(cr.facts));
    if (std::getenv("TRAINLINT_TIMING"))
      std::fprintf(stderr, "trainlint: C++ typed path (%s): %zu files parsed by Clang, PCH %s %.0f ms, %.0f ms in all\n",
                   typed_reason.c_str(), cr.parsed, cr.pch_reused ? "reused" : "built in", cr.pch_ms,
                   ms_since(typed_start));
  }
#else
  if (typed)
    res.messages.push_back({FileMessage::Kind::Warning, "", "this trainlint was built without the typed C++ path (" +
                            typed_reason + " asks for it): C++ files were analysed by the fast path", std::nullopt});
#endif
  cpp::Model model = cpp::Model::build(ptrs, facts.get(), run_threads(opts));
  std::unordered_map<std::string, size_t> index_of;
  for (size_t i = 0; i < files.size(); ++i) {
    index_of[files[i]->path()] = i;
    if (target[i]) {
      ++res.files_analysed;
      res.files[files[i]->path()] = infos[i];
    } else {
      ++res.context_files;
    }
  }
  for (auto& tu : model.translation_units()) {
    auto it = index_of.find(tu.path);
    if (it == index_of.end() || !target[it->second] || tu.syntax_errors.empty()) continue;
    std::string msg = "syntax error";
    if (tu.syntax_errors.front().second != "syntax error") msg += " (" + tu.syntax_errors.front().second + ")";
    if (tu.syntax_errors.size() > 1) msg += " and " + std::to_string(tu.syntax_errors.size() - 1) + " more";
    msg += "; the rest of the file was analysed";
    res.messages.push_back({FileMessage::Kind::Warning, tu.path, msg, tu.syntax_errors.front().first});
  }
  const RunRules rr = run_rules(opts, cs, infos, target, Language::Cpp);
  std::vector<Finding> raw;
  for (auto& tu : model.translation_units()) {
    auto it = index_of.find(tu.path);
    if (it == index_of.end() || !(target[it->second] || opts.report_context)) continue;
    for (auto* r : rr.checks) {
      cpp::RuleContext ctx(model, tu, *r, raw);
      r->cpp(ctx);
    }
  }
  std::unordered_map<std::string, std::vector<Finding>> by_path;
  for (auto& f : raw) by_path[f.path].push_back(std::move(f));
  std::vector<Finding> kept;
  for (size_t i = 0; i < files.size(); ++i) {
    if (!(target[i] || opts.report_context)) continue;
    const SourceFile& src = *files[i];
    const FileInfo& fi = infos[i];
    std::vector<Suppression> sups = parse_cpp_suppressions(src, canon_code);
    std::vector<Finding> out = file_findings(opts, fi.config ? *fi.config : cs.defaults(), fi, src, sups,
                                             std::move(by_path[src.path()]), rr.any_tl001, Language::Cpp, false);
    // fingerprints: rule, project-relative path, scope, normalised statement, occurrence
    sort_and_dedupe(out);
    for (auto& f : out) {
      const Range& r = f.statement.end > f.statement.begin ? f.statement : f.range;
      std::string norm = normalize(src, {}, r.begin, r.end, f.code != "TL001");
      const std::string& pp = fi.project_path.empty() ? f.path : fi.project_path;
      f.fingerprint = fingerprint_key(f.code, pp, f.scope, norm);
    }
    assign_occurrences(out);
    for (auto& f : out) kept.push_back(std::move(f));
  }
  for (auto& f : kept) res.findings.push_back(std::move(f));
  sort_and_dedupe(res.findings);
  for (auto& f : files) res.cpp_sources.push_back(std::shared_ptr<const SourceFile>(std::move(f)));
  timing(facts ? "C++ (typed path)" : "C++ (fast path)", ms_since(start));
}

bool is_cpp_source(const std::string& path) {
  return kind_by_extension(fs::path(path)) == FileKind::Cpp;
}

// Python files go to the Python model, C++ files to the C++ model; one result.
LintResult analyse(std::vector<std::unique_ptr<SourceFile>> files, std::vector<bool> target, std::vector<FileInfo> infos,
                   const LintOptions& opts, std::shared_ptr<ConfigSet> cs, const CppHalfCache* cpp_cache) {
  std::vector<std::unique_ptr<SourceFile>> py_files, cpp_files;
  std::vector<bool> py_target, cpp_target;
  std::vector<FileInfo> py_infos, cpp_infos;
  for (size_t i = 0; i < files.size(); ++i) {
    bool cpp = is_cpp_source(files[i]->path());
    (cpp ? cpp_files : py_files).push_back(std::move(files[i]));
    (cpp ? cpp_target : py_target).push_back(target[i]);
    (cpp ? cpp_infos : py_infos).push_back(std::move(infos[i]));
  }
  // Every tree walk recurses as deep as the code nests: run them on a stack sized for that.
  LintResult res;
  if (cpp_files.empty()) {
    on_analysis_stack([&] { res = analyse_python(std::move(py_files), std::move(py_target), std::move(py_infos), opts, cs); });
    return res;
  }
  // The C++ half, from the cache when its entry is there, into a result of its own.
  LintResult cpp_res;
  auto cpp_half = [&] {
    auto start = std::chrono::steady_clock::now();
    if (cpp_cache)
      if (auto hit = cpp_cache->disk->load_run(cpp_cache->key)) {
        take_cached(cpp_res, std::move(*hit), cpp_files, cpp_target, cpp_infos, cpp_res.cpp_sources);
        timing("C++ (from the cache)", ms_since(start));
        return;
      }
    analyse_cpp(std::move(cpp_files), cpp_target, cpp_infos, opts, *cs, cpp_res);
    if (cpp_cache)
      cpp_cache->disk->save_run(cpp_cache->key,
                                {cpp_res.findings, cpp_res.messages, cpp_res.files_analysed, cpp_res.context_files});
  };
  unsigned threads = run_threads(opts);
  on_analysis_stack([&] {
    if (threads < 2 || py_files.empty()) {
      res = analyse_python(std::move(py_files), std::move(py_target), std::move(py_infos), opts, cs);
      cpp_half();
    } else {
      // With threads to spare the two halves, which share nothing but the options and the
      // configurations they read, run side by side: the C++ half no longer waits for the Python
      // link passes, which are partly serial.
      std::optional<AnalysisThread> beside;
      try {
        beside.emplace(cpp_half);
      } catch (const ThreadStartError&) {  // threads or memory ran short: one after the other
      }
      res = analyse_python(std::move(py_files), std::move(py_target), std::move(py_infos), opts, cs);
      if (beside) beside->join();
      else cpp_half();
    }
    // merged as the serial order gave it: the C++ half's messages after the Python half's
    res.messages.insert(res.messages.end(), std::make_move_iterator(cpp_res.messages.begin()),
                        std::make_move_iterator(cpp_res.messages.end()));
    res.files_analysed += cpp_res.files_analysed;
    res.context_files += cpp_res.context_files;
    for (auto& [path, fi] : cpp_res.files) res.files[path] = std::move(fi);
    for (auto& f : cpp_res.findings) res.findings.push_back(std::move(f));
    sort_and_dedupe(res.findings);
    res.cpp_sources = std::move(cpp_res.cpp_sources);
  });
  return res;
}

// analyse(), answered from the on-disk cache when nothing it depends on changed, and with the
// trees of unchanged files taken from it otherwise (analyzer/engine/cache.h).
LintResult analyse_cached(std::vector<std::unique_ptr<SourceFile>> files, std::vector<bool> target,
                          std::vector<FileInfo> infos, const LintOptions& opts, std::shared_ptr<ConfigSet> cs,
                          const Config* root_cfg) {
  if (!opts.use_cache || opts.stdin_text || !opts.overlays.empty() || opts.parse_cache)
    return analyse(std::move(files), std::move(target), std::move(infos), opts, cs);
  auto start = std::chrono::steady_clock::now();
  fs::path dir = opts.cache_dir;
  if (dir.empty() && root_cfg && root_cfg->cache_dir) dir = *root_cfg->cache_dir;
  if (dir.empty()) {
    std::error_code ec;
    dir = (root_cfg && !root_cfg->path.empty() ? root_cfg->dir : fs::current_path(ec)) / ".trainlint_cache";
  }
  std::string err;
  auto disk = cache::DiskCache::open(dir, opts.cache_max_bytes, &err);
  if (!disk) {
    LintResult res = analyse(std::move(files), std::move(target), std::move(infos), opts, cs);
    res.messages.push_back({FileMessage::Kind::Warning, dir.string(), err + "; linted without the cache", std::nullopt});
    return res;
  }

  // Everything the findings depend on, in the model's file order.
  cache::Hasher h;
  h.add(cache::build_identity());
  for (auto* list : {&opts.select, &opts.extend_select, &opts.ignore}) {
    h.add(list->size());
    for (auto& x : *list) h.add(x);
  }
  h.add(uint64_t{opts.project_context} | uint64_t{opts.report_context} << 1).add(opts.max_file_bytes);
  h.add(uint64_t{opts.cpp_typed} | uint64_t{opts.cpp_fast_only} << 1).add(opts.compile_db);
  // what the typed path reads besides the files: the compile databases found above C++ files
  {
    std::set<std::string> dbs;
    cpp::CompileDbFinder finder;
    for (auto& f : files)
      if (is_cpp_source(f->path())) {
        const auto& found = finder.near(f->path());
        if (!found.commands_dir.empty()) dbs.insert((fs::path(found.commands_dir) / "compile_commands.json").string());
        if (!found.flags_dir.empty()) dbs.insert((fs::path(found.flags_dir) / "compile_flags.txt").string());
      }
    if (!opts.compile_db.empty()) dbs.insert((fs::path(opts.compile_db) / "compile_commands.json").string());
    for (auto& p : dbs) {
      std::ifstream in(p, std::ios::binary);
      h.add(p).add(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
    }
  }
  std::set<const Config*> configs{root_cfg, &cs->defaults()};
  for (auto& fi : infos) configs.insert(fi.config);
  std::vector<std::string> config_files;
  for (auto* c : configs)
    if (c && !c->path.empty()) config_files.push_back(c->path);
  std::sort(config_files.begin(), config_files.end());
  for (auto& p : config_files) {
    std::ifstream in(p, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    h.add(p).add(text);
  }
  // the C++ half's key: all of the above and the C++ files alone (the whole run's adds every file)
  cache::Hasher cpp_h = h;
  cpp_h.add(std::string_view("the C++ half"));
  size_t n_cpp = 0;
  h.add(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    const SourceFile& f = *files[i];
    bool cpp = is_cpp_source(f.path());
    n_cpp += cpp;
    for (cache::Hasher* x : {&h, cpp ? &cpp_h : nullptr}) {
      if (!x) continue;
      x->add(f.path()).add(f.abs_path()).add(f.project_path()).add(infos[i].project_path);
      x->add(uint64_t{target[i]} | uint64_t{f.is_notebook()} << 1);
      x->add(f.text());
    }
  }
  cache::Hash key = h.finish();
  cpp_h.add(n_cpp);
  const CppHalfCache cpp_cache{disk.get(), cpp_h.finish()};

  if (auto hit = disk->load_run(key)) {
    LintResult res;
    res.configs = cs;
    take_cached(res, std::move(*hit), files, target, infos, res.cached_sources);
    timing("cache (a whole-run hit)", ms_since(start));
    return res;
  }
  timing("cache key", ms_since(start));
  LintOptions o = opts;
  o.tree_store = disk.get();
  o.clang_pch_dir = (dir / "clang").string();
  LintResult res = analyse(std::move(files), std::move(target), std::move(infos), o, cs, &cpp_cache);
  auto save_start = std::chrono::steady_clock::now();
  disk->save_run(key, {res.findings, res.messages, res.files_analysed, res.context_files});
  disk->prune();
  timing("cache save + prune", ms_since(save_start));
  if (std::getenv("TRAINLINT_TIMING")) {
    auto st = disk->stats();
    std::fprintf(stderr, "trainlint: cache: %zu trees loaded, %zu parsed\n", st.tree_hits, st.tree_misses);
  }
  return res;
}

}  // namespace

LintResult lint_sources(std::vector<std::unique_ptr<SourceFile>> files, const LintOptions& opts) {
  auto cs = std::make_shared<ConfigSet>(known_selector, canon_code);
  std::string err;
  cs->init("", true, &err);
  std::vector<bool> target(files.size(), true);
  std::vector<FileInfo> infos(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    infos[i].project_path = files[i]->path();
    infos[i].config = &cs->defaults();
  }
  LintResult res = analyse(std::move(files), std::move(target), std::move(infos), opts, cs);
  res.root_config = &cs->defaults();
  return res;
}

std::shared_ptr<ConfigSet> make_config_set(const std::string& config_file, bool isolated, std::string* error) {
  auto cs = std::make_shared<ConfigSet>(known_selector, canon_code);
  if (!cs->init(config_file, isolated, error)) return nullptr;
  return cs;
}

LintResult lint_paths(const std::vector<std::string>& paths, const LintOptions& opts) {
  auto t0 = std::chrono::steady_clock::now();
  auto cs = std::make_shared<ConfigSet>(known_selector, canon_code);
  LintResult early;
  early.configs = cs;
  {
    std::string err;
    if (!cs->init(opts.config_file, opts.isolated, &err)) {
      early.config_errors.push_back(err);
      return early;
    }
  }
  std::vector<FileMessage> messages;
  bool io_error = false;
  std::error_code ec;
  fs::path cwd = fs::current_path(ec);
  Walker walker(*cs, opts, messages);

  // ---- targets: the paths given ----------------------------------------------------------------
  std::vector<Entry> entries;
  std::vector<fs::path> roots_walked;  // target folders (their files are targets already)
  for (auto& raw : paths) {
    if (raw == "-") {
      Entry e;
      e.from_stdin = true;
      e.target = true;
      if (!opts.stdin_filename.empty()) {
        e.abs = absolute_normal(opts.stdin_filename);
        e.display = display(opts.stdin_filename);
        e.kind = kind_by_extension(e.abs);
        if (e.kind == FileKind::Other) e.kind = FileKind::Python;
        // an editor pipes every buffer: one the configuration or .gitignore leaves out stays out
        if (opts.force_exclude && walker.excluded(e.abs, false)) continue;
      } else {
        e.abs = cwd / "-";
        e.display = "-";
      }
      entries.push_back(std::move(e));
      continue;
    }
    fs::path p(raw);
    auto st = fs::status(p, ec);
    if (ec || !fs::exists(st)) {
      std::string why = ec ? ec.message() : "no such file or directory";
      if (ec.value() == ELOOP) why = "too many levels of symbolic links (a symlink loop)";
      auto lst = fs::symlink_status(p, ec);
      if (!ec && fs::is_symlink(lst) && !fs::exists(st)) {
        std::error_code ec2;
        (void)fs::status(p, ec2);
        why = ec2.value() == ELOOP ? "symlink loop" : "broken symbolic link";
      }
      messages.push_back({FileMessage::Kind::Error, raw, "cannot read: " + why, std::nullopt});
      io_error = true;
      continue;
    }
    fs::path abs = absolute_normal(p);
    if (fs::is_directory(st)) {
      if (opts.force_exclude && walker.excluded(abs, true)) continue;
      std::error_code e2;
      fs::directory_iterator probe(p, e2);
      if (e2) {
        messages.push_back({FileMessage::Kind::Error, raw, "cannot read folder: " + e2.message(), std::nullopt});
        io_error = true;
        continue;
      }
      walker.walk(abs, p, entries, true);
      roots_walked.push_back(abs);
      continue;
    }
    FileKind k = kind_by_extension(p);
    if (k == FileKind::Other && fs::is_regular_file(st) && has_python_shebang(p)) k = FileKind::Python;
    if (k == FileKind::Other) {
      messages.push_back({FileMessage::Kind::Error, display(p),
                          "cannot analyse: not a Python file (.py, .pyw), a notebook (.ipynb), a script with a python "
                          "shebang or a C++ file (.cpp, .cc, .cxx, .h, .hpp)",
                          std::nullopt});
      io_error = true;
      continue;
    }
    if (opts.force_exclude && walker.excluded(abs, false)) continue;
    entries.push_back({abs, display(p), true, false, k});
  }
  if (!cs->errors().empty()) {
    early.config_errors = cs->errors();
    return early;
  }
  {
    // one file named in several spellings (train.py, /abs/train.py, ../proj/train.py) is linted
    // and reported once, under the first
    std::unordered_set<std::string> abs_seen;
    std::vector<Entry> unique;
    for (auto& e : entries)
      if (e.from_stdin || abs_seen.insert(e.abs.string()).second) unique.push_back(std::move(e));
    entries = std::move(unique);
  }

  // ---- context: the other files of each target's project -------------------------------------
  std::unordered_set<std::string> seen;
  for (auto& e : entries) seen.insert(e.abs.string());
  std::unordered_map<std::string, FileInfo> info_of;  // by absolute path
  std::unordered_map<std::string, fs::path> project_of_dir;
  auto project_root = [&](const fs::path& dir) -> fs::path { return find_project_root(dir, project_of_dir); };
  size_t n_targets = entries.size();
  bool any_cpp_target = false;
  for (auto& e : entries) any_cpp_target = any_cpp_target || e.kind == FileKind::Cpp;
  if (opts.project_context) {
    std::set<fs::path> projects;
    for (size_t i = 0; i < n_targets; ++i) {
      fs::path r = project_root(entries[i].abs.parent_path());
      if (!r.empty()) projects.insert(r);
    }
    for (auto& root : projects) {
      bool covered = false;
      for (auto& w : roots_walked)
        if (w == root) covered = true;
      if (covered) continue;
      std::vector<Entry> ctx;
      std::vector<FileMessage> ignored;
      Walker quiet(*cs, opts, ignored);
      quiet.cpp_ = any_cpp_target;
      quiet.walk(root, root, ctx, false);
      for (auto& c : ctx) {
        if (!seen.insert(c.abs.string()).second) continue;
        c.display = display_found(c.abs, cwd);
        entries.push_back(std::move(c));
      }
    }
    if (!cs->errors().empty()) {
      early.config_errors = cs->errors();
      return early;
    }
  }
  timing("discovery", ms_since(t0));
  if (std::getenv("TRAINLINT_TIMING")) {
    if (opts.threads) std::fprintf(stderr, "trainlint: threads %u (-j %u)\n", run_threads(opts), opts.threads);
    else std::fprintf(stderr, "trainlint: threads %u (default)\n", run_threads(opts));
  }

  // ---- read -------------------------------------------------------------------------------------
  auto read_start = std::chrono::steady_clock::now();
  std::vector<std::unique_ptr<SourceFile>> sources;
  std::vector<bool> target;
  std::vector<FileInfo> infos;
  std::unordered_set<std::string> displays;
  GitIgnore repo_of;  // for repository roots
  // What a file's folder decides for it, asked once per folder (the files of a folder come one
  // after another): its project, the folder its project path is relative to, its configuration.
  struct FolderFacts {
    std::string dir;
    fs::path root;    // the project root, or empty
    // Fingerprints and baselines name files relative to the repository they are committed in
    // (a .trainlint.toml added to a subfolder must not change them), else to the project.
    fs::path anchor;
    // The model names modules by where they are, not by how the command line spelled them: by
    // their path below the outermost project around them, so that a nested project's modules
    // keep their outer names too ("sub.x" as well as "x").
    fs::path outer;
    const Config* config = nullptr;
  };
  const FolderFacts no_folder;
  FolderFacts last_folder;
  bool have_last_folder = false;
  auto folder_facts = [&](const fs::path& abs) -> const FolderFacts& {
    const std::string& a = abs.native();
    size_t slash = a.rfind('/');
    std::string_view dir = slash == std::string::npos ? std::string_view() : std::string_view(a).substr(0, slash);
    if (have_last_folder && dir == last_folder.dir) return last_folder;
    fs::path parent = abs.parent_path();
    FolderFacts f;
    f.dir = std::string(dir);
    f.root = project_root(parent);
    f.anchor = repo_of.repo_root(parent);
    if (f.anchor.empty()) f.anchor = f.root;
    f.config = &cs->for_dir(parent);
    if (!f.root.empty()) {
      f.outer = f.root;
      while (f.outer.has_parent_path() && f.outer.parent_path() != f.outer) {
        fs::path up = project_root(f.outer.parent_path());
        if (up.empty()) break;
        f.outer = up;
      }
    }
    last_folder = std::move(f);
    have_last_folder = true;
    return last_folder;
  };
  // The texts are read (and checked: NUL bytes, UTF-8, notebooks) on the run's threads; what
  // follows them, in the order found, is serial: it asks the memoised folder lookups.
  struct Read {
    std::unique_ptr<SourceFile> src;
    std::vector<FileMessage> messages;
    bool io_error = false;
  };
  std::vector<Read> read(entries.size());
  auto read_one = [&](size_t i) {
    const Entry& e = entries[i];
    Read& r = read[i];
    if (e.from_stdin) r.src = source_from_text(e.display, opts.stdin_text.value_or(""), r.messages);
    else if (auto ov = opts.overlays.find(e.abs.string()); ov != opts.overlays.end())
      r.src = source_from_text(e.display, ov->second, r.messages);
    else r.src = read_source(e.display, opts.max_file_bytes, r.messages, r.io_error);
  };
  unsigned read_threads = run_threads(opts);
  if (read_threads > 1 && entries.size() > 1) parallel_for(entries.size(), read_threads, read_one);
  else
    for (size_t i = 0; i < entries.size(); ++i) read_one(i);
  for (size_t ei = 0; ei < entries.size(); ++ei) {
    Entry& e = entries[ei];
    if (e.target) {  // a context file's trouble is not the run's
      messages.insert(messages.end(), std::make_move_iterator(read[ei].messages.begin()),
                      std::make_move_iterator(read[ei].messages.end()));
      io_error = io_error || read[ei].io_error;
    }
    std::unique_ptr<SourceFile> src = std::move(read[ei].src);
    if (!src) continue;
    if (!displays.insert(src->path()).second) continue;  // two spellings of one file
    FileInfo fi;
    fi.abs_path = e.abs.string();
    const FolderFacts& ff = e.display == "-" ? no_folder : folder_facts(e.abs);
    fi.project_root = ff.root.string();
    if (!ff.anchor.empty()) fi.project_path = relative_to_ancestor(e.abs, ff.anchor);
    else fi.project_path = e.display;
    fi.config = ff.config ? ff.config : &cs->for_dir(e.abs.parent_path());
    std::string name_path = fi.project_path;
    if (!ff.root.empty()) name_path = relative_to_ancestor(e.abs, ff.outer);
    src->set_origin(fi.abs_path, name_path);
    sources.push_back(std::move(src));
    target.push_back(e.target);
    infos.push_back(std::move(fi));
  }
  timing("read", ms_since(read_start));
  if (!cs->errors().empty()) {
    early.config_errors = cs->errors();
    return early;
  }

  // the configuration holding global settings (fail-on, baseline, run thresholds)
  const Config* root_cfg = root_config_for(*cs, entries);
  if (!cs->errors().empty()) {  // the working folder's configuration may be the broken one
    early.config_errors = cs->errors();
    return early;
  }
  // One order for the model, whatever the command line named first: where the analysis picks the
  // first of several candidates (a caller, a site that initialises CUDA), linting a file alone
  // and linting its whole project must pick the same one.
  {
    std::vector<size_t> order(sources.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return infos[a].abs_path < infos[b].abs_path; });
    std::vector<std::unique_ptr<SourceFile>> s2;
    std::vector<bool> t2;
    std::vector<FileInfo> i2;
    for (size_t i : order) {
      s2.push_back(std::move(sources[i]));
      t2.push_back(target[i]);
      i2.push_back(std::move(infos[i]));
    }
    sources = std::move(s2);
    target = std::move(t2);
    infos = std::move(i2);
  }
  LintResult res = analyse_cached(std::move(sources), std::move(target), std::move(infos), opts, cs, root_cfg);
  messages.insert(messages.end(), res.messages.begin(), res.messages.end());
  res.messages = std::move(messages);
  res.io_error = io_error;
  res.root_config = root_cfg;

  // ---- baseline ---------------------------------------------------------------------------------
  std::string baseline = opts.baseline;
  if (baseline == "-") baseline.clear();  // --no-baseline
  else if (baseline.empty() && root_cfg && root_cfg->baseline) baseline = *root_cfg->baseline;
  if (!baseline.empty()) {
    std::string err;
    auto b = read_baseline(baseline, &err);
    if (!b) {
      res.usage_error = err;
      return res;
    }
    std::unordered_map<std::string, size_t> left = b->by_fingerprint;
    std::vector<Finding> keep;
    for (auto& f : res.findings) {
      auto it = left.find(f.fingerprint);
      if (it != left.end() && it->second > 0) {
        --it->second;
        ++res.baselined;
        continue;
      }
      keep.push_back(std::move(f));
    }
    res.findings = std::move(keep);
    // entries of the reported files that no finding matched any more: fixed (or changed). Only
    // entries of rules that ran on the file: under `--select TL101` the others are not gone, and
    // rewriting the baseline as the message suggests would drop them.
    std::unordered_map<std::string, const FileInfo*> reported;
    for (auto& [p, fi] : res.files) reported.emplace(fi.project_path, &fi);
    auto judged = [&](const BaselineEntry& e) {
      auto it = reported.find(e.path);
      if (it == reported.end()) return false;
      const FileInfo& fi = *it->second;
      const RuleInfo* r = find_rule(e.code);
      if (!r || !fi.config) return false;
      std::string rel = fs::path(fi.abs_path).filename().generic_string();
      if (!fi.config->dir.empty()) {
        fs::path rp = fs::path(fi.abs_path).lexically_relative(fi.config->dir);
        if (!rp.empty() && rp.native().rfind("..", 0) != 0) rel = rp.generic_string();
      }
      return rule_enabled_for(opts, *fi.config, rel, r->code, r->slug);
    };
    for (auto& e : b->entries)
      if (judged(e) && left[e.fingerprint] > 0) {
        --left[e.fingerprint];
        ++res.baseline_stale;
      }
  }

  // ---- --diff-base ------------------------------------------------------------------------------
  if (!opts.diff_base.empty()) {
    std::string err;
    // the changes of every repository holding a reported file (two checkouts named together, a
    // submodule): asking only the first file's repository dropped every finding of the others
    // as "not changed"
    std::set<std::string> repos;
    for (auto& [p, fi] : res.files) {
      fs::path d = fs::path(fi.abs_path).parent_path(), r = d;
      std::error_code e0;
      for (fs::path x = d;; x = x.parent_path()) {
        if (fs::exists(x / ".git", e0)) {
          r = x;
          break;
        }
        if (!x.has_parent_path() || x.parent_path() == x) break;
      }
      repos.insert(r.string());
    }
    if (repos.empty()) repos.insert(cwd.string());
    std::optional<ChangedLines> changes = ChangedLines{};
    for (auto& repo : repos) {
      auto c = changed_lines_since(opts.diff_base, repo, &err);
      if (!c) {
        res.usage_error = err;
        return res;
      }
      for (auto& [file, ranges] : c->ranges) {
        auto& to = changes->ranges[file];
        to.insert(to.end(), ranges.begin(), ranges.end());
      }
      changes->whole_files.insert(c->whole_files.begin(), c->whole_files.end());
    }
    std::vector<Finding> keep;
    for (auto& f : res.findings) {
      auto it = res.files.find(f.path);
      std::string abs = it == res.files.end() ? f.path : it->second.abs_path;
      std::error_code e2;
      fs::path canon = fs::weakly_canonical(abs, e2);
      std::string key = (e2 ? fs::path(abs) : canon).lexically_normal().string();
      const SourceFile* src = res.source(f.path);
      bool changed;
      if (src && src->is_notebook()) changed = changes->any(key);  // JSON lines are not cell lines
      else {
        uint32_t first = f.statement.start.line ? f.statement.start.line : f.range.start.line;
        uint32_t last = f.statement.stop.line ? f.statement.stop.line : f.range.stop.line;
        changed = changes->touches(key, first, std::max(first, last));
      }
      if (changed) keep.push_back(std::move(f));
      else ++res.outside_diff;
    }
    res.findings = std::move(keep);
  }
  timing("total", ms_since(t0));
  return res;
}

}  // namespace tl
