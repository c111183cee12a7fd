// Node-by-node comparison of two Python trees, for the tests that check that a parse done another
// way (incremental, in pieces) gives exactly the tree of a plain whole-file parse.
#pragma once
#include <string>

#include "analyzer/python/ast.h"

namespace tl::test {

// The first difference between `a` and `b`, empty when they are equal.
inline std::string tree_difference(const py::Tree& a, const py::Tree& b) {
  if (a.size() != b.size()) return "node counts " + std::to_string(a.size()) + " vs " + std::to_string(b.size());
  for (py::NodeId n = 0; n < a.size(); ++n) {
    const py::Node &x = a[n], &y = b[n];
    if (x.start != y.start || x.end != y.end || x.parent != y.parent || x.subtree_end != y.subtree_end ||
        x.kind != y.kind || x.field != y.field ||
        x.named != y.named || x.symbol != y.symbol)
      return "node " + std::to_string(n) + " (" + std::string(a.type_name(n)) + " at byte " + std::to_string(x.start) +
             " vs " + std::string(b.type_name(n)) + " at byte " + std::to_string(y.start) + ")";
  }
  if (a.errors() != b.errors()) return "syntax errors differ";
  return "";
}

}  // namespace tl::test
