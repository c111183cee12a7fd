// `--statistics`: how many findings each rule produced, like `ruff --statistics`.
#include <algorithm>
#include <map>
#include <string>

#include "analyzer/report/report.h"

namespace tl::report {

std::vector<RuleStatistic> rule_statistics(const LintResult& res) {
  std::map<std::string, RuleStatistic> by_code;
  for (auto& f : res.findings) {
    auto [it, fresh] = by_code.try_emplace(f.code);
    RuleStatistic& s = it->second;
    if (fresh) {
      s.code = f.code;
      s.slug = f.slug;
      s.severity = f.severity;
    }
    s.severity = std::max(s.severity, f.severity);
    ++s.count;
    if (f.fix && !f.fix->edits.empty()) ++(f.fix->applicability == Applicability::Safe ? s.fixable : s.unsafe_fixable);
  }
  std::vector<RuleStatistic> out;
  for (auto& [code, s] : by_code) out.push_back(std::move(s));
  std::stable_sort(out.begin(), out.end(), [](const RuleStatistic& a, const RuleStatistic& b) { return a.count > b.count; });
  return out;
}

void write_statistics_text(std::ostream& out, const LintResult& res) {
  auto stats = rule_statistics(res);
  size_t count_width = 1, code_width = 1;
  bool any_fix = false;
  for (auto& s : stats) {
    count_width = std::max(count_width, std::to_string(s.count).size());
    code_width = std::max(code_width, s.code.size());
    any_fix = any_fix || s.fixable || s.unsafe_fixable;
  }
  for (auto& s : stats) {
    std::string count = std::to_string(s.count);
    out << std::string(count_width - count.size(), ' ') << count << "\t" << s.code
        << std::string(code_width - s.code.size(), ' ') << "\t";
    // [*] some findings have a safe fix, [-] only unsafe fixes, [ ] none
    if (any_fix) out << (s.fixable ? "[*] " : s.unsafe_fixable ? "[-] " : "[ ] ");
    out << s.slug << "\n";
  }
}

nlohmann::json statistics_to_json(const LintResult& res) {
  nlohmann::json out = nlohmann::json::array();
  for (auto& s : rule_statistics(res))
    out.push_back({{"code", s.code},
                   {"slug", s.slug},
                   {"severity", severity_name(s.severity)},
                   {"count", s.count},
                   {"fixable", s.fixable},
                   {"unsafe_fixable", s.unsafe_fixable}});
  return out;
}

}  // namespace tl::report
