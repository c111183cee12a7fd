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

// A tree as bytes and back, for the on-disk cache: per node, in pre-order, its byte range, the end
// of its subtree, its kind, field, named flag and grammar symbol (18 bytes); parent links are
// rebuilt from the subtree ends on decoding (children and siblings follow from them). decode() checks every value
// against the source and the tree's shape and returns false on anything a tree never holds, so
// that a damaged cache file is re-parsed rather than trusted.
template <class K, class F>
struct TreeCodec {
  static constexpr uint32_t kMagic = 0x544c5431;  // "TLT1"
  static constexpr size_t kNodeBytes = 18;

  static std::string encode(const Tree<K, F>& t) {
    std::string out;
    out.reserve(16 + t.nodes_.size() * kNodeBytes);
    put32(out, kMagic);
    put32(out, static_cast<uint32_t>(t.nodes_.size()));
    put32(out, static_cast<uint32_t>(t.errors_.size()));
    for (auto& n : t.nodes_) {
      put32(out, n.start);
      put32(out, n.end);
      put32(out, n.subtree_end);
      put16(out, static_cast<uint16_t>(n.kind));
      out.push_back(static_cast<char>(n.field));
      out.push_back(static_cast<char>(n.named));
      put16(out, n.symbol);
    }
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
    std::vector<Node<K, F>> nodes;
    nodes.reserve(count);
    // ancestors of the node being read, with their subtree ends (not read back from `nodes`)
    struct Open {
      NodeId id, subtree_end;
    };
    std::vector<Open> open;
    const char* p = in.data() + pos;  // the count check above guarantees count * kNodeBytes bytes
    for (uint32_t i = 0; i < count; ++i, p += kNodeBytes) {
      uint32_t start, end, subtree_end;
      uint16_t kind, symbol;
      std::memcpy(&start, p, 4);
      std::memcpy(&end, p + 4, 4);
      std::memcpy(&subtree_end, p + 8, 4);
      std::memcpy(&kind, p + 12, 2);
      const auto field = static_cast<uint8_t>(p[14]), named = static_cast<uint8_t>(p[15]);
      std::memcpy(&symbol, p + 16, 2);
      if constexpr (std::endian::native == std::endian::big) {
        start = __builtin_bswap32(start);
        end = __builtin_bswap32(end);
        subtree_end = __builtin_bswap32(subtree_end);
        kind = __builtin_bswap16(kind);
        symbol = __builtin_bswap16(symbol);
      }
      if ((kind >= static_cast<uint16_t>(K::kCount)) | (field >= static_cast<uint8_t>(F::kCount)) | (named > 1) |
          (start > end) | (end > size) | (subtree_end <= i) | (subtree_end > count))
        return false;
      while (!open.empty() && open.back().subtree_end <= i) open.pop_back();
      if (open.empty() ? i != 0 : subtree_end > open.back().subtree_end) return false;  // one root, nested
      Node<K, F> n;
      n.start = start;
      n.end = end;
      n.parent = open.empty() ? kNone : open.back().id;
      n.subtree_end = subtree_end;
      n.symbol = symbol;
      n.kind = static_cast<K>(kind);
      n.field = static_cast<F>(field);
      n.named = named;
      nodes.push_back(n);
      open.push_back({i, subtree_end});
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
  static void put16(std::string& o, uint16_t v) {
    o.push_back(static_cast<char>(v & 0xFF));
    o.push_back(static_cast<char>(v >> 8));
  }
  // Little-endian on disk; the machines trainlint runs on are little-endian, so a copy is a load.
  static bool get32(std::string_view in, size_t& pos, uint32_t& v) {
    if (in.size() - pos < 4) return false;
    std::memcpy(&v, in.data() + pos, 4);
    if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap32(v);
    pos += 4;
    return true;
  }
  static bool get16(std::string_view in, size_t& pos, uint16_t& v) {
    if (in.size() - pos < 2) return false;
    std::memcpy(&v, in.data() + pos, 2);
    if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap16(v);
    pos += 2;
    return true;
  }
};

}  // namespace tl::flat
