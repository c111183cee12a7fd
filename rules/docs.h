#pragma once
#include <string_view>
#include <vector>

namespace tl {
struct RuleDoc {
  std::string_view code;  // TL101
  std::string_view file;  // TL101-gc-collect-per-step.md
  std::string_view text;  // the whole Markdown text
};
// Every rules/docs/*.md, embedded at build time (cmake/EmbedDocs.cmake).
const std::vector<RuleDoc>& rule_docs();
}  // namespace tl
