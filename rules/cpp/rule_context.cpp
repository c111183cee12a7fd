#include "rules/cpp/rule_context.h"

#include "analyzer/core/rule_info.h"

namespace tl::cpp {

Note RuleContext::note_at(uint32_t tu_index, const Range& range, std::string message) const {
  return Note{model.translation_units()[tu_index].path, range, std::move(message)};
}

Finding& RuleContext::report(const Range& range, std::string message, std::vector<Note> notes) {
  Finding f;
  f.code = std::string(rule.code);
  f.slug = std::string(rule.slug);
  f.severity = rule.severity;
  f.message = std::move(message);
  f.path = tu.path;
  f.range = range;
  f.statement = range;
  f.notes = std::move(notes);
  f.probe = std::string(rule.probe);
  out_.push_back(std::move(f));
  return out_.back();
}

Finding& RuleContext::report(const Site& site, std::string message, std::vector<Note> notes) {
  Finding& f = report(site.range, std::move(message), std::move(notes));
  f.path = model.translation_units()[site.tu].path;
  if (site.statement.end > site.statement.begin) f.statement = site.statement;
  if (site.function >= 0) f.scope = model.functions()[site.function].qualified_name;
  return f;
}

Finding& RuleContext::report_per_step(const Site& site, std::string message, const StepContext& sc) {
  std::vector<Note> notes;
  const Loop& l = model.loops()[sc.loop];
  notes.push_back(note_at(l.tu, l.header, "runs every iteration of this " + Model::describe(l)));
  for (uint32_t cid : sc.chain) {
    const CallSite& c = model.calls()[cid];
    std::string callee = c.holder_call ? c.receiver : c.callee;
    if (callee.size() > 60) callee = callee.substr(0, 57) + "...";
    notes.push_back(note_at(c.tu, c.range, "through this call to `" + callee + "`, made every step"));
  }
  return report(site, std::move(message), std::move(notes));
}

}  // namespace tl::cpp
