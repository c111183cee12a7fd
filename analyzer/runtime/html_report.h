// `trainlint run --html FILE`: one self-contained HTML page of the run (no script, no network; the
// charts are inline SVG drawn here): the step-time timeline (every step, the warm-up marked), a
// stacked bar of where the mean step goes (each finding, data wait, GC, the rest), the estimate,
// GPU idle when measured, and the findings with their source lines and the fix each needs.
#pragma once
#include <string>

#include "analyzer/runtime/run_report.h"

namespace tl::runtime {

// The page. Every string that comes from the user's program (paths, source, command line,
// messages) is HTML-escaped.
std::string run_html(const RunContext& ctx);

// &, <, >, " and ' as character references.
std::string html_escape(std::string_view s);

}  // namespace tl::runtime
