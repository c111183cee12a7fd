// `trainlint run [OPTIONS] -- PROGRAM ARGS...`: lint the script's program, write the plan, run the
// program under the bootstrap, merge the records, report. See analyzer/runtime/README.md.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/engine/engine.h"

namespace tl::runtime {

struct RunOptions {
  std::vector<std::string> command;  // PROGRAM ARGS...
  std::string output;                // report file; empty: stderr
  std::string format = "text";       // text / json
  std::string trace;                 // Chrome trace file; empty: none
  std::string html;                  // self-contained HTML page of the run; empty: none
  int64_t max_steps = 0;
  double threshold_pct = 1.0;
  bool threshold_from_cli = false;   // else the configuration's [run] threshold, if any
  std::string keep_records;          // also copy the run's records, plan and exit status here
  std::string from_records;          // report from a folder kept with keep_records; run nothing
  LintOptions lint;
};

// Runs the whole thing. Returns the program's exit code (128+N when a signal N ended it), or 2
// for trainlint's own usage and launch errors.
int run_command(const RunOptions& opts);

// After run_command: the signal that ended the program, so that main() can end the same way
// (0: none).
int run_terminating_signal();

}  // namespace tl::runtime
