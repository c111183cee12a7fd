// What a Python rule's check sees (RuleContext) and the module facts rules share (FactCache).
// The checks in rules/python/ take a RuleContext; rules/registry.cpp lists them per code.
#pragma once
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analyzer/core/finding.h"
#include "analyzer/core/rule_info.h"
#include "analyzer/python/model.h"

namespace tl {

// Facts that rules derive from a whole module (scanning its calls or tree), memoised for the
// run and shared between rule invocations and threads, so that program-level questions cost
// one pass per module instead of one per (module x program member).
class FactCache {
 public:
  // `modules`: the model's module count, to size the table (a few facts per module)
  explicit FactCache(size_t modules) { map_.reserve(modules * 2); }
  bool module_fact(const py::Module& m, const char* key, const std::function<bool()>& compute) {
    Key k{m.index, key};
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = map_.find(k);
      if (it != map_.end()) return it->second;
    }
    bool v = compute();
    std::lock_guard<std::mutex> lock(mu_);
    map_.emplace(k, v);
    return v;
  }
  // True when the fact holds for any module of any program `m` belongs to.
  bool any_in_programs(const py::ProgramModel& model, const py::Module& m, const char* key,
                       const std::function<bool(const py::Module&)>& compute) {
    for (uint32_t pid : m.programs)
      if (any_in_program(model.programs()[pid], key, compute)) return true;
    return false;
  }
  // The nodes of `m` where a fact holds, memoised per module.
  const std::vector<py::NodeId>& module_sites(const py::Module& m, const char* key,
                                              const std::function<std::vector<py::NodeId>()>& compute) {
    Key k{m.index, key};
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = sites_.find(k);
      if (it != sites_.end()) return it->second;
    }
    std::vector<py::NodeId> v = compute();
    std::lock_guard<std::mutex> lock(mu_);
    return sites_.emplace(k, std::move(v)).first->second;  // references survive rehashing
  }
  // True when a site of the fact lies in code that program `p` runs (docs/concepts.md "Program": its
  // members' top level and the functions reachable from its entry script).
  bool any_site_in_program(const py::ProgramModel& model, const py::Program& p, const char* key,
                           const std::function<std::vector<py::NodeId>(const py::Module&)>& compute) {
    Key k{(1ull << 32) | p.id, key};
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = map_.find(k);
      if (it != map_.end()) return it->second;
    }
    bool v = false;
    for (const py::Module* mm : p.members) {
      for (py::NodeId n : module_sites(*mm, key, [&] { return compute(*mm); }))
        if (model.runs_in_program(p, *mm, n)) {
          v = true;
          break;
        }
      if (v) break;
    }
    std::lock_guard<std::mutex> lock(mu_);
    map_.emplace(k, v);
    return v;
  }
  bool any_in_program(const py::Program& p, const char* key, const std::function<bool(const py::Module&)>& compute) {
    Key k{(1ull << 32) | p.id, key};
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = map_.find(k);
      if (it != map_.end()) return it->second;
    }
    bool v = false;
    for (const py::Module* mm : p.members)
      if (module_fact(*mm, key, [&] { return compute(*mm); })) {
        v = true;
        break;
      }
    std::lock_guard<std::mutex> lock(mu_);
    map_.emplace(k, v);
    return v;
  }

 private:
  // (module index, or 2^32 | program id) and the fact's name (a string literal)
  struct Key {
    uint64_t id;
    std::string_view name;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const { return std::hash<uint64_t>{}(k.id) * 31 + std::hash<std::string_view>{}(k.name); }
  };
  std::mutex mu_;
  std::unordered_map<Key, bool, KeyHash> map_;
  std::unordered_map<Key, std::vector<py::NodeId>, KeyHash> sites_;
};

// What a rule sees: the model, the module being checked, and a way to report.
class RuleContext {
 public:
  RuleContext(const py::ProgramModel& model, const py::Module& mod, const RuleInfo& rule, std::vector<Finding>& out,
              FactCache& facts)
      : model(model), mod(mod), tree(mod.tree), rule(rule), facts(facts), out_(out) {}

  const py::ProgramModel& model;
  const py::Module& mod;
  const py::Tree& tree;
  const RuleInfo& rule;
  FactCache& facts;

  // Each report returns the finding it added, for the rule to attach a fix (valid until the
  // next report).
  Finding& report(py::NodeId node, std::string message, std::vector<Note> notes = {});
  // Program-level rules report at an anchor that may lie in another module of the program.
  Finding& report_at(const py::Module& m, py::NodeId node, std::string message, std::vector<Note> notes = {});
  // Reports a per-step finding with notes pointing at the step loop and the call chain.
  Finding& report_per_step(py::NodeId node, std::string message, const py::StepContext& sc);
  static Note note_at(const py::Module& m, py::NodeId n, std::string message);
  static Range range_of(const py::Module& m, py::NodeId n);
  // Bytes [begin, end) of `m`'s text, with their line/column positions.
  static Range range_of(const py::Module& m, uint32_t begin, uint32_t end);

 private:
  std::vector<Finding>& out_;
};

}  // namespace tl
