#include "analyzer/python/ast.h"

#include <tree_sitter/api.h>

#include <memory>
#include <mutex>
#include <unordered_map>

#include "analyzer/core/flat_tree_build.h"

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

const Grammar& grammar() {
  static const Grammar g(tree_sitter_python(), kKindNames, kFieldNames);
  return g;
}

// Parses `src`, incrementally from `old` (already edited to match `src`) when given, and keeps
// the tree-sitter tree in `keep` when asked.
Tree parse_tree(const SourceFile& src, const TSTree* old, TreeHandle* keep) {
  Tree t;
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
  Access::build(t, src, tree, grammar());
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
