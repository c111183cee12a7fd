// A compact, immutable copy of a tree-sitter Python tree. One cursor walk converts the tree
// into flat arrays with O(1) parent / first-child / next-sibling links, so that analysis never
// pays tree-sitter's O(n) sibling lookups and never holds TSNode handles.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analyzer/core/source_file.h"

struct TSTree;  // tree-sitter's, for ParseCache and Tree::from_tree_sitter

namespace tl::py {

using NodeId = uint32_t;
inline constexpr NodeId kNone = 0xFFFFFFFFu;

// Node kinds the analysis reads. Everything else is kOther (its grammar name is still kept).
enum class K : uint16_t {
  Other = 0,
  Module, FunctionDefinition, ClassDefinition, DecoratedDefinition, Decorator, Block,
  ForStatement, WhileStatement, IfStatement, ElifClause, ElseClause, TryStatement, ExceptClause,
  ExceptGroupClause, FinallyClause, WithStatement, WithClause, WithItem, AsPattern, MatchStatement,
  CaseClause, ExpressionStatement, Assignment, AugmentedAssignment, Call, Attribute, Identifier,
  Subscript, ArgumentList, KeywordArgument, ListSplat, DictionarySplat, Dictionary, Pair, String,
  ConcatenatedString, Integer, Float, True, False, None, ImportStatement, ImportFromStatement,
  AliasedImport, DottedName, RelativeImport, WildcardImport, ReturnStatement, BreakStatement,
  ContinueStatement, RaiseStatement, ConditionalExpression, BooleanOperator, BinaryOperator,
  ComparisonOperator, NotOperator, UnaryOperator, Lambda, Parameters, DefaultParameter,
  TypedParameter, TypedDefaultParameter, ListSplatPattern, DictionarySplatPattern, PatternList,
  TuplePattern, ListPattern, Tuple, List, ParenthesizedExpression, GlobalStatement,
  NonlocalStatement, GeneratorExpression, ListComprehension, SetComprehension,
  DictionaryComprehension, ForInClause, IfClause, Error, Comment, Keyword, Await, NamedExpression,
  DeleteStatement, PassStatement, AssertStatement, ExpressionList,
  kCount
};

// Field names the analysis reads.
enum class F : uint8_t {
  None = 0, Name, Body, Parameters, Left, Right, Condition, Consequence, Alternative, Function,
  Arguments, Object, Attribute, Value, Key, Operator, ModuleName, Alias, Superclasses, Definition,
  Subscript, Type, ReturnType, Argument,
  kCount
};

struct Node {
  uint32_t start = 0, end = 0;  // byte offsets
  NodeId parent = kNone, first_child = kNone, next_sibling = kNone;
  NodeId subtree_end = 0;  // ids are pre-order: the subtree of n is [n, subtree_end)
  K kind = K::Other;
  F field = F::None;  // the field this node fills in its parent
  uint8_t named = 0;
  uint16_t symbol = 0;  // the grammar's symbol, for anonymous tokens such as '%' or 'and'
};

class Tree {
 public:
  // Parses `src`. Never fails for text input: syntax errors become ERROR / MISSING nodes.
  static Tree parse(const SourceFile& src);
  // Converts a tree-sitter tree of `src` (null: the parser gave up, reported as an error).
  static Tree from_tree_sitter(const SourceFile& src, const TSTree* tree);

  const SourceFile& source() const { return *src_; }
  NodeId root() const { return nodes_.empty() ? kNone : 0; }
  size_t size() const { return nodes_.size(); }
  const Node& operator[](NodeId n) const { return nodes_[n]; }

  K kind(NodeId n) const { return nodes_[n].kind; }
  bool is(NodeId n, K k) const { return n != kNone && nodes_[n].kind == k; }
  NodeId parent(NodeId n) const { return nodes_[n].parent; }
  std::string_view text(NodeId n) const { return src_->slice(nodes_[n].start, nodes_[n].end); }
  std::string_view type_name(NodeId n) const;  // the grammar's node type name

  // First child filling `f`, or kNone.
  NodeId field(NodeId n, F f) const;
  // Named children, in order.
  std::vector<NodeId> named_children(NodeId n) const;
  // All children filling `f`.
  std::vector<NodeId> fields(NodeId n, F f) const;
  NodeId first_named_child(NodeId n) const;

  template <class Fn>
  void for_each_child(NodeId n, Fn&& fn) const {
    for (NodeId c = nodes_[n].first_child; c != kNone; c = nodes_[c].next_sibling) fn(c);
  }

  // The anonymous operator token of a binary / boolean / comparison / unary node ("%", "and", ...).
  std::string_view operator_text(NodeId n) const;

  // Syntax errors: positions of ERROR and MISSING nodes, in source order.
  const std::vector<std::pair<uint32_t, std::string>>& errors() const { return errors_; }

  LineCol pos(NodeId n) const { return src_->line_col(nodes_[n].start); }
  // True when `inner` is `outer` or lies inside it.
  bool contains(NodeId outer, NodeId inner) const {
    return outer != kNone && inner != kNone && outer <= inner && inner < nodes_[outer].subtree_end;
  }

 private:
  const SourceFile* src_ = nullptr;
  std::vector<Node> nodes_;
  std::vector<std::pair<uint32_t, std::string>> errors_;
  friend struct TreeBuilder;
  friend class ParseCache;
};

// Remembers, per file (by absolute path), the last text parsed with its tree-sitter tree and its
// converted Tree, for callers that parse the same files again and again (the LSP server re-analyses
// a project after every edit). Parsing an unchanged text is then a copy of the converted Tree, and
// parsing an edited text is incremental: the old tree-sitter tree is told where the texts differ
// and the parser re-uses every subtree outside that span. The result is the Tree a fresh parse
// gives (tests/unit/parse_cache_test.cpp checks it on random edits). Thread-safe; bounded by the
// bytes of text it holds, evicting the least recently used files first.
class ParseCache {
 public:
  explicit ParseCache(size_t max_text_bytes = size_t{256} << 20) : max_bytes_(max_text_bytes) {}
  ~ParseCache();
  ParseCache(const ParseCache&) = delete;
  ParseCache& operator=(const ParseCache&) = delete;

  Tree parse(const SourceFile& src);

  struct Stats {
    size_t copies = 0, incremental = 0, full = 0;
  };
  Stats stats() const;

 private:
  struct Entry;
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const Entry>> entries_;
  size_t max_bytes_, bytes_ = 0;
  uint64_t clock_ = 0;
  Stats stats_;
};

}  // namespace tl::py
