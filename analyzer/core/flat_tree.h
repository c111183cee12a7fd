// A compact, immutable copy of a tree-sitter tree, shared by the front ends (Python:
// analyzer/python/ast.h, C++: analyzer/cpp/syntax.h), each with its own node kinds `K` and field
// names `F`. One cursor walk (analyzer/core/flat_tree_build.h) converts the tree into flat arrays
// with O(1) parent / first-child / next-sibling links, so that analysis never pays tree-sitter's
// O(n) sibling lookups and never holds a tree-sitter handle: this header names no tree-sitter type.
// `K` has `Other`, `Error` and `Comment`; `F` has `None` and `Operator`.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyzer/core/source_file.h"

namespace tl::flat {

using NodeId = uint32_t;
inline constexpr NodeId kNone = 0xFFFFFFFFu;

template <class K, class F>
struct Node {
  uint32_t start = 0, end = 0;  // byte offsets
  NodeId parent = kNone, first_child = kNone, next_sibling = kNone;
  NodeId subtree_end = 0;  // ids are pre-order: the subtree of n is [n, subtree_end)
  K kind = K::Other;
  F field = F::None;  // the field this node fills in its parent
  uint8_t named = 0;
  uint16_t symbol = 0;  // the grammar's symbol, for anonymous tokens such as '%' or 'and'
};

template <class K, class F>
struct TreeAccess;  // the builder (flat_tree_build.h)

template <class K, class F>
class Tree {
 public:
  using NodeT = Node<K, F>;

  const SourceFile& source() const { return *src_; }
  NodeId root() const { return nodes_.empty() ? kNone : 0; }
  size_t size() const { return nodes_.size(); }
  const NodeT& operator[](NodeId n) const { return nodes_[n]; }

  K kind(NodeId n) const { return nodes_[n].kind; }
  bool is(NodeId n, K k) const { return n != kNone && nodes_[n].kind == k; }
  NodeId parent(NodeId n) const { return nodes_[n].parent; }
  std::string_view text(NodeId n) const { return src_->slice(nodes_[n].start, nodes_[n].end); }

  // First child filling `f`, or kNone.
  NodeId field(NodeId n, F f) const {
    for (NodeId c = nodes_[n].first_child; c != kNone; c = nodes_[c].next_sibling)
      if (nodes_[c].field == f) return c;
    return kNone;
  }
  // All children filling `f`.
  std::vector<NodeId> fields(NodeId n, F f) const {
    std::vector<NodeId> out;
    for (NodeId c = nodes_[n].first_child; c != kNone; c = nodes_[c].next_sibling)
      if (nodes_[c].field == f) out.push_back(c);
    return out;
  }
  // Named children (comments left out), in order.
  std::vector<NodeId> named_children(NodeId n) const {
    std::vector<NodeId> out;
    for (NodeId c = nodes_[n].first_child; c != kNone; c = nodes_[c].next_sibling)
      if (nodes_[c].named && nodes_[c].kind != K::Comment) out.push_back(c);
    return out;
  }
  NodeId first_named_child(NodeId n) const {
    for (NodeId c = nodes_[n].first_child; c != kNone; c = nodes_[c].next_sibling)
      if (nodes_[c].named && nodes_[c].kind != K::Comment) return c;
    return kNone;
  }
  template <class Fn>
  void for_each_child(NodeId n, Fn&& fn) const {
    for (NodeId c = nodes_[n].first_child; c != kNone; c = nodes_[c].next_sibling) fn(c);
  }

  // The operator token of a binary / unary / comparison / assignment node ("%", "and", "<<").
  std::string_view operator_text(NodeId n) const {
    NodeId op = field(n, F::Operator);
    if (op != kNone) return text(op);
    for (NodeId c = nodes_[n].first_child; c != kNone; c = nodes_[c].next_sibling)
      if (!nodes_[c].named) return text(c);
    return {};
  }

  // Syntax errors: positions of ERROR and MISSING nodes, in source order.
  const std::vector<std::pair<uint32_t, std::string>>& errors() const { return errors_; }

  LineCol pos(NodeId n) const { return src_->line_col(nodes_[n].start); }
  // True when `inner` is `outer` or lies inside it.
  bool contains(NodeId outer, NodeId inner) const {
    return outer != kNone && inner != kNone && outer <= inner && inner < nodes_[outer].subtree_end;
  }

 protected:
  const SourceFile* src_ = nullptr;
  std::vector<NodeT> nodes_;
  std::vector<std::pair<uint32_t, std::string>> errors_;
  friend struct TreeAccess<K, F>;
};

}  // namespace tl::flat
