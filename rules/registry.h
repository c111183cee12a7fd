// The rule registry: one explicit, sorted table of every code (rules/registry.cpp), each row the
// rule's metadata and its check in each language (null where the rule has none in that language).
// Reporters, `trainlint rules`, `explain`, SARIF and the LSP read rule metadata from here; the
// engine reads the checks.
#pragma once
#include <string_view>
#include <vector>

#include "analyzer/core/rule_info.h"

namespace tl {

class RuleContext;  // a Python check's context: rules/python/rule_context.h
namespace cpp {
class RuleContext;  // a C++ check's context: rules/cpp/rule_context.h
}  // namespace cpp

using PythonCheck = void (*)(RuleContext&);
using CppCheck = void (*)(cpp::RuleContext&);

// One row of the table: the metadata (a RuleInfo, so that `const RuleInfo*` callers read it as
// is) and one check per language.
struct RuleEntry : RuleInfo {
  PythonCheck python = nullptr;  // null: not implemented for Python
  CppCheck cpp = nullptr;        // null: not implemented for C++

  // Does the rule have a check in some language?
  bool has_check() const { return python != nullptr || cpp != nullptr; }
  // Does a lint run report it (by a check in some language, or by the engine)?
  bool implemented() const { return has_check() || by_engine; }
  // Does a lint run of files in `lang` report it?
  bool implemented_for(Language lang) const {
    return (lang == Language::Python ? python != nullptr : cpp != nullptr) || by_engine;
  }
};

const std::vector<RuleEntry>& registry();
// By code ("TL101") or slug ("gc-collect-per-step"); null if unknown.
const RuleEntry* find_rule(std::string_view code_or_slug);
std::string_view rule_doc(std::string_view code);  // the rule's Markdown doc, or empty

}  // namespace tl
