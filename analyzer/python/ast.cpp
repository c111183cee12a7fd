#include "analyzer/python/ast.h"

#include <tree_sitter/api.h>

#include <memory>
#include <mutex>
#include <unordered_map>

extern "C" const TSLanguage* tree_sitter_python(void);

namespace tl::py {
namespace {

struct KindName {
  K kind;
  const char* name;
};
constexpr KindName kKindNames[] = {
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

struct FieldName {
  F field;
  const char* name;
};
constexpr FieldName kFieldNames[] = {
    {F::Name, "name"}, {F::Body, "body"}, {F::Parameters, "parameters"}, {F::Left, "left"},
    {F::Right, "right"}, {F::Condition, "condition"}, {F::Consequence, "consequence"},
    {F::Alternative, "alternative"}, {F::Function, "function"}, {F::Arguments, "arguments"},
    {F::Object, "object"}, {F::Attribute, "attribute"}, {F::Value, "value"}, {F::Key, "key"},
    {F::Operator, "operator"}, {F::ModuleName, "module_name"}, {F::Alias, "alias"},
    {F::Superclasses, "superclasses"}, {F::Definition, "definition"}, {F::Subscript, "subscript"},
    {F::Type, "type"}, {F::ReturnType, "return_type"}, {F::Argument, "argument"},
};

struct LanguageTables {
  const TSLanguage* lang = nullptr;
  std::vector<K> kind_by_symbol;
  std::vector<uint8_t> named_by_symbol;
  std::vector<F> field_by_id;
  LanguageTables() {
    lang = tree_sitter_python();
    uint32_t n = ts_language_symbol_count(lang);
    kind_by_symbol.assign(n + 1, K::Other);
    named_by_symbol.assign(n + 1, 0);
    std::unordered_map<std::string, K> by_name;
    for (auto& kn : kKindNames) by_name[kn.name] = kn.kind;
    for (uint32_t s = 0; s < n; ++s) {
      const char* name = ts_language_symbol_name(lang, static_cast<TSSymbol>(s));
      TSSymbolType t = ts_language_symbol_type(lang, static_cast<TSSymbol>(s));
      named_by_symbol[s] = t == TSSymbolTypeRegular;
      if (!name || t != TSSymbolTypeRegular) continue;
      if (auto it = by_name.find(name); it != by_name.end()) kind_by_symbol[s] = it->second;
    }
    uint32_t nf = ts_language_field_count(lang);
    field_by_id.assign(nf + 1, F::None);
    for (uint32_t f = 1; f <= nf; ++f) {
      const char* name = ts_language_field_name_for_id(lang, static_cast<TSFieldId>(f));
      if (!name) continue;
      for (auto& fn : kFieldNames)
        if (std::string_view(name) == fn.name) field_by_id[f] = fn.field;
    }
  }
};

const LanguageTables& tables() {
  static const LanguageTables t;
  return t;
}

struct ParserDeleter {
  void operator()(TSParser* p) const { ts_parser_delete(p); }
};
struct TreeDeleter {
  void operator()(TSTree* t) const { ts_tree_delete(t); }
};
struct CursorGuard {
  TSTreeCursor c;
  explicit CursorGuard(TSNode n) : c(ts_tree_cursor_new(n)) {}
  ~CursorGuard() { ts_tree_cursor_delete(&c); }
};

TSParser* thread_parser() {
  thread_local std::unique_ptr<TSParser, ParserDeleter> parser = [] {
    std::unique_ptr<TSParser, ParserDeleter> p(ts_parser_new());
    ts_parser_set_language(p.get(), tables().lang);
    return p;
  }();
  return parser.get();
}

}  // namespace

struct TreeBuilder {
  static void build(Tree& t, TSNode root) {
    const auto& tab = tables();
    CursorGuard cur(root);
    std::vector<NodeId> stack;      // ancestors of the current node
    std::vector<NodeId> last_child; // last child seen for each stack entry
    t.nodes_.reserve(ts_node_child_count(root) * 16 + 64);
    auto add = [&](TSNode n, TSFieldId fid) {
      Node nd;
      nd.start = ts_node_start_byte(n);
      nd.end = ts_node_end_byte(n);
      TSSymbol sym = ts_node_symbol(n);
      nd.symbol = sym;
      bool is_error = ts_node_is_null(n) ? false : (sym == static_cast<TSSymbol>(-1));
      nd.kind = is_error ? K::Error : (sym < tab.kind_by_symbol.size() ? tab.kind_by_symbol[sym] : K::Other);
      nd.named = ts_node_is_named(n);
      nd.field = fid < tab.field_by_id.size() ? tab.field_by_id[fid] : F::None;
      NodeId id = static_cast<NodeId>(t.nodes_.size());
      if (!stack.empty()) {
        NodeId p = stack.back();
        nd.parent = p;
        if (last_child.back() == kNone)
          t.nodes_[p].first_child = id;
        else
          t.nodes_[last_child.back()].next_sibling = id;
        last_child.back() = id;
      }
      t.nodes_.push_back(nd);
      if (is_error)
        t.errors_.emplace_back(nd.start, "syntax error");
      else if (ts_node_is_missing(n))
        t.errors_.emplace_back(nd.start, std::string("missing '") + ts_node_type(n) + "'");
      return id;
    };
    NodeId id = add(ts_tree_cursor_current_node(&cur.c), 0);
    stack.push_back(id);
    last_child.push_back(kNone);
    if (!ts_tree_cursor_goto_first_child(&cur.c)) {
      t.nodes_[id].subtree_end = id + 1;
      return;
    }
    for (;;) {
      TSNode n = ts_tree_cursor_current_node(&cur.c);
      NodeId nid = add(n, ts_tree_cursor_current_field_id(&cur.c));
      if (ts_tree_cursor_goto_first_child(&cur.c)) {
        stack.push_back(nid);
        last_child.push_back(kNone);
        continue;
      }
      t.nodes_[nid].subtree_end = nid + 1;
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
        last_child.pop_back();
      }
    }
  }
};

namespace {
using TreeHandle = std::unique_ptr<TSTree, TreeDeleter>;

// Parses `src`, incrementally from `old` (already edited to match `src`) when given, and keeps
// the tree-sitter tree in `keep` when asked.
Tree parse_tree(const SourceFile& src, const TSTree* old, TreeHandle* keep) {
  Tree t;
  TSParser* parser = thread_parser();
  ts_parser_reset(parser);
  TreeHandle tree(ts_parser_parse_string(parser, old, src.text().data(), static_cast<uint32_t>(src.text().size())));
  // Error recovery depends on the parse's history: an incremental parse of a text with syntax
  // errors may recover differently from a fresh one. Such a text is parsed afresh, so that the
  // analysis of a buffer never depends on the edits that led to it.
  if (old && tree && ts_node_has_error(ts_tree_root_node(tree.get()))) {
    ts_parser_reset(parser);
    tree.reset(ts_parser_parse_string(parser, nullptr, src.text().data(), static_cast<uint32_t>(src.text().size())));
  }
  t = Tree::from_tree_sitter(src, tree.get());
  if (keep) *keep = std::move(tree);
  return t;
}

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

Tree Tree::from_tree_sitter(const SourceFile& src, const TSTree* tree) {
  Tree t;
  t.src_ = &src;
  if (!tree) {
    t.errors_.emplace_back(0, "the parser gave up on this file");
    return t;
  }
  TreeBuilder::build(t, ts_tree_root_node(tree));
  return t;
}

Tree Tree::parse(const SourceFile& src) { return parse_tree(src, nullptr, nullptr); }

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
      t.src_ = &src;
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
  fresh->tree.src_ = nullptr;  // the caller's SourceFile does not outlive this call's result
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

std::string_view Tree::type_name(NodeId n) const {
  const char* s = ts_language_symbol_name(tables().lang, nodes_[n].symbol);
  return s ? s : "";
}

NodeId Tree::field(NodeId n, F f) const {
  for (NodeId c = nodes_[n].first_child; c != kNone; c = nodes_[c].next_sibling)
    if (nodes_[c].field == f) return c;
  return kNone;
}

std::vector<NodeId> Tree::fields(NodeId n, F f) const {
  std::vector<NodeId> out;
  for (NodeId c = nodes_[n].first_child; c != kNone; c = nodes_[c].next_sibling)
    if (nodes_[c].field == f) out.push_back(c);
  return out;
}

std::vector<NodeId> Tree::named_children(NodeId n) const {
  std::vector<NodeId> out;
  for (NodeId c = nodes_[n].first_child; c != kNone; c = nodes_[c].next_sibling)
    if (nodes_[c].named && nodes_[c].kind != K::Comment) out.push_back(c);
  return out;
}

NodeId Tree::first_named_child(NodeId n) const {
  for (NodeId c = nodes_[n].first_child; c != kNone; c = nodes_[c].next_sibling)
    if (nodes_[c].named && nodes_[c].kind != K::Comment) return c;
  return kNone;
}

std::string_view Tree::operator_text(NodeId n) const {
  NodeId op = field(n, F::Operator);
  if (op != kNone) return text(op);
  for (NodeId c = nodes_[n].first_child; c != kNone; c = nodes_[c].next_sibling)
    if (!nodes_[c].named) return text(c);
  return {};
}

}  // namespace tl::py
