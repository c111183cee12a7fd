// What a Python rule's check sees (RuleContext) and the module facts rules share (FactCache).
// The checks in rules/python/ take a RuleContext; rules/registry.cpp lists them per code.
#pragma once
#include <array>
#include <atomic>
#include <functional>
#include <memory>
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
// one pass per module instead of one per (module x program member). Each fact is computed once:
// a thread that asks for one another thread is computing waits for its answer (computing it
// twice cost more than the wait: a program fact looks at every member). The table is split in
// shards, each with its own lock, so that threads asking for different facts rarely meet.
// A program fact may ask module facts while it is computed, never the other way round, so the
// waits cannot form a cycle.
class FactCache {
 public:
  // `modules`: the model's module count, to size the table (a few facts per module)
  explicit FactCache(size_t modules) : modules_(modules) {
    for (auto& s : shards_) s.entries.reserve(modules * 4 / kShards + 8);
  }
  bool module_fact(const py::Module& m, const char* key, const std::function<bool()>& compute) {
    return once(entry({m.index, key}), [&](Entry& e) { e.value = compute(); }).value;
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
    return once(entry({m.index, key, true}), [&](Entry& e) { e.sites = compute(); }).sites;
  }
  // True when a site of the fact lies in code that program `p` runs (docs/concepts.md "Program": its
  // members' top level and the functions reachable from its entry script).
  bool any_site_in_program(const py::ProgramModel& model, const py::Program& p, const char* key,
                           const std::function<std::vector<py::NodeId>(const py::Module&)>& compute) {
    return once(entry({(1ull << 32) | p.id, key}), [&](Entry& e) {
             e.value = false;
             // Most members hold no site: a flag per module says so without the table's lookup
             // (the torch package's 270 programs ask about a thousand members each).
             std::vector<std::atomic<int8_t>>& has = has_sites(key);
             for (const py::Module* mm : p.members) {
               int8_t known = mm->index < has.size() ? has[mm->index].load(std::memory_order_acquire) : -1;
               if (known == 0) continue;
               const auto& sites = module_sites(*mm, key, [&] { return compute(*mm); });
               if (known < 0 && mm->index < has.size())
                 has[mm->index].store(sites.empty() ? 0 : 1, std::memory_order_release);
               for (py::NodeId n : sites)
                 if (model.runs_in_program(p, *mm, n)) {
                   e.value = true;
                   return;
                 }
             }
           }).value;
  }
  bool any_in_program(const py::Program& p, const char* key, const std::function<bool(const py::Module&)>& compute) {
    return once(entry({(1ull << 32) | p.id, key}), [&](Entry& e) {
             e.value = false;
             for (const py::Module* mm : p.members)
               if (module_fact(*mm, key, [&] { return compute(*mm); })) {
                 e.value = true;
                 return;
               }
           }).value;
  }

 private:
  // (module index, or 2^32 | program id), the fact's name (a string literal), and whether the
  // entry holds the fact's sites (module_sites) or its truth
  struct Key {
    uint64_t id;
    std::string_view name;
    bool sites = false;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const { return (k.id * 0x9E3779B97F4A7C15ull + name_hash(k.name)) * 2 + k.sites; }
  };
  struct Entry {
    std::mutex mu;                  // held while the fact is computed
    std::atomic<bool> done{false};  // set (release) once `value` / `sites` hold the answer
    bool value = false;
    std::vector<py::NodeId> sites;
  };
  static constexpr size_t kShards = 16;
  struct Shard {
    std::mutex mu;
    std::unordered_map<Key, Entry, KeyHash> entries;  // nodes: an Entry never moves
  };
  Entry& entry(const Key& k) {
    Shard& s = shards_[KeyHash{}(k) % kShards];
    std::lock_guard<std::mutex> lock(s.mu);
    return s.entries.try_emplace(k).first->second;
  }
  // Runs fill(e) unless the answer is there; a thread arriving while another fills waits for it.
  // An exception from fill leaves the entry unanswered (the next asker computes it).
  template <class Fill>
  static Entry& once(Entry& e, Fill&& fill) {
    if (e.done.load(std::memory_order_acquire)) return e;
    std::lock_guard<std::mutex> lock(e.mu);
    if (!e.done.load(std::memory_order_relaxed)) {
      fill(e);
      e.done.store(true, std::memory_order_release);
    }
    return e;
  }
  std::array<Shard, kShards> shards_;

  // Per module, for one fact's sites: -1 not known yet, 0 none, 1 some (module_sites holds them).
  std::vector<std::atomic<int8_t>>& has_sites(std::string_view key) {
    std::lock_guard<std::mutex> lock(has_sites_mu_);
    auto it = has_sites_.find(key);
    if (it == has_sites_.end()) {
      auto v = std::make_unique<std::vector<std::atomic<int8_t>>>(modules_);
      for (auto& x : *v) x.store(-1, std::memory_order_relaxed);
      it = has_sites_.emplace(key, std::move(v)).first;
    }
    return *it->second;
  }
  size_t modules_ = 0;
  std::mutex has_sites_mu_;
  std::unordered_map<std::string_view, std::unique_ptr<std::vector<std::atomic<int8_t>>>> has_sites_;
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
