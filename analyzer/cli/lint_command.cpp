#include "analyzer/cli/lint_command.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <new>
#include <sstream>
#include <vector>

#include "analyzer/core/baseline.h"
#include "analyzer/core/fix.h"
#include "analyzer/core/limits.h"
#include "analyzer/core/parallel.h"
#include "analyzer/python/add_noqa.h"
#include "analyzer/python/syntax.h"
#include "analyzer/python/ast.h"
#include "analyzer/report/report.h"

namespace fs = std::filesystem;

namespace tl::cli {
namespace {

std::string plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

void print_messages(const LintResult& res) {
  for (auto& m : res.messages) {
    std::cerr << (m.path.empty() ? std::string("trainlint") : m.path);  // a message about the run
    if (m.where) std::cerr << ":" << m.where->line << ":" << m.where->col;
    std::cerr << ": " << (m.kind == FileMessage::Kind::Error ? "error" : "warning") << ": " << m.message << "\n";
  }
}

bool write_whole_file(const std::string& path, const std::string& text, std::string* err) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);  // in place: keeps mode and owner
  if (!out || !(out << text) || !out.flush()) {
    *err = "cannot write " + path;
    return false;
  }
  return true;
}

int add_noqa(const LintCommand& c, const LintResult& res) {
  std::map<std::string, std::vector<const Finding*>> by_file;
  size_t added = 0, files = 0, left = 0;
  for (auto& f : res.findings) {
    if (f.code == "TL001") {
      // a stale suppression is removed, not suppressed: no comment can silence TL001
      if (!c.quiet)
        std::cerr << f.path << ":" << f.range.start.line
                  << ": note: TL001 left as it is (a suppression comment cannot silence it; `--fix` removes the unused "
                     "one)\n";
      continue;
    }
    by_file[f.path].push_back(&f);
  }
  int rc = res.io_error ? 2 : 0;
  for (auto& [path, fs_] : by_file) {
    const py::Module* m = nullptr;
    for (auto& mm : res.model->modules())
      if (mm->path == path) m = mm.get();
    if (!m) continue;
    if (m->src->is_notebook()) {
      std::cerr << path << ": warning: --add-noqa does not edit notebooks; " << plural(fs_.size(), "finding", "findings")
                << " left as they are\n";
      left += fs_.size();
      continue;
    }
    auto ne = py::add_noqa_edits(*m, fs_);
    for (auto& s : ne.skipped) std::cerr << path << ":" << s.substr(0, s.find(':')) << ": warning: no suppression comment can go here for" << s.substr(s.find(':') + 1) << "\n";
    left += ne.skipped.size();
    if (ne.edits.empty()) continue;
    std::string text = py::apply_edits(m->src->text(), ne.edits);
    SourceFile after(path, text);
    auto tree = py::Tree::parse(after);
    if (tree.errors().size() > m->tree.errors().size()) {
      std::cerr << path << ": error: adding suppressions would break the file's syntax; left unchanged\n";
      rc = 2;
      continue;
    }
    std::string err;
    if (!write_whole_file(path, text, &err)) {
      std::cerr << "trainlint: error: " << err << "\n";
      rc = 2;
      continue;
    }
    added += ne.suppressed;
    ++files;
  }
  if (!c.quiet) {
    if (added)
      std::cerr << "trainlint: added suppressions for " << plural(added, "finding", "findings") << " in "
                << plural(files, "file", "files") << "\n";
    else if (!left)
      std::cerr << "trainlint: nothing to suppress in " << plural(res.files_analysed, "file", "files") << "\n";
    if (left)
      std::cerr << "trainlint: " << plural(left, "finding was", "findings were") << " not suppressed (see above)\n";
  }
  return rc;
}

// --fix / --unsafe-fixes / --diff: lint -> apply -> re-lint until stable. `res` is the first
// lint; on return it holds the last one (the findings that remain). Sets `diff_found` when --diff
// printed something. Returns non-zero for an error exit.
int apply_fixes_cli(LintCommand& c, LintResult& res, bool& diff_found, bool& stdin_fixed) {
  std::vector<SourceText> files;
  std::map<std::string, std::string> abs_of;
  size_t notebooks = 0;
  for (auto& [path, fi] : res.files) {
    const SourceFile* src = res.source(path);
    if (!src) continue;
    if (src->is_notebook()) {
      ++notebooks;
      continue;
    }
    files.push_back({path, src->text()});
    abs_of[path] = fi.abs_path;
  }
  // the path standard input is linted as
  std::string stdin_display;
  if (c.lint.stdin_text) {
    stdin_display = c.lint.stdin_filename.empty() ? "-" : fs::path(c.lint.stdin_filename).lexically_normal().generic_string();
    if (stdin_display.rfind("./", 0) == 0) stdin_display = stdin_display.substr(2);
  }
  LintResult last;
  auto lint = [&](const std::vector<SourceText>& texts) {
    LintOptions o = c.lint;
    for (auto& t : texts) {
      if (c.lint.stdin_text && t.path == stdin_display) o.stdin_text = t.text;
      else o.overlays[abs_of[t.path]] = t.text;
    }
    last = lint_paths(c.paths, o);
    std::vector<Finding> out;
    for (auto& f : last.findings) {
      const SourceFile* s = last.source(f.path);
      if (s && s->is_notebook()) continue;  // offsets are into the joined cells: never written back
      out.push_back(f);
    }
    return out;
  };
  FixOptions fo;
  fo.unsafe = c.unsafe_fixes;
  fo.syntax_errors = py::count_syntax_errors;
  FixRunResult run = fix_until_stable(files, lint, fo);
  int rc = 0;
  for (auto& r : run.refusals) {
    std::cerr << r.path << ":" << r.where.line << ":" << r.where.col << ": error: the fix for " << r.code << " ("
              << r.title << ") was not applied: " << r.reason << "\n";
    rc = 2;
  }
  size_t changed_files = 0;
  for (auto& f : run.files) {
    if (!f.changed()) continue;
    ++changed_files;
    if (c.diff) {
      std::cout << unified_diff(f.path, f.original, f.text);
      diff_found = true;
    } else if (c.lint.stdin_text && f.path == stdin_display) {
      std::cout << f.text;  // standard input: the fixed code goes to standard output
      stdin_fixed = true;
    } else {
      std::string err;
      if (!write_whole_file(f.path, f.text, &err)) {
        std::cerr << "trainlint: error: " << err << "\n";
        rc = 2;
      }
    }
  }
  if (c.lint.stdin_text && !c.diff && !stdin_fixed) {
    // unchanged: still echo it, as formatters do; also when it was not analysed (a notebook, a
    // buffer that is not UTF-8), or an editor would replace the buffer with the report
    std::cout << *c.lint.stdin_text;
    stdin_fixed = true;
  }
  size_t unsafe_left = 0, safe_left = 0;
  for (auto& f : run.remaining)
    if (f.fix) (f.fix->applicability == Applicability::Unsafe ? unsafe_left : safe_left)++;
  if (!c.quiet) {
    std::cerr << "trainlint: " << (c.diff ? "would fix " : "fixed ") << plural(run.applied(), "finding", "findings")
              << " in " << plural(changed_files, "file", "files");
    if (!c.diff) std::cerr << " (" << plural(last.findings.size(), "finding", "findings") << " left)";
    std::cerr << "\n";
    if (!c.unsafe_fixes && unsafe_left)
      std::cerr << "trainlint: " << plural(unsafe_left, "more fix is", "more fixes are")
                << " available with --unsafe-fixes\n";
    if (!run.converged)
      std::cerr << "trainlint: warning: fixes kept producing new fixes; stopped after " << kMaxFixRounds << " rounds\n";
    if (notebooks)
      std::cerr << "trainlint: " << plural(notebooks, "notebook was", "notebooks were")
                << " not fixed (--fix does not edit notebooks)\n";
  }
  (void)safe_left;
  res = std::move(last);
  return rc;
}

// The folder relative paths are written against (SARIF's %SRCROOT%, GitLab's paths): the project
// of the working folder (its repository root, usually), else the working folder.
fs::path report_root() {
  std::error_code ec;
  fs::path cwd = fs::current_path(ec);
  if (ec) return {};
  fs::path root = find_project_root(cwd.lexically_normal());
  return root.empty() ? cwd : root;
}

}  // namespace

int run_lint(LintCommand& c) {
  size_t dashes = std::count(c.paths.begin(), c.paths.end(), std::string("-"));
  if (dashes > 1) {
    std::cerr << "trainlint: error: `-` (standard input) can be given once\n";
    return 2;
  }
  if (dashes == 0 && !c.lint.stdin_filename.empty()) {
    std::cerr << "trainlint: error: --stdin-filename names the code read from `-`, which is not among the paths\n";
    return 2;
  }
  if (dashes) {
    if (c.add_noqa) {
      std::cerr << "trainlint: error: --add-noqa edits files; it cannot work on standard input\n";
      return 2;
    }
    c.lint.stdin_text = std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  if (!c.write_baseline.empty()) {
    if (!c.lint.diff_base.empty()) {
      std::cerr << "trainlint: error: --write-baseline records every finding; it cannot be combined with --diff-base\n";
      return 2;
    }
    c.lint.baseline = "-";  // record everything, whatever the configuration's baseline
  }

  auto out_format = *report::parse_format(c.format);
  if (c.statistics && c.output.empty() && out_format != report::Format::Text && out_format != report::Format::Json) {
    std::cerr << "trainlint: error: --statistics prints text or JSON; with --format " << c.format
              << " give --output FILE for the report\n";
    return 2;
  }
  std::ofstream file;  // --output: opened before linting so that a bad path fails fast
  if (!c.output.empty()) {
    file.open(c.output, std::ios::binary | std::ios::trunc);
    if (!file) {
      std::cerr << "trainlint: error: cannot write " << c.output << ": " << std::strerror(errno) << "\n";
      return 2;
    }
  }

  LintResult res;
  // The process ends when the command returns. Freeing the model (every tree and model object of
  // the run, millions of small allocations) cost about 8% of the instructions of a run that reads
  // its trees from the cache (callgrind, Debian's torch tree): the model is handed to a holder
  // that is never freed instead (reachable from a global, so the leak checker does not count it).
  struct KeepModelUntilExit {
    LintResult& r;
    ~KeepModelUntilExit() {
      static auto* kept = new std::vector<std::shared_ptr<py::ProgramModel>>();
      if (r.model) kept->push_back(std::move(r.model));
    }
  } keep_model{res};
  try {
    res = lint_paths(c.paths, c.lint);
  } catch (const std::bad_alloc&) {
    if (first_to_report_out_of_memory()) std::cerr << "trainlint: error: out of memory; " << kOutOfMemoryAdvice << "\n";
    return 2;
  } catch (const ThreadStartError& e) {
    std::cerr << "trainlint: error: " << e.what() << " (the system is out of threads or memory)\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "trainlint: internal error: " << e.what() << "\n";
    return 2;
  }
  if (!res.config_errors.empty()) {
    for (auto& e : res.config_errors) {
      std::stringstream lines(e);
      for (std::string line; std::getline(lines, line);) std::cerr << "trainlint: error: " << line << "\n";
    }
    return 2;
  }
  if (!res.usage_error.empty()) {
    std::cerr << "trainlint: error: " << res.usage_error << "\n";
    return 2;
  }

  if (!c.write_baseline.empty()) {
    print_messages(res);
    std::string err;
    if (!write_baseline(c.write_baseline, baseline_entries(res), &err)) {
      std::cerr << "trainlint: error: " << err << "\n";
      return 2;
    }
    if (!c.quiet)
      std::cerr << "trainlint: wrote " << plural(res.findings.size(), "finding", "findings") << " in "
                << plural(res.files_analysed, "file", "files") << " to " << c.write_baseline << "\n";
    return res.io_error ? 2 : 0;
  }
  if (c.add_noqa) {
    print_messages(res);
    return add_noqa(c, res);
  }
  bool diff_found = false, stdin_fixed = false;
  if (c.fix || c.diff) {
    int frc = apply_fixes_cli(c, res, diff_found, stdin_fixed);
    if (!res.config_errors.empty() || !res.usage_error.empty()) return 2;
    if (c.diff) {
      print_messages(res);
      return frc ? frc : (res.io_error ? 2 : diff_found ? 1 : 0);
    }
    if (frc) return frc;
  }

  report::TextOptions to;
  to.color = c.color == "always" || (c.color == "auto" && isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR"));
  to.show_source = !c.quiet;
  to.show_summary = !c.quiet;
  report::ReportOptions ro;
  ro.root = report_root();
  // With --output the chosen format goes to the file and stdout gets the text report.
  auto stdout_format = c.output.empty() ? out_format : report::Format::Text;
  if (file.is_open()) {
    report::TextOptions plain = to;
    plain.color = false;
    report::write_report(file, file, out_format, res, plain, ro);
    file.close();
    if (!file) {
      std::cerr << "trainlint: error: cannot write " << c.output << "\n";
      return 2;
    }
  }
  std::ostream& report_out = stdin_fixed ? std::cerr : std::cout;  // stdout holds the fixed code
  if (stdin_fixed) to.color = false;
  if (!c.statistics) report::write_report(report_out, std::cerr, stdout_format, res, to, ro);
  else if (stdout_format == report::Format::Json)
    std::cout << report::statistics_to_json(res).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  else report::write_statistics_text(std::cout, res);
  std::cout.flush();
  if (!std::cout) {  // a full disk, a closed pipe: the findings were not delivered
    std::cerr << "trainlint: error: cannot write the report to standard output\n";
    return 2;
  }
  if (!c.quiet) {
    std::string baseline = c.lint.baseline.empty() && res.root_config && res.root_config->baseline
                               ? *res.root_config->baseline
                               : c.lint.baseline;
    if (res.baselined)
      std::cerr << "trainlint: " << plural(res.baselined, "finding is", "findings are") << " in the baseline "
                << baseline << " and not reported\n";
    if (res.baseline_stale)
      std::cerr << "trainlint: " << plural(res.baseline_stale, "baselined finding is", "baselined findings are")
                << " gone; `trainlint --write-baseline " << baseline << "` drops "
                << (res.baseline_stale == 1 ? "it" : "them") << "\n";
    if (res.outside_diff)
      std::cerr << "trainlint: " << plural(res.outside_diff, "finding is", "findings are") << " on lines not changed since "
                << c.lint.diff_base << " and not reported\n";
    if (res.findings.empty())
      std::cerr << (res.baselined || res.outside_diff ? "no new findings in " : "no findings in ")
                << plural(res.files_analysed, "file", "files") << "\n";
  }
  if (res.io_error) return 2;
  if (c.exit_zero) return 0;
  std::optional<Severity> threshold;
  if (!c.fail_on.empty()) threshold = parse_severity(c.fail_on);
  else if (res.root_config && res.root_config->fail_on) threshold = res.root_config->fail_on;
  else threshold = Severity::Warning;
  for (auto& f : res.findings)
    if (f.severity >= *threshold) return 1;
  return 0;
}

}  // namespace tl::cli
