// The Python tree: a flat::Tree (analyzer/core/flat_tree.h) of tree-sitter-python with the node kinds
// and fields the analysis reads.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analyzer/core/flat_tree.h"
#include "analyzer/core/source_file.h"

namespace tl::py {

using flat::kNone;
using flat::NodeId;

// Node kinds the analysis reads. Everything else is kOther (its grammar name is still kept).
enum class K : uint8_t {
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

using Node = flat::Node<K, F>;
static_assert(sizeof(Node) == 20, "a node is 20 bytes: the trees of a run are most of its memory");
static_assert(static_cast<int>(F::kCount) <= 128 && static_cast<int>(K::kCount) <= 256, "a node's field has 7 bits, its kind 8");

class Tree : public flat::Tree<K, F> {
 public:
  // Parses `src`. Never fails for text input: syntax errors become ERROR / MISSING nodes. A file
  // over 2 MB is parsed in pieces (parse_in_pieces), on up to `threads` threads.
  static Tree parse(const SourceFile& src, unsigned threads = 1);
  // `src` parsed whole and copied through tree-sitter's public cursor: the reference that the
  // direct copy (analyzer/core/flat_tree_build.h) must equal (tests/unit/tree_copy_test.cpp).
  static Tree parse_by_cursor(const SourceFile& src);
  // Parses `src` in pieces of about `piece_bytes` cut at top-level statements (what `parse` does
  // for files over 2 MB, to bound memory and time on huge files), on up to `threads` threads:
  // the same tree as a whole-file
  // parse for a file without syntax errors; with one, error recovery stays within the statements
  // of its piece. Nullopt when the file has no statement to cut at. `reparsed` (when given) counts
  // the re-parses of a piece whose last statement has an error together with the pieces after it.
  static std::optional<Tree> parse_in_pieces(const SourceFile& src, size_t piece_bytes, unsigned threads = 1,
                                             size_t* reparsed = nullptr);

  std::string_view type_name(NodeId n) const;  // the grammar's node type name

  // The tree as bytes (flat::TreeCodec), and back over the same source text: nullopt when the
  // bytes are not a tree of that text (a damaged cache file).
  std::string encode() const { return flat::TreeCodec<K, F>::encode(*this); }
  static std::optional<Tree> decode(const SourceFile& src, std::string_view bytes) {
    Tree t;
    if (!flat::TreeCodec<K, F>::decode(t, src, bytes)) return std::nullopt;
    return t;
  }
};

// Where parsed trees may be kept between runs (the engine's on-disk cache): load() returns the
// tree of a text parsed before, save() is told each tree parsed. Both are called from several
// threads at once.
class TreeStore {
 public:
  virtual ~TreeStore() = default;
  virtual std::optional<Tree> load(const SourceFile& src) = 0;
  virtual void save(const SourceFile& src, const Tree& tree) = 0;
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
