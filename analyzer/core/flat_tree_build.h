// Building a flat::Tree (analyzer/core/flat_tree.h) from tree-sitter: the grammar's name tables,
// one parser per thread and language, and the copy of a tree. Included by the front ends' sources
// only (analyzer/python/ast.cpp, analyzer/cpp/syntax.cpp) and their tests, so that no other header
// names tree-sitter.
//
// The copy reads the runtime's own subtree structures (its private headers: the target
// tree_sitter_runtime_internals, cmake/Grammars.cmake), which is why the runtime is compiled in
// from pinned sources rather than linked from the system. Through the public TSTreeCursor the copy
// cost 4.3 times as much: for each node the cursor climbs out of (almost one per node, tree-sitter
// trees being full of hidden nodes) it rebuilds an iterator and redoes row and column arithmetic.
// The cursor copy stays, as the reference a test compares the direct one with on every fixture.
#pragma once
#include <tree_sitter/api.h>
extern "C" {
#include "language.h"
#include "subtree.h"
#include "tree.h"
}

#include <algorithm>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyzer/core/flat_tree.h"
#include "analyzer/core/huge_pages.h"
#include "analyzer/core/parse_arena.h"

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
    // The field of a production's child by its structural index: the first entry of the
    // production's field map at that index that is not inherited, as
    // ts_tree_cursor_current_field_id finds it.
    row = lang->max_alias_sequence_length;
    for (uint32_t p = 0; p < lang->production_id_count && nf; ++p) {
      const TSFieldMapEntry *b, *e;
      ts_language_field_map(lang, p, &b, &e);
      for (const TSFieldMapEntry* i = b; i != e; ++i) row = std::max<uint32_t>(row, i->child_index + 1u);
    }
    field_at.assign(size_t(lang->production_id_count) * row, 0);
    for (uint32_t p = 0; p < lang->production_id_count && nf; ++p) {
      const TSFieldMapEntry *b, *e;
      ts_language_field_map(lang, p, &b, &e);
      for (const TSFieldMapEntry* i = e; i != b;) {  // backwards: the first entry wins
        --i;
        if (!i->inherited) field_at[size_t(p) * row + i->child_index] = i->field_id;
      }
    }
  }

  // field_at[production * row + structural index]: the grammar's field id (0: none)
  uint32_t row = 0;
  std::vector<TSFieldId> field_at;

  // The grammar's name of a node's symbol ("call", "binary_expression", "%").
  std::string_view symbol_name(uint16_t symbol) const {
    const char* s = ts_language_symbol_name(lang, symbol);
    return s ? s : "";
  }
};

// Gives tree-sitter the parse arena's allocator (analyzer/core/parse_arena.h), once, before the
// first parser exists (every parser is made below). Also where the arena is off (it is then
// malloc's): tree-sitter's own allocator aborts the process when memory runs out, the arena's
// functions end it with a message that says what to do.
inline void install_parse_allocator() {
  static const bool installed = [] {
    ts_set_allocator(parse_arena::allocate, parse_arena::allocate_zeroed, parse_arena::reallocate,
                     parse_arena::release);
    return true;
  }();
  (void)installed;
}

// This thread's parser for `lang` (created on first use, reset before each parse by the caller).
inline TSParser* thread_parser(const TSLanguage* lang) {
  install_parse_allocator();
  thread_local std::vector<std::pair<const TSLanguage*, std::unique_ptr<TSParser, ParserDeleter>>> parsers;
  for (auto& [l, p] : parsers)
    if (l == lang) return p.get();
  std::unique_ptr<TSParser, ParserDeleter> p(ts_parser_new());
  ts_parser_set_language(p.get(), lang);
  parsers.emplace_back(lang, std::move(p));
  return parsers.back().second.get();
}

// A parse of a whole text whose tree is dropped once it has been copied. In this thread's parse
// arena where it can be: a parser of its own is made for it, and its tree and parser are given
// back with the arena, not freed node by node. Otherwise this thread's parser makes the tree.
class FreshParse {
 public:
  FreshParse(const TSLanguage* lang, std::string_view text) {
    install_parse_allocator();
    TSParser* parser;
    if (arena_.active()) {
      own_ = ts_parser_new();
      ts_parser_set_language(own_, lang);
      parser = own_;
    } else {
      parser = thread_parser(lang);
      ts_parser_reset(parser);
    }
    tree_ = ts_parser_parse_string(parser, nullptr, text.data(), static_cast<uint32_t>(text.size()));
  }
  ~FreshParse() {
    // In the arena only blocks that came from malloc (it ran out) need freeing: the tree's walk
    // frees them and skips the arena's. The parser is deleted for its external scanner's sake.
    if (tree_ && (!arena_.active() || arena_.overflowed())) ts_tree_delete(tree_);
    if (own_) ts_parser_delete(own_);
  }
  FreshParse(const FreshParse&) = delete;
  FreshParse& operator=(const FreshParse&) = delete;
  const TSTree* get() const { return tree_; }

 private:
  parse_arena::Scope arena_;  // first in, last out: given back after the tree and the parser
  TSParser* own_ = nullptr;
  TSTree* tree_ = nullptr;
};

template <class K, class F>
struct TreeAccess {
  // Fills `t` (empty) from a tree-sitter tree of `src`; a null tree (the parser gave up) becomes
  // one error. The nodes are gathered in a Scratch and copied into an array of exactly their size:
  // a tree's array is never over-allocated (estimating the count from the text's length over- or
  // under-shot by half, and growing by doubling held both the old and the new array at once).
  // `by_cursor`: copied through the public TSTreeCursor, the reference the tests compare with.
  static void build(Tree<K, F>& t, const SourceFile& src, const TSTree* tree, const Grammar<K, F>& g,
                    bool by_cursor = false) {
    t.src_ = &src;
    if (!tree) {
      t.errors_.emplace_back(0, "the parser gave up on this file");
      return;
    }
    Scratch scratch(src.text().size() / 4 + 64);
    if (by_cursor) walk_cursor(t, ts_tree_root_node(tree), g, 0);
    else walk(scratch, t, tree, g, 0);
    if (!by_cursor) {
      reserve_with_huge_pages(t.nodes_, scratch.size());
      t.nodes_.assign(scratch.begin(), scratch.end());
    }
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
    walk(piece.nodes_, piece, tree, g, offset);
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
  // The nodes of one walk, before their copy. Its memory comes through the parse arena's functions:
  // inside the Scope of the parse (FreshParse) it is the arena's last block, so it grows where it
  // is, without a copy, and its pages are given back with the tree-sitter tree's when the Scope
  // ends; outside a Scope it is malloc's. It was a per-thread std::vector: a large file's scratch
  // then stayed in that thread's malloc heap for the rest of the run, one of the things that made
  // peak memory grow with the number of threads.
  class Scratch {
   public:
    using N = Node<K, F>;
    static_assert(std::is_trivially_copyable_v<N>, "moved by realloc");
    explicit Scratch(size_t hint) : cap_(std::max<size_t>(hint, 64)) {
      data_ = static_cast<N*>(parse_arena::allocate(cap_ * sizeof(N)));
    }
    ~Scratch() { parse_arena::release(data_); }
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
    size_t size() const { return size_; }
    N& operator[](size_t i) { return data_[i]; }
    void push_back(const N& n) {
      if (__builtin_expect(size_ == cap_, 0)) {
        cap_ *= 2;
        data_ = static_cast<N*>(parse_arena::reallocate(data_, cap_ * sizeof(N)));
      }
      data_[size_++] = n;
    }
    const N* begin() const { return data_; }
    const N* end() const { return data_ + size_; }

   private:
    N* data_ = nullptr;
    size_t size_ = 0, cap_ = 0;
  };

  struct CursorGuard {
    TSTreeCursor c;
    explicit CursorGuard(TSNode n) : c(ts_tree_cursor_new(n)) {}
    ~CursorGuard() { ts_tree_cursor_delete(&c); }
  };

  // A node's subtrees, being walked: the nodes under a visible node are its visible children and,
  // through each hidden child that has visible nodes under it, that child's (tree-sitter trees are
  // full of hidden nodes: repetitions, inlined rules, supertypes).
  struct Frame {
    const Subtree* kids;
    const TSSymbol* aliases;  // the production's alias sequence, or null
    const TSFieldId* fields;  // field id by structural index (Grammar::field_at's row)
    uint32_t n, i, s;         // child count, next child, next structural index
    uint32_t pos;             // start byte of child i (before its padding, when i > 0)
    NodeId owner;             // the nearest visible ancestor: the copied parent
    TSFieldId inherited;      // a hidden frame's field, for its children that have none of their own
    bool owner_visible;       // the frame of a visible node, which ends that node's subtree
  };

  static uint32_t size_bytes(Subtree c) { return c.data.is_inline ? c.data.size_bytes : c.ptr->size.bytes; }
  static uint32_t padding_bytes(Subtree c) { return c.data.is_inline ? c.data.padding_bytes : c.ptr->padding.bytes; }
  static bool has_visible_nodes(Subtree c) { return ts_subtree_child_count(c) > 0 && c.ptr->visible_child_count > 0; }

  // Pre-order copy of `tree` into `t` (empty), positions moved by `offset`: the copy the cursor
  // walk below makes, read straight from the subtrees. What it restates of tree_cursor.c:
  // - a child is visible when its subtree is, or when it is not an extra and its parent's
  //   production aliases its structural index (extras take no structural index);
  // - positions: a child starts where the previous one ended plus its own padding (the first, where
  //   its parent starts); bytes only, where the cursor also counts rows and columns;
  // - symbol: the public symbol of the alias, else of the subtree (ERROR stays as it is); named:
  //   the alias's metadata, else the subtree's;
  // - field: none for an extra; else the parent production's non-inherited field at the child's
  //   structural index; else, below a hidden parent, the field that parent would get, up to the
  //   nearest visible ancestor.
  template <class Nodes>
  static void walk(Nodes& nodes, Tree<K, F>& t, const TSTree* tree, const Grammar<K, F>& g, uint32_t offset) {
    const TSLanguage* lang = g.lang;
    auto public_symbol = [lang](TSSymbol s) { return s == ts_builtin_sym_error ? s : lang->public_symbol_map[s]; };
    auto note_missing = [&](Subtree c, TSSymbol alias, uint32_t start) {
      if (__builtin_expect(ts_subtree_missing(c), 0))
        t.errors_.emplace_back(start, std::string("missing '") +
                                          ts_language_symbol_name(lang, alias ? alias : ts_subtree_symbol(c)) + "'");
    };
    // `sym`: the node's public symbol
    auto emit = [&](Subtree c, TSSymbol alias, TSSymbol sym, uint32_t start, TSFieldId fid, NodeId parent) {
      Node<K, F> nd;
      nd.start = start;
      nd.end = start + size_bytes(c);
      nd.symbol = sym;
      const bool is_error = sym == ts_builtin_sym_error;
      nd.kind = is_error ? K::Error : (sym < g.kind_by_symbol.size() ? g.kind_by_symbol[sym] : K::Other);
      nd.named = alias ? lang->symbol_metadata[alias].named : ts_subtree_named(c);
      nd.field = fid < g.field_by_id.size() ? g.field_by_id[fid] : F::None;
      nd.parent = parent;
      NodeId id = static_cast<NodeId>(nodes.size());
      nodes.push_back(nd);
      if (__builtin_expect(is_error, 0)) t.errors_.emplace_back(nd.start, "syntax error");
      else note_missing(c, alias, start);
      return id;
    };
    thread_local std::vector<Frame> stack;
    stack.clear();
    auto push = [&](Subtree p, uint32_t start, NodeId owner, TSFieldId inherited, bool owner_visible) {
      const uint16_t prod = p.ptr->production_id;
      Frame f;
      f.kids = ts_subtree_children(p);
      f.aliases = ts_language_alias_sequence(lang, prod);
      f.fields = g.field_at.empty() ? nullptr : &g.field_at[size_t(prod) * g.row];
      f.n = p.ptr->child_count;
      f.i = f.s = 0;
      f.pos = start;
      f.owner = owner;
      f.inherited = inherited;
      f.owner_visible = owner_visible;
      stack.push_back(f);
    };

    const Subtree root = tree->root;
    const uint32_t root_start = offset + padding_bytes(root);
    const NodeId rid = emit(root, 0, public_symbol(ts_subtree_symbol(root)), root_start, 0, kNone);
    if (!has_visible_nodes(root)) {
      nodes[rid].subtree_end = rid + 1;
      return;
    }
    push(root, root_start, rid, 0, true);
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.i == f.n) {
        if (f.owner_visible) nodes[f.owner].subtree_end = static_cast<NodeId>(nodes.size());
        stack.pop_back();
        continue;
      }
      const Subtree c = f.kids[f.i];
      if (f.i > 0) f.pos += padding_bytes(c);
      const uint32_t start = f.pos;
      f.pos += size_bytes(c);
      f.i++;
      const bool extra = ts_subtree_extra(c);
      TSSymbol alias = 0;
      TSFieldId fid = 0;
      if (!extra) {
        if (f.aliases) alias = f.aliases[f.s];
        if (f.fields && f.s < g.row) fid = f.fields[f.s];
        f.s++;
      }
      const bool has_nodes = has_visible_nodes(c);
      if (ts_subtree_visible(c) || alias) {
        if (!fid && !extra) fid = f.inherited;
        const TSSymbol sym = public_symbol(alias ? alias : ts_subtree_symbol(c));
        if (sym < g.dropped.size() && g.dropped[sym] && !has_nodes) {
          note_missing(c, alias, start);  // a dropped token: no node, but a missing one is still a syntax error
          continue;
        }
        const NodeId id = emit(c, alias, sym, start, fid, f.owner);  // `f` stays valid: nothing pushed yet
        if (has_nodes) push(c, start, id, 0, true);
        else nodes[id].subtree_end = id + 1;
      } else if (has_nodes) {
        // a hidden node: its visible nodes are the owner's children
        const TSFieldId inherited = extra ? 0 : (fid ? fid : f.inherited);
        const NodeId owner = f.owner;
        push(c, start, owner, inherited, false);
      }
    }
  }

  // The same copy through the public TSTreeCursor (the reference: build's `by_cursor`).
  static void walk_cursor(Tree<K, F>& t, TSNode root, const Grammar<K, F>& g, uint32_t offset) {
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
