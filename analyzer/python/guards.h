// Varying vs non-varying guards (docs/concepts.md "Runs every step").
#pragma once
#include <string>
#include <unordered_set>

#include "analyzer/python/model.h"

namespace tl::py {

struct GuardContext {
  const ProgramModel* model = nullptr;
  const Module* mod = nullptr;
  NodeId boundary = kNone;  // the step loop node, or the function body for callees and hooks
  const std::unordered_set<std::string>* varying = nullptr;  // names that change per iteration
  bool function_body = false;  // boundary is a function body: an early `return` skips the rest
};

// Names assigned inside `n` (identifiers and dotted attribute paths), not descending into
// nested function or class definitions.
void collect_assigned_names(const Tree& t, NodeId n, std::unordered_set<std::string>& out);

// True when `cond` varies across iterations: contains `%`, reads a varying name, or reads the
// clock / a random source.
bool is_varying_expr(const GuardContext& g, NodeId cond);

// True when a return statement of `f` returns a `%` test (`return step % freq == 0`).
bool returns_periodic(const Function& f);

// True when `node` sits under a varying guard between itself and g.boundary (an if/elif/else,
// ternary, and/or, except handler, match case, or an earlier `if <varying>: continue`).
bool is_guarded(const GuardContext& g, NodeId node);

}  // namespace tl::py
