// `trainlint [OPTIONS] PATH...`: lint, then report, write a baseline, add suppressions or fix.
#pragma once
#include <string>
#include <vector>

#include "analyzer/engine/engine.h"

namespace tl::cli {

struct LintCommand {
  std::vector<std::string> paths;
  LintOptions lint;
  std::string format = "text";
  std::string output;          // --output FILE: the format goes there, text to stdout
  bool statistics = false;
  bool exit_zero = false;
  std::string color = "auto";
  std::string fail_on;         // empty: the configuration's, else warning
  bool quiet = false;
  std::string write_baseline;  // --write-baseline FILE
  bool add_noqa = false;
  bool fix = false;            // apply safe fixes
  bool unsafe_fixes = false;   // and unsafe ones
  bool diff = false;           // print the fixes as a unified diff instead of writing them
};

// Runs the command; returns the exit status.
int run_lint(LintCommand& c);

}  // namespace tl::cli
