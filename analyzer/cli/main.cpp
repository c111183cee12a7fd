// trainlint command line: `trainlint [PATH...]`, `trainlint rules`, `trainlint explain CODE`,
// `trainlint run [OPTIONS] -- PROGRAM ARGS...`.
// Exit codes: 0 clean, 1 findings at or above --fail-on, 2 usage or I/O error; `run` returns the
// program's own exit code (2 only when trainlint cannot run it).
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "analyzer/core/engine.h"
#include "analyzer/report/report.h"
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
    if (!all && !r.check) continue;
    std::printf("%s  %-34s %-8s %-13s %s%s\n", std::string(r.code).c_str(), std::string(r.slug).c_str(),
                std::string(tl::severity_name(r.severity)).c_str(), std::string(r.languages).c_str(),
                std::string(r.summary).c_str(),
                r.check ? "" : (r.languages == "runtime only" ? "  (reported by `trainlint run`)" : "  (not yet implemented)"));
  }
  return 0;
}

bool check_rule_names(const tl::LintOptions& opts) {
  for (auto& s : opts.select)
    if (s != "ALL" && s != "all" && !tl::find_rule(s) && !(s.size() < 5 && (s[0] == 'T' || s[0] == 't'))) {
      std::cerr << "trainlint: error: --select: unknown rule '" << s << "'\n";
      return false;
    }
  for (auto& s : opts.ignore)
    if (!tl::find_rule(s) && !(s.size() < 5 && (s[0] == 'T' || s[0] == 't'))) {
      std::cerr << "trainlint: error: --ignore: unknown rule '" << s << "'\n";
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
            << "; languages: " << r->languages << "; runtime probe: " << r->probe << ")\n\n";
  if (doc.empty())
    std::cout << r->summary << ".\n\nThis rule is in the catalog but not implemented yet.\n";
  else
    std::cout << doc;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"trainlint: finds the habits in deep-learning training code that leave a GPU idle"};
  app.set_version_flag("--version", "trainlint 0.1.0");
  std::vector<std::string> paths, select, ignore;
  std::string format = "text", fail_on = "warning", color = "auto";
  unsigned jobs = 0;
  bool quiet = false;
  app.add_option("paths", paths, "Python files or folders (folders are searched recursively)");
  app.add_option("--select", select, "Only these rules: codes, slugs or code prefixes (TL1), comma-separated")
      ->allow_extra_args(false);
  app.add_option("--ignore", ignore, "Skip these rules: codes, slugs or code prefixes, comma-separated")->allow_extra_args(false);
  std::string output_file;
  bool statistics = false, exit_zero = false;
  app.add_option("--format", format,
                 "Output format: text (compiler style), json (docs/json-output.md), sarif (SARIF 2.1.0), github "
                 "(GitHub Actions annotations), gitlab (GitLab Code Quality report); see docs/output-formats.md")
      ->check(CLI::IsMember(tl::report::format_names()));
  app.add_option("-o,--output", output_file,
                 "Write the --format report to this file; the text report still goes to stdout (print findings and "
                 "upload SARIF from one run)");
  app.add_flag("--statistics", statistics,
               "Print how many findings each rule produced instead of the findings (JSON with --format json)");
  app.add_flag("--exit-zero", exit_zero, "Exit 0 even when there are findings (still 2 on usage or I/O errors)");
  app.add_option("--fail-on", fail_on, "Exit 1 when a finding has at least this severity")
      ->check(CLI::IsMember({"error", "warning", "info"}));
  app.add_option("-j,--jobs", jobs, "Worker threads (default: all cores)");
  app.add_option("--color", color, "Colour the text output")->check(CLI::IsMember({"auto", "always", "never"}));
  app.add_flag("-q,--quiet", quiet, "Print findings only: no source excerpts or summary");

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
  run->add_option("--max-steps", ropts.max_steps, "End the program cleanly after N optimizer steps (0: no limit)")
      ->check(CLI::NonNegativeNumber);
  run->add_option("--threshold", ropts.threshold_pct,
                  "A finding is confirmed when it costs at least this % of step time (default 1)")
      ->check(CLI::NonNegativeNumber);
  run->add_option("--select", run_select, "Only these rules: codes, slugs or code prefixes, comma-separated")
      ->allow_extra_args(false);
  run->add_option("--ignore", run_ignore, "Skip these rules: codes, slugs or code prefixes, comma-separated")
      ->allow_extra_args(false);
  run->add_option("command", ropts.command, "The program and its arguments, after `--`");
  run->prefix_command();
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
    if (!check_rule_names(ropts.lint)) return 2;
    return end_like_program(tl::runtime::run_command(ropts));
  }
  if (paths.empty()) {
    std::cerr << "trainlint: error: no paths given (try `trainlint train.py` or `trainlint .`)\n";
    return 2;
  }

  auto out_format = *tl::report::parse_format(format);
  if (statistics && output_file.empty() && out_format != tl::report::Format::Text &&
      out_format != tl::report::Format::Json) {
    std::cerr << "trainlint: error: --statistics prints text or JSON; with --format " << format
              << " give --output FILE for the report\n";
    return 2;
  }
  std::ofstream file;  // --output: opened before linting so that a bad path fails fast
  if (!output_file.empty()) {
    file.open(output_file, std::ios::binary | std::ios::trunc);
    if (!file) {
      std::cerr << "trainlint: error: cannot write " << output_file << ": " << std::strerror(errno) << "\n";
      return 2;
    }
  }

  tl::LintOptions opts;
  opts.select = split_commas(select);
  opts.ignore = split_commas(ignore);
  if (!check_rule_names(opts)) return 2;
  opts.threads = jobs;
  tl::LintResult res;
  try {
    res = tl::lint_paths(paths, opts);
  } catch (const std::exception& e) {
    std::cerr << "trainlint: internal error: " << e.what() << "\n";
    return 2;
  }
  tl::report::TextOptions to;
  to.color = color == "always" || (color == "auto" && isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR"));
  to.show_source = !quiet;
  to.show_summary = !quiet;
  tl::report::ReportOptions ro;
  std::error_code cwd_error;
  ro.root = std::filesystem::current_path(cwd_error);  // relative paths and SARIF's %SRCROOT%
  // With --output the chosen format goes to the file and stdout gets the text report.
  auto stdout_format = output_file.empty() ? out_format : tl::report::Format::Text;
  if (file.is_open()) {
    tl::report::TextOptions plain = to;
    plain.color = false;
    tl::report::write_report(file, file, out_format, res, plain, ro);
    file.close();
  }
  if (!statistics) tl::report::write_report(std::cout, std::cerr, stdout_format, res, to, ro);
  else if (stdout_format == tl::report::Format::Json)
    std::cout << tl::report::statistics_to_json(res).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  else tl::report::write_statistics_text(std::cout, res);
  std::cout.flush();
  if (!output_file.empty() && !file) {
    std::cerr << "trainlint: error: cannot write " << output_file << "\n";
    return 2;
  }
  if (res.io_error) return 2;
  if (exit_zero) return 0;
  auto threshold = *tl::parse_severity(fail_on);
  for (auto& f : res.findings)
    if (f.severity >= threshold) return 1;
  return 0;
}
