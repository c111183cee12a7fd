// Node-by-node comparison of two trees (Python or C++), for the tests that check that a parse or a
// copy done another way (incremental, in pieces, through the cursor) gives exactly the tree of a
// plain whole-file parse.
#pragma once
#include <algorithm>
#include <string>

#include "analyzer/python/ast.h"

namespace tl::test {

// The first difference between `a` and `b`, empty when they are equal.
template <class TreeT>
std::string tree_difference(const TreeT& a, const TreeT& b) {
  if (a.size() != b.size()) return "node counts " + std::to_string(a.size()) + " vs " + std::to_string(b.size());
  for (flat::NodeId n = 0; n < a.size(); ++n) {
    const auto &x = a[n], &y = b[n];
    if (x.start != y.start || x.end != y.end || x.parent != y.parent || x.subtree_end != y.subtree_end ||
        x.kind != y.kind || x.field != y.field ||
        x.named != y.named || x.symbol != y.symbol)
      return "node " + std::to_string(n) + " (" + std::string(a.type_name(n)) + " at byte " + std::to_string(x.start) +
             " vs " + std::string(b.type_name(n)) + " at byte " + std::to_string(y.start) + ")";
  }
  if (a.errors() != b.errors()) {
    for (size_t i = 0; i < std::min(a.errors().size(), b.errors().size()); ++i)
      if (a.errors()[i] != b.errors()[i])
        return "syntax error " + std::to_string(i) + ": '" + a.errors()[i].second + "' at byte " +
               std::to_string(a.errors()[i].first) + " vs '" + b.errors()[i].second + "' at byte " +
               std::to_string(b.errors()[i].first);
    return "syntax error counts " + std::to_string(a.errors().size()) + " vs " + std::to_string(b.errors().size());
  }
  return "";
}

}  // namespace tl::test
