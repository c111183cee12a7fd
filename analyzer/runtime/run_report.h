// Reports of `trainlint run`: the text table, the JSON document (the lint schema with a `runtime`
// object per finding and a top-level `run` object) and the Chrome-trace/Perfetto file.
#pragma once
#include <ostream>

#include <nlohmann/json.hpp>

#include "analyzer/engine/engine.h"
#include "analyzer/runtime/measure.h"
#include "analyzer/runtime/plan.h"
#include "analyzer/runtime/records.h"

namespace tl::runtime {

struct RunContext {
  const LintResult* lint = nullptr;       // findings of the script's program, in plan order
  const std::vector<PlanSite>* sites = nullptr;
  const Measurement* m = nullptr;
  Anchor anchor;                          // where runtime-only findings point
  std::vector<std::string> command;       // the program's argv
  double threshold_pct = 1.0;
};

// Runtime-only findings as Finding values (path and range from the anchor).
std::vector<Finding> runtime_only_findings(const RunContext& ctx);

void write_run_text(std::ostream& out, const RunContext& ctx);
nlohmann::json run_json(const RunContext& ctx);

// Chrome trace (`{"traceEvents": [...]}`, `ph: "X"` complete events, `ts`/`dur` in microseconds
// from the earliest record). One trace process per OS process (pid = the real pid), with
// threads: 1 steps, 2 data (DataLoader waits and iter), 3 flagged sites (named by code and
// callee), 4 gc; GPU activity of that process on threads 1000, 1001, ... one per (device,
// stream) in order of appearance, named "GPU <device> stream <stream>". Metadata events name
// every process and thread.
nlohmann::json trace_json(const std::vector<ProcessRecords>& procs, const std::vector<PlanSite>& sites);

}  // namespace tl::runtime
