// trainlint command line: `trainlint [OPTIONS] [PATH...]`, `trainlint rules`, `trainlint explain
// CODE`, `trainlint run [OPTIONS] -- PROGRAM ARGS...`.
// Exit codes: 0 clean, 1 findings at or above --fail-on, 2 usage, configuration or I/O error;
// `run` returns the program's own exit code (2 only when trainlint cannot run it).
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "analyzer/cli/lint_command.h"
#include "analyzer/cli/malloc_tuning.h"
#include "analyzer/engine/engine.h"
#include "analyzer/lsp/server.h"
#include "analyzer/report/report.h"
#include "analyzer/runtime/merge.h"
#include "analyzer/runtime/run.h"
#include "rules/registry.h"

namespace {

std::vector<std::string> split_commas(const std::vector<std::string>& in) {
  std::vector<std::string> out;
  for (auto& s : in) {
    std::stringstream ss(s);
    std::string part;
    while (std::getline(ss, part, ','))
      if (!part.empty()) out.push_back(part);
  }
  return out;
}

int cmd_rules(bool all) {
  for (auto& r : tl::registry()) {
    if (!all && !r.implemented()) continue;
    std::string note;
    if (!r.implemented()) note = r.languages == "runtime only" ? "  (reported by `trainlint run`)" : "  (not yet implemented)";
    else if (r.off_by_default) note = "  (off unless selected)";
    std::printf("%s  %-34s %-8s %-13s %s%s\n", std::string(r.code).c_str(), std::string(r.slug).c_str(),
                std::string(tl::severity_name(r.severity)).c_str(), std::string(r.languages).c_str(),
                std::string(r.summary).c_str(), note.c_str());
  }
  return 0;
}

bool known_selector(const std::string& s) {
  if (s == "ALL" || s == "all") return true;
  for (auto& r : tl::registry())
    if (tl::selector_matches(s, r.code, r.slug)) return true;
  return false;
}

bool check_rule_names(const std::vector<std::string>& sels, const char* option) {
  for (auto& s : sels)
    if (!known_selector(s)) {
      std::cerr << "trainlint: error: " << option << ": unknown rule '" << s
                << "' (`trainlint rules --all` lists the codes and slugs)\n";
      return false;
    }
  return true;
}

// Ends trainlint the way the program ended when a signal that does not dump core killed it, so
// that a shell or scheduler sees the same status; otherwise returns 128+N.
int end_like_program(int rc) {
  int sig = tl::runtime::run_terminating_signal();
  switch (sig) {
    case SIGINT: case SIGTERM: case SIGHUP: case SIGKILL: case SIGPIPE: case SIGALRM: case SIGUSR1: case SIGUSR2:
      std::cout.flush();
      std::cerr.flush();
      signal(sig, SIG_DFL);
      raise(sig);
      break;
    default: break;
  }
  return rc;
}

int cmd_explain(const std::string& code) {
  const tl::RuleInfo* r = tl::find_rule(code);
  if (!r) {
    std::cerr << "trainlint: error: unknown rule '" << code << "'; `trainlint rules --all` lists them\n";
    return 2;
  }
  std::string_view doc = tl::rule_doc(r->code);
  std::cout << r->code << " " << r->slug << " (default severity: " << tl::severity_name(r->severity)
            << (r->off_by_default ? ", off unless selected" : "") << "; languages: " << r->languages
            << "; runtime probe: " << r->probe << ")\n\n";
  if (doc.empty())
    std::cout << r->summary << ".\n\nThis rule is in the catalog but not implemented yet.\n";
  else
    std::cout << doc;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  tl::cli::tune_malloc(argc, argv);  // may re-execute trainlint, before anything else happens
  CLI::App app{
      "trainlint: finds the habits in deep-learning training code that leave a GPU idle.\n\n"
      "  trainlint [OPTIONS] PATH...          lint files and folders (a file is analysed with its project)\n"
      "  trainlint rules [--all]              list the rules\n"
      "  trainlint explain CODE               what a rule finds and what to write instead\n"
      "  trainlint run [OPTIONS] -- PROGRAM   run a training program and measure each finding's cost\n"
      "  trainlint lsp                        serve the Language Server Protocol on stdin/stdout (editors)\n\n"
      "Exit status: 0 no findings at or above --fail-on, 1 findings, 2 usage, configuration or I/O error."};
  app.set_version_flag("--version", "trainlint 0.1.0");
  app.get_formatter()->column_width(34);
  tl::cli::LintCommand lc;
  std::vector<std::string> select, extend_select, ignore;
  app.add_option("paths", lc.paths,
                 "Python files, notebooks and folders (folders recursively); `-` reads standard input");

  const char* kRules = "Rule selection";
  app.add_option("--select", select, "Only these rules: codes, slugs, code prefixes (TL1) or ALL, comma-separated; replaces the configuration's `select`")
      ->allow_extra_args(false)->group(kRules);
  app.add_option("--extend-select", extend_select, "Also these rules (e.g. TL001, which is off by default)")
      ->allow_extra_args(false)->group(kRules);
  app.add_option("--ignore", ignore, "Skip these rules: codes, slugs or code prefixes, comma-separated")
      ->allow_extra_args(false)->group(kRules);

  const char* kConfig = "Configuration";
  app.add_option("--config", lc.lint.config_file,
                 "Use this configuration file (pyproject.toml with [tool.trainlint], or .trainlint.toml) for every file "
                 "instead of discovering the nearest one")
      ->group(kConfig);
  app.add_flag("--isolated", lc.lint.isolated, "Ignore every configuration file")->group(kConfig);

  const char* kFiles = "Files";
  app.add_option("--stdin-filename", lc.lint.stdin_filename,
                 "The path of the code read from standard input (`-`): it decides the configuration and the project, "
                 "and replaces that file in the analysis")
      ->group(kFiles);
  bool no_gitignore = false, no_context = false;
  app.add_flag("--no-respect-gitignore", no_gitignore, "Also lint files that .gitignore files ignore")->group(kFiles);
  app.add_flag("--force-exclude", lc.lint.force_exclude,
               "Apply exclude / extend-exclude and .gitignore to paths given on the command line too (for pre-commit)")
      ->group(kFiles);
  app.add_flag("--no-context", no_context,
               "Analyse only the paths given, not the other files of their project (faster; findings that depend on "
               "the script that calls a helper are lost)")
      ->group(kFiles);

  const char* kOutput = "Output";
  app.add_option("--format", lc.format,
                 "Output format: text (compiler style), json (docs/json-output.md), sarif (SARIF 2.1.0), github "
                 "(GitHub Actions annotations), gitlab (GitLab Code Quality report); see docs/output-formats.md")
      ->check(CLI::IsMember(tl::report::format_names()))->group(kOutput);
  app.add_option("-o,--output", lc.output,
                 "Write the --format report to this file; the text report still goes to stdout (print findings and "
                 "upload SARIF from one run)")
      ->group(kOutput);
  app.add_flag("--statistics", lc.statistics,
               "Print how many findings each rule produced instead of the findings (JSON with --format json)")
      ->group(kOutput);
  app.add_option("--color", lc.color, "Colour the text output: auto, always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))->group(kOutput);
  app.add_flag("-q,--quiet", lc.quiet, "Print findings only: no source excerpts, no summary lines")->group(kOutput);

  const char* kExit = "Exit status";
  app.add_option("--fail-on", lc.fail_on,
                 "Exit 1 when a finding has at least this severity: error, warning, info (default: the "
                 "configuration's `fail-on`, else warning)")
      ->check(CLI::IsMember({"error", "warning", "info"}))->group(kExit);
  app.add_flag("--exit-zero", lc.exit_zero, "Exit 0 even when there are findings (still 2 on usage or I/O errors)")
      ->group(kExit);

  const char* kCi = "Baselines and CI";
  app.add_option("--baseline", lc.lint.baseline,
                 "Report (and fail on) only findings that are not in this baseline file (default: the "
                 "configuration's `baseline`)")
      ->group(kCi);
  bool no_baseline = false;
  app.add_flag("--no-baseline", no_baseline, "Ignore the configuration's `baseline`: report every finding")->group(kCi);
  app.add_option("--write-baseline", lc.write_baseline,
                 "Record the current findings in this file (sorted JSON) and exit 0; later runs with --baseline "
                 "report only new findings")
      ->group(kCi);
  app.add_option("--diff-base", lc.lint.diff_base,
                 "Report only findings whose statement is on lines changed since this git ref (uses `git diff`)")
      ->group(kCi);

  const char* kFix = "Fixes";
  app.add_flag("--fix", lc.fix, "Apply the safe fixes and report what is left (each rule's doc says its fix safety)")
      ->group(kFix);
  app.add_flag("--unsafe-fixes", lc.unsafe_fixes,
               "Also apply the unsafe fixes (they may change behaviour beyond removing the cost); implies --fix unless "
               "--diff")
      ->group(kFix);
  app.add_flag("--diff", lc.diff,
               "Print the fixes as a unified diff instead of writing them (exit 1 when there is one)")
      ->group(kFix);
  app.add_flag("--add-noqa", lc.add_noqa,
               "Add `# trainlint: ignore[CODES]` on the line of every current finding (adopt trainlint on an old code "
               "base in one commit); keeps existing comments, idempotent")
      ->group(kFix);

  app.add_option("-j,--jobs", lc.lint.threads, "Worker threads (default: the CPUs this process may use, within its CPU quota)")->group("Performance");
  bool no_cache = false;
  app.add_flag("--no-cache", no_cache, "Neither read nor write the on-disk cache (.trainlint_cache)")->group("Performance");
  app.add_option("--cache-dir", lc.lint.cache_dir,
                 "Keep the cache in this folder (default: the configuration's `cache-dir`, else .trainlint_cache "
                 "beside the configuration, else in the working folder)")
      ->group("Performance");

  const char* kCpp = "C++ (LibTorch)";
  app.add_flag("--clang", lc.lint.cpp_typed,
               "Type C++ files with Clang (libTooling) and LibTorch's headers: exact types, slower (docs/cpp.md)")
      ->group(kCpp);
  app.add_option("-p,--compile-commands-dir", lc.lint.compile_db,
                 "The folder of compile_commands.json for C++ files (implies --clang; default: found above each file)")
      ->group(kCpp);
  app.add_flag("--no-clang", lc.lint.cpp_fast_only,
               "Only the fast C++ path (tree-sitter), even where a compile_commands.json is found")
      ->group(kCpp);

  auto* rules = app.add_subcommand("rules", "List the rules");
  bool all_rules = false;
  rules->add_flag("--all", all_rules, "Include catalog rules that are not implemented yet");
  auto* explain = app.add_subcommand("explain", "Explain one rule: what it finds and why it costs GPU time");
  std::string code;
  explain->add_option("code", code, "A rule code or slug (TL101, gc-collect-per-step)")->required();
  auto* run = app.add_subcommand(
      "run",
      "Run a training program under the runtime shim and report what each finding cost: "
      "`trainlint run [OPTIONS] -- python3 train.py ARGS...`. The program's stdin, stdout, stderr and exit "
      "code pass through; the report goes to stderr after it ends (or to --output)");
  tl::runtime::RunOptions ropts;
  std::vector<std::string> run_select, run_ignore;
  run->add_option("--output", ropts.output, "Write the report to this file instead of stderr");
  run->add_option("--format", ropts.format, "Report format")->check(CLI::IsMember({"text", "json"}));
  run->add_option("--trace", ropts.trace, "Also write a Chrome-trace/Perfetto JSON file of the run");
  run->add_option("--html", ropts.html,
                  "Also write one self-contained HTML page of the run: step-time timeline, where the step goes, "
                  "the findings with their source and fix");
  run->add_option("--max-steps", ropts.max_steps, "End the program cleanly after N optimizer steps (0: no limit)")
      ->check(CLI::NonNegativeNumber);
  double run_threshold = -1;
  run->add_option("--threshold", run_threshold,
                  "A finding is confirmed when it costs at least this % of step time (default: the configuration's "
                  "[run] threshold, else 1)")
      ->check(CLI::NonNegativeNumber);
  run->add_option("--select", run_select, "Only these rules: codes, slugs or code prefixes, comma-separated")
      ->allow_extra_args(false);
  run->add_option("--ignore", run_ignore, "Skip these rules: codes, slugs or code prefixes, comma-separated")
      ->allow_extra_args(false);
  run->add_option("--config", ropts.lint.config_file, "Use this configuration file");
  run->add_flag("--isolated", ropts.lint.isolated, "Ignore every configuration file");
  run->add_option("--keep-records", ropts.keep_records,
                  "Also keep the run's raw records, its plan and the program's exit status in this folder (to "
                  "report again later with --from-records, or to attach to a bug report)");
  run->add_option("--from-records", ropts.from_records,
                  "Run nothing: report from a folder kept with --keep-records (the command after `--` must name "
                  "the same, unchanged script)");
  run->add_option("command", ropts.command, "The program and its arguments, after `--`");
  run->prefix_command();
  auto* merge = app.add_subcommand(
      "merge",
      "Combine the `trainlint run --format json` reports of the nodes of one multi-node job into one report: "
      "per-rank figures, the slowest rank, stragglers (`trainlint merge node-*.json`)");
  tl::runtime::MergeOptions mopts;
  merge->add_option("reports", mopts.files, "The nodes' JSON reports")->required()->check(CLI::ExistingFile);
  merge->add_option("--format", mopts.format, "Report format")->check(CLI::IsMember({"text", "json"}));
  merge->add_option("--output", mopts.output, "Write the report to this file instead of stdout");
  auto* lsp = app.add_subcommand(
      "lsp", "Serve the Language Server Protocol 3.17 on standard input and output, for editors (docs/lsp.md)");
  bool lsp_stdio = false;
  lsp->add_flag("--stdio", lsp_stdio, "Use standard input and output (the default and only transport)");
  app.require_subcommand(0, 1);

  // `trainlint run [OPTIONS] -- PROGRAM ARGS...`: everything after the first `--` that follows `run`
  // is the program's command line, verbatim (CLI11 would move a `--` around).
  std::vector<std::string> after_dashes;
  bool have_dashes = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) != "run") continue;
    for (int k = i + 1; k < argc; ++k)
      if (std::string_view(argv[k]) == "--") {
        have_dashes = true;
        for (int j = k + 1; j < argc; ++j) after_dashes.push_back(argv[j]);
        argc = k;
        break;
      }
    break;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  if (*rules) return cmd_rules(all_rules);
  if (*explain) return cmd_explain(code);
  if (*lsp) return tl::lsp::serve_stdio();
  if (*merge) return tl::runtime::merge_command(mopts);
  if (*run) {
    for (auto& r : run->remaining()) ropts.command.push_back(r);
    if (have_dashes) {
      if (!ropts.command.empty()) {
        std::cerr << "trainlint: error: unknown option or argument `" << ropts.command.front()
                  << "` before `--`: `trainlint run [OPTIONS] -- PROGRAM ARGS...`\n";
        return 2;
      }
      ropts.command = after_dashes;
    }
    if (ropts.command.empty()) {
      std::cerr << "trainlint: error: no program to run (try `trainlint run -- python3 train.py`)\n";
      return 2;
    }
    ropts.lint.select = split_commas(run_select);
    ropts.lint.ignore = split_commas(run_ignore);
    if (!check_rule_names(ropts.lint.select, "--select") || !check_rule_names(ropts.lint.ignore, "--ignore")) return 2;
    if (run_threshold >= 0) ropts.threshold_pct = run_threshold;
    ropts.threshold_from_cli = run_threshold >= 0;
    return end_like_program(tl::runtime::run_command(ropts));
  }

  lc.lint.select = split_commas(select);
  lc.lint.extend_select = split_commas(extend_select);
  lc.lint.ignore = split_commas(ignore);
  if (!check_rule_names(lc.lint.select, "--select") || !check_rule_names(lc.lint.extend_select, "--extend-select") ||
      !check_rule_names(lc.lint.ignore, "--ignore"))
    return 2;
  lc.lint.respect_gitignore = !no_gitignore;
  lc.lint.project_context = !no_context;
  // A run that edits files (or shows the edits) works on the model's sources: no cache there.
  lc.lint.use_cache = !no_cache && !lc.fix && !lc.diff && !lc.add_noqa;
  if (no_baseline) {
    if (!lc.lint.baseline.empty()) {
      std::cerr << "trainlint: error: --baseline and --no-baseline contradict each other\n";
      return 2;
    }
    lc.lint.baseline = "-";
  }
  if (lc.unsafe_fixes && !lc.diff) lc.fix = true;
  if (lc.add_noqa && (lc.fix || lc.diff)) {
    std::cerr << "trainlint: error: --add-noqa and --fix/--diff do different things: run them one after the other\n";
    return 2;
  }
  if (!lc.write_baseline.empty() && (lc.fix || lc.diff || lc.add_noqa)) {
    std::cerr << "trainlint: error: --write-baseline records findings; it does not combine with --fix, --diff or --add-noqa\n";
    return 2;
  }
  if (lc.paths.empty() && !lc.lint.stdin_filename.empty()) lc.paths.push_back("-");
  if (lc.paths.empty()) {
    std::cerr << "trainlint: error: no paths given (try `trainlint train.py` or `trainlint .`)\n";
    return 2;
  }
  return tl::cli::run_lint(lc);
}
