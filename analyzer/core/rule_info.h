// RuleInfo: what is known of a rule code without running it (metadata only). Reporters, the
// configuration and `trainlint rules` / `explain` read it; the checks that implement a rule live
// above, in rules/<language>/, and the table that joins both is rules/registry.cpp.
#pragma once
#include <string_view>

#include "analyzer/core/finding.h"

namespace tl {

// The languages a lint run reads; a rule may have a check for each (rules/registry.h).
enum class Language { Python, Cpp };

struct RuleInfo {
  std::string_view code;
  std::string_view slug;
  Severity severity;
  std::string_view languages;   // as the catalog writes it: "Python", "Python, C++", "runtime only"
  std::string_view summary;     // one line
  std::string_view probe;       // how `trainlint run` measures the cost: site, data-wait, ...
  bool off_by_default = false;  // runs only when selected by name, prefix or ALL (TL001)
  bool by_engine = false;       // reported by the engine itself, not by a check (TL001)
};

}  // namespace tl
