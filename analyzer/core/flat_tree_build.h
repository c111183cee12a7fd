// Building a flat::Tree (analyzer/core/flat_tree.h) from tree-sitter: the grammar's name tables,
// one parser per thread and language, and the cursor walk. Included by the front ends' sources
// only (analyzer/python/ast.cpp, analyzer/cpp/syntax.cpp), so that no header names tree-sitter.
#pragma once
#include <tree_sitter/api.h>

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyzer/core/flat_tree.h"
#include "analyzer/core/huge_pages.h"

namespace tl::flat {

struct ParserDeleter {
  void operator()(TSParser* p) const { ts_parser_delete(p); }
};
struct TreeDeleter {
  void operator()(TSTree* t) const { ts_tree_delete(t); }
};
using TreeHandle = std::unique_ptr<TSTree, TreeDeleter>;

// A kind or field of the front end and the grammar's name for it.
template <class E>
struct Named {
  E value;
  const char* name;
};

// The grammar's symbols and field ids mapped to the front end's kinds and fields.
template <class K, class F>
struct Grammar {
  const TSLanguage* lang = nullptr;
  std::vector<K> kind_by_symbol;
  std::vector<F> field_by_id;
  std::vector<char> dropped;  // by symbol: anonymous tokens left out of the tree

  // `drop`: anonymous tokens (punctuation) the front end never reads as nodes; a leaf of such a
  // symbol is not copied into the tree (its bytes stay in the source text).
  Grammar(const TSLanguage* language, std::span<const Named<K>> kinds, std::span<const Named<F>> fields,
          std::span<const char* const> drop = {})
      : lang(language) {
    uint32_t n = ts_language_symbol_count(lang);
    kind_by_symbol.assign(n + 1, K::Other);
    dropped.assign(n + 1, 0);
    std::unordered_map<std::string, K> by_name;
    for (auto& kn : kinds) by_name[kn.name] = kn.value;
    for (uint32_t s = 0; s < n; ++s) {
      const char* name = ts_language_symbol_name(lang, static_cast<TSSymbol>(s));
      TSSymbolType t = ts_language_symbol_type(lang, static_cast<TSSymbol>(s));
      if (name && t == TSSymbolTypeAnonymous)
        for (const char* d : drop)
          if (std::string_view(name) == d) dropped[s] = 1;
      if (!name || t != TSSymbolTypeRegular) continue;
      if (auto it = by_name.find(name); it != by_name.end()) kind_by_symbol[s] = it->second;
    }
    uint32_t nf = ts_language_field_count(lang);
    field_by_id.assign(nf + 1, F::None);
    for (uint32_t f = 1; f <= nf; ++f) {
      const char* name = ts_language_field_name_for_id(lang, static_cast<TSFieldId>(f));
      if (!name) continue;
      for (auto& fn : fields)
        if (std::string_view(name) == fn.name) field_by_id[f] = fn.value;
    }
  }

  // The grammar's name of a node's symbol ("call", "binary_expression", "%").
  std::string_view symbol_name(uint16_t symbol) const {
    const char* s = ts_language_symbol_name(lang, symbol);
    return s ? s : "";
  }
};

// This thread's parser for `lang` (created on first use, reset before each parse by the caller).
inline TSParser* thread_parser(const TSLanguage* lang) {
  thread_local std::vector<std::pair<const TSLanguage*, std::unique_ptr<TSParser, ParserDeleter>>> parsers;
  for (auto& [l, p] : parsers)
    if (l == lang) return p.get();
  std::unique_ptr<TSParser, ParserDeleter> p(ts_parser_new());
  ts_parser_set_language(p.get(), lang);
  parsers.emplace_back(lang, std::move(p));
  return parsers.back().second.get();
}

template <class K, class F>
struct TreeAccess {
  // Fills `t` (empty) from a tree-sitter tree of `src`; a null tree (the parser gave up) becomes
  // one error. The nodes are gathered in this thread's scratch array and copied into one of
  // exactly their size: a tree's array is never over-allocated
  // (estimating the count from the text's length over- or under-shot by half, and growing by
  // doubling held both the old and the new array at once), and the scratch's pages, touched once,
  // serve every file the thread converts.
  static void build(Tree<K, F>& t, const SourceFile& src, const TSTree* tree, const Grammar<K, F>& g) {
    t.src_ = &src;
    if (!tree) {
      t.errors_.emplace_back(0, "the parser gave up on this file");
      return;
    }
    thread_local std::vector<Node<K, F>> scratch;
    scratch.clear();
    std::swap(t.nodes_, scratch);  // t.nodes_: the scratch's capacity; scratch: t's empty array
    walk(t, ts_tree_root_node(tree), g, 0);
    reserve_with_huge_pages(scratch, t.nodes_.size());  // scratch: t's empty array, now of exactly the size needed
    scratch.assign(t.nodes_.begin(), t.nodes_.end());
    std::swap(t.nodes_, scratch);
    // a large file's scratch is not kept for the rest of the run (64K nodes: 1.5 MB; most files
    // have fewer, so the pages are reused)
    constexpr size_t kKeep = size_t{1} << 16;
    if (scratch.capacity() > kKeep) std::vector<Node<K, F>>().swap(scratch);
  }
  // For a file parsed in pieces cut at top-level statements, whose trees together are the whole
  // file's: `piece` (empty) becomes the tree of the piece of `src` that starts at byte `offset`
  // (its positions are the file's), on whichever thread parsed it; append() then joins the pieces
  // in order.
  static void build_piece(Tree<K, F>& piece, const SourceFile& src, const TSTree* tree, const Grammar<K, F>& g,
                          uint32_t offset) {
    piece.src_ = &src;
    TSNode root = ts_tree_root_node(tree);
    reserve_with_huge_pages(piece.nodes_, ts_node_end_byte(root) / 4 + 64);  // about the nodes of Python text
    walk(piece, root, g, offset);
  }
  // Appends `piece` (build_piece) to `t`: the first piece is copied whole (with room reserved for
  // the whole file's nodes, `nodes_hint`), a later one's root is left out and the children of its
  // root go after the children of `t`'s root, which then ends where the piece ends.
  static void append(Tree<K, F>& t, const Tree<K, F>& piece, size_t nodes_hint) {
    if (t.nodes_.empty()) {
      t.src_ = piece.src_;
      reserve_with_huge_pages(t.nodes_, std::max(nodes_hint, piece.nodes_.size()));
      t.nodes_.assign(piece.nodes_.begin(), piece.nodes_.end());
      t.errors_ = piece.errors_;
      return;
    }
    const NodeId base = static_cast<NodeId>(t.nodes_.size()) - 1;  // the piece's node j becomes base + j
    for (size_t j = 1; j < piece.nodes_.size(); ++j) {
      Node<K, F> nd = piece.nodes_[j];
      nd.parent = nd.parent == 0 ? 0 : base + nd.parent;
      nd.subtree_end += base;
      t.nodes_.push_back(nd);
    }
    t.nodes_[0].end = piece.nodes_[0].end;
    t.nodes_[0].subtree_end = static_cast<NodeId>(t.nodes_.size());
    // the piece's root is not copied, nor is a syntax error reported at it
    const bool root_error = piece.nodes_[0].kind == K::Error;
    t.errors_.insert(t.errors_.end(), piece.errors_.begin() + (root_error ? 1 : 0), piece.errors_.end());
  }
  static void set_source(Tree<K, F>& t, const SourceFile* src) { t.src_ = src; }

 private:
  struct CursorGuard {
    TSTreeCursor c;
    explicit CursorGuard(TSNode n) : c(ts_tree_cursor_new(n)) {}
    ~CursorGuard() { ts_tree_cursor_delete(&c); }
  };

  // Pre-order copy of the tree under `root` into `t` (empty), positions moved by `offset`.
  static void walk(Tree<K, F>& t, TSNode root, const Grammar<K, F>& g, uint32_t offset) {
    CursorGuard cur(root);
    std::vector<NodeId> stack;  // ancestors of the current node
    // a MISSING token (error recovery inserted it) is a syntax error, whether copied or dropped
    auto note_missing = [&](TSNode n) {
      if (ts_node_is_missing(n))
        t.errors_.emplace_back(offset + ts_node_start_byte(n), std::string("missing '") + ts_node_type(n) + "'");
    };
    auto add = [&](TSNode n, TSFieldId fid) {
      Node<K, F> nd;
      nd.start = offset + ts_node_start_byte(n);
      nd.end = offset + ts_node_end_byte(n);
      TSSymbol sym = ts_node_symbol(n);
      nd.symbol = sym;
      bool is_error = ts_node_is_null(n) ? false : (sym == static_cast<TSSymbol>(-1));
      nd.kind = is_error ? K::Error : (sym < g.kind_by_symbol.size() ? g.kind_by_symbol[sym] : K::Other);
      nd.named = ts_node_is_named(n);
      nd.field = fid < g.field_by_id.size() ? g.field_by_id[fid] : F::None;
      NodeId id = static_cast<NodeId>(t.nodes_.size());
      if (!stack.empty()) nd.parent = stack.back();
      t.nodes_.push_back(nd);
      if (is_error) t.errors_.emplace_back(nd.start, "syntax error");
      else note_missing(n);
      return id;
    };
    NodeId id = add(ts_tree_cursor_current_node(&cur.c), 0);
    stack.push_back(id);
    if (!ts_tree_cursor_goto_first_child(&cur.c)) {
      t.nodes_[id].subtree_end = static_cast<NodeId>(t.nodes_.size());
      return;
    }
    for (;;) {
      TSNode n = ts_tree_cursor_current_node(&cur.c);
      TSSymbol sym = ts_node_symbol(n);
      if (sym < g.dropped.size() && g.dropped[sym] && ts_node_child_count(n) == 0) {
        note_missing(n);  // a dropped token: no node, but a missing one is still a syntax error
      } else {
        NodeId nid = add(n, ts_tree_cursor_current_field_id(&cur.c));
        if (ts_tree_cursor_goto_first_child(&cur.c)) {
          stack.push_back(nid);
          continue;
        }
        t.nodes_[nid].subtree_end = nid + 1;
      }
      while (!ts_tree_cursor_goto_next_sibling(&cur.c)) {
        if (!ts_tree_cursor_goto_parent(&cur.c)) {
          // Back at the root.
          while (!stack.empty()) {
            t.nodes_[stack.back()].subtree_end = static_cast<NodeId>(t.nodes_.size());
            stack.pop_back();
          }
          return;
        }
        t.nodes_[stack.back()].subtree_end = static_cast<NodeId>(t.nodes_.size());
        stack.pop_back();
      }
    }
  }
};

}  // namespace tl::flat
