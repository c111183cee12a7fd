#include "analyzer/core/engine.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>
#include <unordered_set>

#include "rules/registry.h"

namespace fs = std::filesystem;

namespace tl {
namespace {

bool skip_dir(const fs::path& p) {
  std::string name = p.filename().string();
  static const char* names[] = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".tox", ".nox", ".venv",
                                "venv", ".mypy_cache", ".pytest_cache", ".ruff_cache", "site-packages",
                                ".eggs", "dist", ".cache", ".ipynb_checkpoints"};
  for (auto* n : names)
    if (name == n) return true;
  // `build`, `build-release`, `cmake-build-debug`; not Python packages such as `builders/`
  if (name == "build" || name.rfind("build-", 0) == 0 || name.rfind("cmake-build", 0) == 0) return true;
  std::error_code ec;
  if (fs::exists(p / "pyvenv.cfg", ec)) return true;   // any virtual environment
  if (fs::exists(p / "CMakeCache.txt", ec)) return true;  // a CMake build tree
  return false;
}

bool is_python_file(const fs::path& p) {
  auto ext = p.extension().string();
  return ext == ".py" || ext == ".pyw";
}

std::string display(const fs::path& p) {
  std::string s = p.lexically_normal().generic_string();
  if (s.rfind("./", 0) == 0) s = s.substr(2);
  return s;
}

}  // namespace

std::vector<std::string> discover_files(const std::vector<std::string>& paths, std::vector<FileMessage>& messages,
                                        bool& io_error) {
  std::vector<std::string> out;
  for (auto& raw : paths) {
    fs::path p(raw);
    std::error_code ec;
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
    if (fs::is_directory(st)) {
      fs::recursive_directory_iterator it(p, fs::directory_options::skip_permission_denied, ec), end;
      if (ec) {
        messages.push_back({FileMessage::Kind::Error, raw, "cannot read folder: " + ec.message(), std::nullopt});
        io_error = true;
        continue;
      }
      std::vector<std::string> found;
      while (it != end) {
        const fs::directory_entry e = *it;  // a copy: `*it` is gone once the walk ends
        std::error_code e2;
        bool is_link = e.is_symlink(e2);
        if (e.is_directory(e2) && !is_link) {
          if (skip_dir(e.path())) it.disable_recursion_pending();
        } else if (is_python_file(e.path())) {
          std::error_code e3;
          auto fst = fs::status(e.path(), e3);
          if (e3) {
            std::string why = e3.value() == ELOOP ? "symlink loop" : e3.message();
            messages.push_back({FileMessage::Kind::Warning, display(e.path()), "skipped: " + why, std::nullopt});
          } else if (fs::is_regular_file(fst)) {
            found.push_back(display(e.path()));
          }
        }
        it.increment(ec);
        if (ec) {
          messages.push_back({FileMessage::Kind::Warning, display(e.path()), "skipped while walking: " + ec.message(), std::nullopt});
          ec.clear();
        }
      }
      std::sort(found.begin(), found.end());
      out.insert(out.end(), found.begin(), found.end());
    } else {
      out.push_back(display(p));
    }
  }
  // the same file named twice is linted once
  std::vector<std::string> uniq;
  std::unordered_set<std::string> seen;
  for (auto& f : out)
    if (seen.insert(f).second) uniq.push_back(f);
  return uniq;
}

std::unique_ptr<SourceFile> read_source(const std::string& path, size_t max_bytes, std::vector<FileMessage>& messages,
                                        bool& io_error) {
  std::error_code ec;
  auto st = fs::status(path, ec);
  if (!ec && !fs::is_regular_file(st)) {  // a FIFO would block the read; a device never ends
    messages.push_back({FileMessage::Kind::Error, path, "cannot read: not a regular file", std::nullopt});
    io_error = true;
    return nullptr;
  }
  auto size = fs::file_size(path, ec);
  if (ec) {
    messages.push_back({FileMessage::Kind::Error, path, "cannot read: " + ec.message(), std::nullopt});
    io_error = true;
    return nullptr;
  }
  if (size > max_bytes) {
    messages.push_back({FileMessage::Kind::Warning, path,
                        "skipped: " + std::to_string(size >> 20) + " MiB is over the " + std::to_string(max_bytes >> 20) +
                            " MiB limit for one file",
                        std::nullopt});
    return nullptr;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    messages.push_back({FileMessage::Kind::Error, path, std::string("cannot read: ") + std::strerror(errno), std::nullopt});
    io_error = true;
    return nullptr;
  }
  std::string text;
  text.resize(size);
  in.read(text.data(), static_cast<std::streamsize>(size));
  text.resize(static_cast<size_t>(in.gcount()));
  if (in.bad()) {
    messages.push_back({FileMessage::Kind::Error, path, "cannot read: I/O error", std::nullopt});
    io_error = true;
    return nullptr;
  }
  if (text.find('\0') != std::string::npos) {
    messages.push_back({FileMessage::Kind::Warning, path, "skipped: binary file (contains NUL bytes)", std::nullopt});
    return nullptr;
  }
  // a UTF-8 byte-order mark is allowed and kept (tree-sitter skips it as whitespace-free text)
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

bool rule_enabled(const LintOptions& opts, std::string_view code, std::string_view slug) {
  auto matches = [&](const std::string& sel) {
    if (sel == "ALL" || sel == "all") return true;
    if (sel == slug) return true;
    if (sel.size() <= code.size()) {
      for (size_t i = 0; i < sel.size(); ++i)
        if (std::toupper(static_cast<unsigned char>(sel[i])) != code[i]) return false;
      return true;
    }
    return false;
  };
  bool on = opts.select.empty();
  for (auto& s : opts.select)
    if (matches(s)) on = true;
  for (auto& s : opts.ignore)
    if (matches(s)) on = false;
  return on;
}

namespace {

// `# noqa` / `# noqa: TL101,TL103` / `# trainlint: ignore[TL101]` on the flagged line.
bool suppressed(const SourceFile& src, const Finding& f) {
  std::string_view line = src.line_text(f.range.start.line);
  auto hash = line.find('#');
  while (hash != std::string_view::npos) {
    std::string_view c = line.substr(hash + 1);
    while (!c.empty() && c.front() == ' ') c.remove_prefix(1);
    auto check_codes = [&](std::string_view rest) {
      if (rest.empty()) return true;
      return rest.find(f.code) != std::string_view::npos || rest.find(f.slug) != std::string_view::npos;
    };
    if (c.rfind("noqa", 0) == 0) {
      std::string_view rest = c.substr(4);
      if (rest.empty() || rest.front() != ':') return true;  // bare noqa
      return check_codes(rest.substr(1));
    }
    if (c.rfind("trainlint:", 0) == 0) {
      std::string_view rest = c.substr(10);
      while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
      if (rest.rfind("ignore", 0) == 0) {
        rest.remove_prefix(6);
        if (rest.empty() || rest.front() != '[') return true;
        return check_codes(rest);
      }
    }
    hash = line.find('#', hash + 1);
  }
  return false;
}

}  // namespace

LintResult lint_sources(std::vector<std::unique_ptr<SourceFile>> files, const LintOptions& opts) {
  LintResult res;
  unsigned threads = opts.threads ? opts.threads : std::max(1u, std::thread::hardware_concurrency());
  res.files_analysed = files.size();
  auto model = std::make_shared<py::ProgramModel>(py::ProgramModel::build(std::move(files), threads));
  res.model = model;
  const auto& mods = model->modules();
  for (auto& m : mods)
    if (!m->tree.errors().empty()) {
      auto& e = m->tree.errors().front();
      std::string msg = "syntax error";
      if (e.second != "syntax error") msg += " (" + e.second + ")";
      if (m->tree.errors().size() > 1) msg += " and " + std::to_string(m->tree.errors().size() - 1) + " more";
      msg += "; the rest of the file was analysed";
      res.messages.push_back({FileMessage::Kind::Warning, m->path, msg, m->src->line_col(e.first)});
    }
  std::vector<const RuleInfo*> rules;
  for (auto& r : registry())
    if (r.check && rule_enabled(opts, r.code, r.slug)) rules.push_back(&r);
  std::vector<std::vector<Finding>> per_module(mods.size());
  FactCache facts(mods.size());
  auto rules_start = std::chrono::steady_clock::now();
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < mods.size();) {
      for (auto* r : rules) {
        RuleContext ctx(*model, *mods[i], *r, per_module[i], facts);
        r->check(ctx);
      }
      auto& v = per_module[i];
      v.erase(std::remove_if(v.begin(), v.end(), [&](const Finding& f) { return suppressed(*mods[i]->src, f); }),
              v.end());
    }
  };
  std::vector<std::thread> pool;
  unsigned k = std::min<unsigned>(threads, static_cast<unsigned>(std::max<size_t>(1, mods.size())));
  if (k <= 1) work();
  else {
    for (unsigned w = 0; w < k; ++w) pool.emplace_back(work);
    for (auto& th : pool) th.join();
  }
  if (std::getenv("TRAINLINT_TIMING"))
    std::fprintf(stderr, "trainlint: %-28s %8.1f ms\n", "rules",
                 std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - rules_start).count());
  for (auto& v : per_module)
    for (auto& f : v) res.findings.push_back(std::move(f));
  sort_and_dedupe(res.findings);
  std::vector<const SourceFile*> srcs;
  for (auto& m : mods) srcs.push_back(m->src.get());
  compute_fingerprints(res.findings, srcs);
  return res;
}

LintResult lint_paths(const std::vector<std::string>& paths, const LintOptions& opts) {
  std::vector<FileMessage> messages;
  bool io_error = false;
  auto files = discover_files(paths, messages, io_error);
  std::vector<std::unique_ptr<SourceFile>> sources;
  for (auto& f : files)
    if (auto s = read_source(f, opts.max_file_bytes, messages, io_error)) sources.push_back(std::move(s));
  LintResult res = lint_sources(std::move(sources), opts);
  messages.insert(messages.end(), res.messages.begin(), res.messages.end());
  res.messages = std::move(messages);
  res.io_error = io_error;
  return res;
}

}  // namespace tl
