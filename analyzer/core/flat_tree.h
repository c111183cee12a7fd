// A compact, immutable copy of a tree-sitter tree, shared by the front ends (Python:
// analyzer/python/ast.h, C++: analyzer/cpp/syntax.h), each with its own node kinds `K` and field
// names `F`. One walk (analyzer/core/flat_tree_build.h) converts the tree into flat arrays
// with O(1) parent / first-child / next-sibling links, so that analysis never pays tree-sitter's
// O(n) sibling lookups and never holds a tree-sitter handle: this header names no tree-sitter type.
// `K` has `Other`, `Error` and `Comment`; `F` has `None` and `Operator`. A front end may leave
// punctuation tokens out (flat::Grammar's `drop`: the Python tree has no `(`, `,`, `.`, `:`...
// nodes); their bytes stay in the source text.
#pragma once
#include <bit>
#include <cstdint>
#include <cstring>
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
  NodeId parent = kNone;
  // ids are pre-order: the subtree of n is [n, subtree_end), so its first child is n + 1 (when
  // the subtree holds more than n) and its next sibling is subtree_end (when the parent's subtree
  // goes on): Tree::first_child() / next_sibling() derive both
  NodeId subtree_end = 0;
  uint16_t symbol = 0;  // the grammar's symbol, for anonymous tokens such as '%' or 'and'
  K kind = K::Other;    // one byte (both front ends' kinds fit)
  F field : 7 = F::None;  // the field this node fills in its parent
  uint8_t named : 1 = 0;
  // 20 bytes (static_assert in each front end's header): the trees are most of a run's memory
};

template <class K, class F>
struct TreeAccess;  // the builder (flat_tree_build.h)
template <class K, class F>
struct TreeCodec;   // bytes <-> tree, for the on-disk cache (below)

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
  NodeId first_child(NodeId n) const { return n + 1 < nodes_[n].subtree_end ? n + 1 : kNone; }
  NodeId next_sibling(NodeId n) const {
    NodeId p = nodes_[n].parent, s = nodes_[n].subtree_end;
    return p != kNone && s < nodes_[p].subtree_end ? s : kNone;
  }
  std::string_view text(NodeId n) const { return src_->slice(nodes_[n].start, nodes_[n].end); }

  // First child filling `f`, or kNone.
  NodeId field(NodeId n, F f) const {
    for (NodeId c = first_child(n); c != kNone; c = next_sibling(c))
      if (nodes_[c].field == f) return c;
    return kNone;
  }
  // All children filling `f`.
  std::vector<NodeId> fields(NodeId n, F f) const {
    std::vector<NodeId> out;
    for (NodeId c = first_child(n); c != kNone; c = next_sibling(c))
      if (nodes_[c].field == f) out.push_back(c);
    return out;
  }
  // A named child (comments left out): what named_children(), named_child_range() and
  // first_named_child() give.
  bool is_named_child(NodeId c) const { return nodes_[c].named && nodes_[c].kind != K::Comment; }
  // Named children, in order.
  std::vector<NodeId> named_children(NodeId n) const {
    std::vector<NodeId> out;
    for (NodeId c = first_child(n); c != kNone; c = next_sibling(c))
      if (is_named_child(c)) out.push_back(c);
    return out;
  }
  // The same children as named_children(), for a range-for, without building a vector (the
  // argument lists of every call are walked this way, many times each).
  class NamedChildRange {
   public:
    class iterator {
     public:
      iterator(const Tree* t, NodeId c) : t_(t), c_(c) { skip(); }
      NodeId operator*() const { return c_; }
      iterator& operator++() {
        c_ = t_->next_sibling(c_);
        skip();
        return *this;
      }
      bool operator!=(const iterator& o) const { return c_ != o.c_; }

     private:
      void skip() {
        while (c_ != kNone && !t_->is_named_child(c_)) c_ = t_->next_sibling(c_);
      }
      const Tree* t_;
      NodeId c_;
    };
    iterator begin() const { return {t_, t_->first_child(n_)}; }
    iterator end() const { return {t_, kNone}; }

   private:
    friend class Tree;
    NamedChildRange(const Tree* t, NodeId n) : t_(t), n_(n) {}
    const Tree* t_;
    NodeId n_;
  };
  NamedChildRange named_child_range(NodeId n) const { return {this, n}; }
  NodeId first_named_child(NodeId n) const {
    for (NodeId c = first_child(n); c != kNone; c = next_sibling(c))
      if (is_named_child(c)) return c;
    return kNone;
  }
  template <class Fn>
  void for_each_child(NodeId n, Fn&& fn) const {
    for (NodeId c = first_child(n); c != kNone; c = next_sibling(c)) fn(c);
  }

  // The operator token of a binary / unary / comparison / assignment node ("%", "and", "<<").
  std::string_view operator_text(NodeId n) const {
    NodeId op = field(n, F::Operator);
    if (op != kNone) return text(op);
    for (NodeId c = first_child(n); c != kNone; c = next_sibling(c))
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
  friend struct TreeCodec<K, F>;
};

// A tree as bytes and back, for the on-disk cache: the nodes as they lie in memory (pre-order:
// byte range, parent, subtree end, symbol, kind, field, named flag; 20 bytes each), then the syntax
// errors. The bytes are read back only by the build that wrote them (the cache's keys hold the
// build's identity), so the layout is this build's. decode() checks every value against the source
// and the tree's shape (each parent is the nearest node before it whose subtree holds it) and
// returns false on anything a tree never holds, so that a damaged cache file is re-parsed rather
// than trusted. (The nodes were written field by field at first, 18 bytes each, and rebuilt one
// by one: 170 M instructions of a cached run after a one-file edit on Debian's torch package,
// 7% of it; a copy and a check of the same nodes cost about a third of that.)
template <class K, class F>
struct TreeCodec {
  static constexpr uint32_t kMagic = 0x544c5432;  // "TLT2"
  static constexpr size_t kNodeBytes = sizeof(Node<K, F>);
  static_assert(kNodeBytes == 20, "a node is 20 bytes, none of them padding");

  static std::string encode(const Tree<K, F>& t) {
    std::string out;
    out.reserve(16 + t.nodes_.size() * kNodeBytes);
    put32(out, kMagic);
    put32(out, static_cast<uint32_t>(t.nodes_.size()));
    put32(out, static_cast<uint32_t>(t.errors_.size()));
    out.append(reinterpret_cast<const char*>(t.nodes_.data()), t.nodes_.size() * kNodeBytes);
    for (auto& [at, what] : t.errors_) {
      put32(out, at);
      put32(out, static_cast<uint32_t>(what.size()));
      out += what;
    }
    return out;
  }

  static bool decode(Tree<K, F>& t, const SourceFile& src, std::string_view in) {
    size_t pos = 0;
    uint32_t magic, count, nerr;
    if (!get32(in, pos, magic) || magic != kMagic || !get32(in, pos, count) || !get32(in, pos, nerr)) return false;
    if (count > (in.size() - pos) / kNodeBytes) return false;
    const uint32_t size = static_cast<uint32_t>(src.text().size());
    std::vector<Node<K, F>> nodes(count);
    std::memcpy(static_cast<void*>(nodes.data()), in.data() + pos, size_t{count} * kNodeBytes);
    const Node<K, F>* nd = nodes.data();
    for (uint32_t i = 0; i < count; ++i) {
      const Node<K, F>& n = nd[i];
      if ((static_cast<uint32_t>(n.kind) >= static_cast<uint32_t>(K::kCount)) |
          (static_cast<uint32_t>(n.field) >= static_cast<uint32_t>(F::kCount)) | (n.start > n.end) | (n.end > size) |
          (n.subtree_end <= i) | (n.subtree_end > count))
        return false;
      if (i == 0) {
        if (n.parent != kNone) return false;
        continue;
      }
      // the parent: climbing from the node before, the first whose subtree holds this one (the
      // nodes before are checked, so each climb ends, and in all they climb fewer than `count`)
      NodeId p = i - 1;
      while (nd[p].subtree_end <= i) {
        p = nd[p].parent;
        if (p == kNone) return false;  // outside the root's subtree: a second root
      }
      if ((p != n.parent) | (n.subtree_end > nd[p].subtree_end)) return false;
    }
    pos += size_t{count} * kNodeBytes;
    std::vector<std::pair<uint32_t, std::string>> errors;
    for (uint32_t e = 0; e < nerr; ++e) {
      uint32_t at, len;
      if (!get32(in, pos, at) || !get32(in, pos, len) || at > size || len > in.size() - pos) return false;
      errors.emplace_back(at, std::string(in.substr(pos, len)));
      pos += len;
    }
    if (pos != in.size()) return false;
    t.src_ = &src;
    t.nodes_ = std::move(nodes);
    t.errors_ = std::move(errors);
    return true;
  }

 private:
  static void put32(std::string& o, uint32_t v) {
    for (int b = 0; b < 4; ++b) o.push_back(static_cast<char>((v >> (8 * b)) & 0xFF));
  }
  // Little-endian on disk; the machines trainlint runs on are little-endian, so a copy is a load.
  static bool get32(std::string_view in, size_t& pos, uint32_t& v) {
    if (in.size() - pos < 4) return false;
    std::memcpy(&v, in.data() + pos, 4);
    if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap32(v);
    pos += 4;
    return true;
  }
};

}  // namespace tl::flat
