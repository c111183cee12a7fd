#include "analyzer/python/ast.h"

#include <tree_sitter/api.h>

#include <algorithm>
#include <cctype>
#include <condition_variable>
#include <thread>
#include <memory>
#include <optional>
#include <mutex>
#include <unordered_map>

#include "analyzer/core/flat_tree_build.h"
#include "analyzer/core/parallel.h"

extern "C" const TSLanguage* tree_sitter_python(void);

namespace tl::py {
namespace {

constexpr flat::Named<K> kKindNames[] = {
    {K::Module, "module"}, {K::FunctionDefinition, "function_definition"},
    {K::ClassDefinition, "class_definition"}, {K::DecoratedDefinition, "decorated_definition"},
    {K::Decorator, "decorator"}, {K::Block, "block"}, {K::ForStatement, "for_statement"},
    {K::WhileStatement, "while_statement"}, {K::IfStatement, "if_statement"},
    {K::ElifClause, "elif_clause"}, {K::ElseClause, "else_clause"}, {K::TryStatement, "try_statement"},
    {K::ExceptClause, "except_clause"}, {K::ExceptGroupClause, "except_group_clause"},
    {K::FinallyClause, "finally_clause"}, {K::WithStatement, "with_statement"},
    {K::WithClause, "with_clause"}, {K::WithItem, "with_item"}, {K::AsPattern, "as_pattern"},
    {K::MatchStatement, "match_statement"}, {K::CaseClause, "case_clause"},
    {K::ExpressionStatement, "expression_statement"}, {K::Assignment, "assignment"},
    {K::AugmentedAssignment, "augmented_assignment"}, {K::Call, "call"}, {K::Attribute, "attribute"},
    {K::Identifier, "identifier"}, {K::Subscript, "subscript"}, {K::ArgumentList, "argument_list"},
    {K::KeywordArgument, "keyword_argument"}, {K::ListSplat, "list_splat"},
    {K::DictionarySplat, "dictionary_splat"}, {K::Dictionary, "dictionary"}, {K::Pair, "pair"},
    {K::String, "string"}, {K::ConcatenatedString, "concatenated_string"}, {K::Integer, "integer"},
    {K::Float, "float"}, {K::True, "true"}, {K::False, "false"}, {K::None, "none"},
    {K::ImportStatement, "import_statement"}, {K::ImportFromStatement, "import_from_statement"},
    {K::AliasedImport, "aliased_import"}, {K::DottedName, "dotted_name"},
    {K::RelativeImport, "relative_import"}, {K::WildcardImport, "wildcard_import"},
    {K::ReturnStatement, "return_statement"}, {K::BreakStatement, "break_statement"},
    {K::ContinueStatement, "continue_statement"}, {K::RaiseStatement, "raise_statement"},
    {K::ConditionalExpression, "conditional_expression"}, {K::BooleanOperator, "boolean_operator"},
    {K::BinaryOperator, "binary_operator"}, {K::ComparisonOperator, "comparison_operator"},
    {K::NotOperator, "not_operator"}, {K::UnaryOperator, "unary_operator"}, {K::Lambda, "lambda"},
    {K::Parameters, "parameters"}, {K::DefaultParameter, "default_parameter"},
    {K::TypedParameter, "typed_parameter"}, {K::TypedDefaultParameter, "typed_default_parameter"},
    {K::ListSplatPattern, "list_splat_pattern"}, {K::DictionarySplatPattern, "dictionary_splat_pattern"},
    {K::PatternList, "pattern_list"}, {K::TuplePattern, "tuple_pattern"}, {K::ListPattern, "list_pattern"},
    {K::Tuple, "tuple"}, {K::List, "list"}, {K::ParenthesizedExpression, "parenthesized_expression"},
    {K::GlobalStatement, "global_statement"}, {K::NonlocalStatement, "nonlocal_statement"},
    {K::GeneratorExpression, "generator_expression"}, {K::ListComprehension, "list_comprehension"},
    {K::SetComprehension, "set_comprehension"}, {K::DictionaryComprehension, "dictionary_comprehension"},
    {K::ForInClause, "for_in_clause"}, {K::IfClause, "if_clause"}, {K::Error, "ERROR"},
    {K::Comment, "comment"}, {K::Keyword, "keyword_argument_dummy"}, {K::Await, "await"},
    {K::NamedExpression, "named_expression"}, {K::DeleteStatement, "delete_statement"},
    {K::PassStatement, "pass_statement"}, {K::AssertStatement, "assert_statement"},
    {K::ExpressionList, "expression_list"},
};

constexpr flat::Named<F> kFieldNames[] = {
    {F::Name, "name"}, {F::Body, "body"}, {F::Parameters, "parameters"}, {F::Left, "left"},
    {F::Right, "right"}, {F::Condition, "condition"}, {F::Consequence, "consequence"},
    {F::Alternative, "alternative"}, {F::Function, "function"}, {F::Arguments, "arguments"},
    {F::Object, "object"}, {F::Attribute, "attribute"}, {F::Value, "value"}, {F::Key, "key"},
    {F::Operator, "operator"}, {F::ModuleName, "module_name"}, {F::Alias, "alias"},
    {F::Superclasses, "superclasses"}, {F::Definition, "definition"}, {F::Subscript, "subscript"},
    {F::Type, "type"}, {F::ReturnType, "return_type"}, {F::Argument, "argument"},
};

using Grammar = flat::Grammar<K, F>;
using Access = flat::TreeAccess<K, F>;
using flat::TreeHandle;

// Punctuation the analysis never reads as nodes: 30% of a typical tree's nodes (825,000 of
// 2.74 million on Debian's torch package). Their bytes stay in the source text, where the few
// edits that need them (the commas of an argument list, rules/python/fix_edits.cpp) look.
// Operators and keywords (`%`, `is not`, `+=`, `not`, `:=`) stay: rules read them.
constexpr const char* kDroppedTokens[] = {",", "(", ")", "[", "]", "{", "}", ".", ":", "=", ";"};

const Grammar& grammar() {
  static const Grammar g(tree_sitter_python(), kKindNames, kFieldNames, kDroppedTokens);
  return g;
}

// Parses `src`, incrementally from `old` (already edited to match `src`) when given, and keeps
// the tree-sitter tree in `keep` when asked. `by_cursor`: copied through the public cursor (the
// reference, Tree::parse_by_cursor).
Tree parse_tree(const SourceFile& src, const TSTree* old, TreeHandle* keep, bool by_cursor = false) {
  Tree t;
  if (!old && !keep) {  // the tree-sitter tree is dropped at once: parsed in the arena
    flat::FreshParse fresh(grammar().lang, src.text());
    Access::build(t, src, fresh.get(), grammar(), by_cursor);
    return t;
  }
  TSParser* parser = flat::thread_parser(grammar().lang);
  ts_parser_reset(parser);
  TreeHandle tree(ts_parser_parse_string(parser, old, src.text().data(), static_cast<uint32_t>(src.text().size())));
  // Error recovery depends on the parse's history: an incremental parse of a text with syntax
  // errors may recover differently from a fresh one. Such a text is parsed afresh, so that the
  // analysis of a buffer never depends on the edits that led to it.
  if (old && tree && ts_node_has_error(ts_tree_root_node(tree.get()))) {
    ts_parser_reset(parser);
    tree.reset(ts_parser_parse_string(parser, nullptr, src.text().data(), static_cast<uint32_t>(src.text().size())));
  }
  Access::build(t, src, tree.get(), grammar(), by_cursor);
  if (keep) *keep = std::move(tree);
  return t;
}

// Where a large file may be cut into pieces that parse as the whole does: the starts of top-level
// statements, found by a light scan that follows strings (single, triple, with escapes), comments,
// brackets and line continuations. A line qualifies when it starts at column 0 outside any string
// or bracket, does not continue the previous statement (`else`, `elif`, `except`, `finally`, a
// closing bracket) and does not follow a decorator. Cuts are at least `chunk` bytes apart.
std::vector<size_t> chunk_starts(std::string_view s, size_t chunk) {
  std::vector<size_t> out{0};
  int depth = 0;
  char quote = 0;       // the open string's quote character, 0 outside strings
  bool triple = false;  // the open string is triple-quoted
  bool continued = false;  // the previous line ended with a backslash outside strings
  bool after_decorator = false;
  auto starts_with_word = [&](size_t i, std::string_view w) {
    if (s.compare(i, w.size(), w) != 0) return false;
    size_t j = i + w.size();
    return j >= s.size() || !(std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_');
  };
  size_t i = 0;
  while (i < s.size()) {
    // at the start of a line
    if (!quote && depth == 0 && !continued) {
      char c = s[i];
      bool blank = c == '\n' || c == '\r' || c == ' ' || c == '\t' || c == '\f' || c == '#';
      if (!blank) {
        bool clause = starts_with_word(i, "else") || starts_with_word(i, "elif") || starts_with_word(i, "except") ||
                      starts_with_word(i, "finally") || c == ')' || c == ']' || c == '}';
        if (!clause && !after_decorator && i - out.back() >= chunk) out.push_back(i);
        after_decorator = c == '@';
      }
    }
    continued = false;
    // the rest of the line
    for (; i < s.size(); ++i) {
      char c = s[i];
      if (quote) {
        if (c == '\\') {
          ++i;
          continue;
        }
        if (c == '\n' && !triple) {  // an unterminated string: the parser reports it
          quote = 0;
          ++i;
          break;
        }
        if (c == quote) {
          if (!triple) quote = 0;
          else if (s.compare(i, 3, std::string(3, quote)) == 0) {
            quote = 0;
            i += 2;
          }
        }
        continue;
      }
      if (c == '#') {
        while (i < s.size() && s[i] != '\n') ++i;
      }
      if (i >= s.size()) break;
      c = s[i];
      if (c == '\n') {
        ++i;
        break;
      }
      if (c == '\'' || c == '"') {
        quote = c;
        triple = s.compare(i, 3, std::string(3, c)) == 0;
        if (triple) i += 2;
      } else if (c == '(' || c == '[' || c == '{') {
        ++depth;
      } else if (c == ')' || c == ']' || c == '}') {
        if (depth > 0) --depth;
      } else if (c == '\\' && i + 1 < s.size() && (s[i + 1] == '\n' || s[i + 1] == '\r')) {
        continued = true;
      }
    }
  }
  return out;
}

// True when the last statement of a piece's tree (comments aside) holds a syntax error, or the
// piece has one and no statement: what a cut inside that statement (the scan misread the text)
// would look like. An error only before it cannot come from the cut at the piece's end: the
// statements before a cut are whole whatever follows them.
bool error_at_end(const TSTree* tree) {
  TSNode root = ts_tree_root_node(tree);
  if (!ts_node_has_error(root)) return false;
  if (ts_node_symbol(root) == static_cast<TSSymbol>(-1)) return true;  // the whole piece is an ERROR
  static const TSSymbol comment = ts_language_symbol_for_name(grammar().lang, "comment", 7, true);
  for (uint32_t i = ts_node_child_count(root); i-- > 0;) {
    TSNode c = ts_node_child(root, i);
    if (ts_node_symbol(c) == comment) continue;
    return ts_node_has_error(c) || ts_node_is_missing(c);
  }
  return true;
}

// Parses `src` in pieces of about `chunk` bytes cut at top-level statements. Each piece's
// tree-sitter tree is converted and freed by the thread that parsed it, and the converted pieces
// are joined in order: the peak memory of a huge file is then its converted tree, not
// tree-sitter's. With `threads` > 1, helper threads parse and convert pieces ahead of the join (at
// most 2 x `threads` pieces ahead, so memory stays bounded), and the joining thread does the same
// whenever the piece it needs is not taken. A piece whose last statement has a syntax error is
// parsed again together with the pieces after it (up to three more), in case the scan cut inside
// that statement; an error that remains, or one before the piece's last statement (a cut cannot
// reach it), is the file's own, and error recovery stays within its piece (a whole-file parse may
// recover differently: only files with syntax errors can differ). Null when the scan finds no
// cut. `reparsed` (when given) counts the merged re-parses.
std::optional<Tree> parse_pieces(const SourceFile& src, size_t chunk, unsigned threads, size_t* reparsed) {
  std::string_view text = src.text();
  std::vector<size_t> starts = chunk_starts(text, chunk);
  if (starts.size() < 2) return std::nullopt;
  starts.push_back(text.size());
  const size_t n = starts.size() - 1;
  struct Piece {
    Tree tree;
    bool converted = false;  // false: the parser gave up, or the piece is parsed again merged
    bool error_at_end = false;
  };
  // parses piece `i` and converts it, unless it is to be parsed again merged with the next ones
  auto piece_text = [&](size_t b, size_t e) { return text.substr(b, e - b); };
  auto parse_piece = [&](size_t i) {
    Piece p;
    flat::FreshParse tr(grammar().lang, piece_text(starts[i], starts[i + 1]));
    p.error_at_end = !tr.get() || error_at_end(tr.get());
    if (tr.get() && !(p.error_at_end && i + 1 < n)) {
      Access::build_piece(p.tree, src, tr.get(), grammar(), static_cast<uint32_t>(starts[i]));
      p.converted = true;
    }
    return p;
  };

  threads = std::max(1u, threads);
  const size_t window = 2 * size_t{threads};
  std::vector<Piece> parsed(n);
  std::vector<char> ready(n, 0);
  std::mutex mu;
  std::condition_variable cv;
  size_t next_parse = 0, joined = 0;
  bool stop = false;
  // a piece may be taken when it is within the window ahead of the join, or when the joining
  // thread needs it (`need`: a merge reaches past the window)
  auto can_take = [&](size_t need = 0) { return next_parse < n && (next_parse < joined + window || next_parse <= need); };
  auto take_one = [&](std::unique_lock<std::mutex>& lk) {  // takes the next piece; lk held on entry and exit
    size_t i = next_parse++;
    lk.unlock();
    Piece p = parse_piece(i);
    lk.lock();
    parsed[i] = std::move(p);
    ready[i] = 1;
    cv.notify_all();
  };
  auto await = [&](size_t k) {  // piece k, parsing pieces here while it is not taken
    std::unique_lock lk(mu);
    while (!ready[k]) {
      if (can_take(k)) take_one(lk);
      else cv.wait(lk);
    }
    return std::move(parsed[k]);
  };
  std::vector<std::thread> helpers;
  for (unsigned w = 1; w < threads && w < n; ++w)
    helpers.emplace_back([&] {
      std::unique_lock lk(mu);
      for (;;) {
        cv.wait(lk, [&] { return stop || can_take(); });
        if (stop) return;
        take_one(lk);
      }
    });
  struct Join {
    std::vector<std::thread>& helpers;
    std::mutex& mu;
    std::condition_variable& cv;
    bool& stop;
    ~Join() {
      {
        std::lock_guard lk(mu);
        stop = true;
      }
      cv.notify_all();
      for (auto& h : helpers) h.join();
    }
  } join{helpers, mu, cv, stop};

  Tree t;
  const size_t nodes_hint = text.size() / 4 + 64;
  for (size_t k = 0; k < n;) {
    size_t next = k + 1;
    Piece piece = await(k);
    // (While a merged parse is held, a piece this thread parses in await() is nested in its
    // arena, which pauses: that piece's parse allocates through malloc.)
    std::optional<flat::FreshParse> merged;
    bool again = piece.error_at_end;
    for (int m = 0; m < 3 && next < n && again; ++m) {
      await(next);  // parsed again as part of the merged piece
      merged.reset();
      merged.emplace(grammar().lang, piece_text(starts[k], starts[++next]));
      again = !merged->get() || error_at_end(merged->get());
      if (reparsed) ++*reparsed;
    }
    if (merged && merged->get()) {
      piece = Piece{};
      Access::build_piece(piece.tree, src, merged->get(), grammar(), static_cast<uint32_t>(starts[k]));
      merged.reset();
    } else if (!piece.converted) {
      return std::nullopt;  // the parser gave up: Tree::parse reports it for the whole file
    }
    Access::append(t, piece.tree, nodes_hint);
    {
      std::lock_guard lk(mu);
      joined = k = next;
    }
    cv.notify_all();
  }
  return t;
}

constexpr size_t kPieceBytes = size_t{1} << 20;  // files over twice this are parsed in pieces

// Row and byte column of `byte` in `text`.
TSPoint point_at(std::string_view text, size_t byte) {
  TSPoint p{0, 0};
  size_t line_start = 0;
  for (size_t i = 0; i < byte; ++i)
    if (text[i] == '\n') {
      ++p.row;
      line_start = i + 1;
    }
  p.column = static_cast<uint32_t>(byte - line_start);
  return p;
}
}  // namespace

Tree Tree::parse_by_cursor(const SourceFile& src) { return parse_tree(src, nullptr, nullptr, /*by_cursor=*/true); }

Tree Tree::parse(const SourceFile& src, unsigned threads) {
  if (src.text().size() > 2 * kPieceBytes)
    if (auto t = parse_pieces(src, kPieceBytes, threads, nullptr)) return std::move(*t);
  return parse_tree(src, nullptr, nullptr);
}

std::optional<Tree> Tree::parse_in_pieces(const SourceFile& src, size_t piece_bytes, unsigned threads,
                                          size_t* reparsed) {
  return parse_pieces(src, piece_bytes, threads, reparsed);
}

struct ParseCache::Entry {
  std::string text;
  TreeHandle ts;  // null when the parser gave up
  Tree tree;      // converted; its source pointer is re-set on each copy
  uint64_t used = 0;
};

ParseCache::~ParseCache() = default;

ParseCache::Stats ParseCache::stats() const {
  std::lock_guard lk(mu_);
  return stats_;
}

Tree ParseCache::parse(const SourceFile& src) {
  const std::string& key = src.abs_path();
  std::string_view text = src.text();
  std::shared_ptr<const Entry> old;
  {
    std::lock_guard lk(mu_);
    if (auto it = entries_.find(key); it != entries_.end()) old = it->second;
    if (old && old->text == text) {
      ++stats_.copies;
      const_cast<Entry&>(*old).used = ++clock_;
      Tree t = old->tree;
      Access::set_source(t, &src);
      return t;
    }
  }
  TreeHandle edited;
  if (old && old->ts) {
    // One edit spanning every difference: the common prefix and suffix are untouched.
    std::string_view before = old->text;
    size_t n = std::min(before.size(), text.size());
    size_t prefix = 0;
    while (prefix < n && before[prefix] == text[prefix]) ++prefix;
    size_t suffix = 0;
    while (suffix < n - prefix && before[before.size() - 1 - suffix] == text[text.size() - 1 - suffix]) ++suffix;
    TSInputEdit e;
    e.start_byte = static_cast<uint32_t>(prefix);
    e.old_end_byte = static_cast<uint32_t>(before.size() - suffix);
    e.new_end_byte = static_cast<uint32_t>(text.size() - suffix);
    e.start_point = point_at(text, prefix);
    e.old_end_point = point_at(before, e.old_end_byte);
    e.new_end_point = point_at(text, e.new_end_byte);
    edited.reset(ts_tree_copy(old->ts.get()));  // the cached tree stays as it is for other threads
    ts_tree_edit(edited.get(), &e);
  }
  auto fresh = std::make_shared<Entry>();
  fresh->text = std::string(text);
  fresh->tree = parse_tree(src, edited.get(), &fresh->ts);
  Tree out = fresh->tree;
  Access::set_source(fresh->tree, nullptr);  // the caller's SourceFile does not outlive this call's result
  std::lock_guard lk(mu_);
  ++(edited ? stats_.incremental : stats_.full);
  fresh->used = ++clock_;
  if (auto it = entries_.find(key); it != entries_.end()) bytes_ -= it->second->text.size();
  bytes_ += fresh->text.size();
  entries_[key] = std::move(fresh);
  while (bytes_ > max_bytes_ && entries_.size() > 1) {
    auto lru = entries_.end();
    for (auto it = entries_.begin(); it != entries_.end(); ++it)
      if (it->first != key && (lru == entries_.end() || it->second->used < lru->second->used)) lru = it;
    if (lru == entries_.end()) break;
    bytes_ -= lru->second->text.size();
    entries_.erase(lru);
  }
  return out;
}

std::string_view Tree::type_name(NodeId n) const { return grammar().symbol_name((*this)[n].symbol); }

}  // namespace tl::py
