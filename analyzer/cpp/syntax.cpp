#include "analyzer/cpp/syntax.h"

#include <tree_sitter/api.h>

#include <memory>
#include <unordered_map>

extern "C" const TSLanguage* tree_sitter_cpp(void);

namespace tl::cpp::syntax {
namespace {

struct KindName {
  K kind;
  const char* name;
};
constexpr KindName kKindNames[] = {
    {K::TranslationUnit, "translation_unit"},
    {K::FunctionDefinition, "function_definition"},
    {K::FunctionDeclarator, "function_declarator"},
    {K::ClassSpecifier, "class_specifier"},
    {K::StructSpecifier, "struct_specifier"},
    {K::BaseClassClause, "base_class_clause"},
    {K::FieldDeclarationList, "field_declaration_list"},
    {K::FieldDeclaration, "field_declaration"},
    {K::Declaration, "declaration"},
    {K::InitDeclarator, "init_declarator"},
    {K::ParameterList, "parameter_list"},
    {K::ParameterDeclaration, "parameter_declaration"},
    {K::OptionalParameterDeclaration, "optional_parameter_declaration"},
    {K::CompoundStatement, "compound_statement"},
    {K::ExpressionStatement, "expression_statement"},
    {K::CallExpression, "call_expression"},
    {K::FieldExpression, "field_expression"},
    {K::QualifiedIdentifier, "qualified_identifier"},
    {K::Identifier, "identifier"},
    {K::FieldIdentifier, "field_identifier"},
    {K::TypeIdentifier, "type_identifier"},
    {K::NamespaceIdentifier, "namespace_identifier"},
    {K::TemplateFunction, "template_function"},
    {K::TemplateMethod, "template_method"},
    {K::TemplateType, "template_type"},
    {K::TemplateArgumentList, "template_argument_list"},
    {K::ArgumentList, "argument_list"},
    {K::InitializerList, "initializer_list"},
    {K::ForRangeLoop, "for_range_loop"},
    {K::ForStatement, "for_statement"},
    {K::WhileStatement, "while_statement"},
    {K::DoStatement, "do_statement"},
    {K::IfStatement, "if_statement"},
    {K::ConditionClause, "condition_clause"},
    {K::ElseClause, "else_clause"},
    {K::ConditionalExpression, "conditional_expression"},
    {K::BinaryExpression, "binary_expression"},
    {K::UnaryExpression, "unary_expression"},
    {K::UpdateExpression, "update_expression"},
    {K::AssignmentExpression, "assignment_expression"},
    {K::PointerExpression, "pointer_expression"},
    {K::ParenthesizedExpression, "parenthesized_expression"},
    {K::SubscriptExpression, "subscript_expression"},
    {K::NamespaceDefinition, "namespace_definition"},
    {K::DeclarationList, "declaration_list"},
    {K::UsingDeclaration, "using_declaration"},
    {K::NamespaceAliasDefinition, "namespace_alias_definition"},
    {K::NestedNamespaceSpecifier, "nested_namespace_specifier"},
    {K::LambdaExpression, "lambda_expression"},
    {K::ReturnStatement, "return_statement"},
    {K::NumberLiteral, "number_literal"},
    {K::StringLiteral, "string_literal"},
    {K::True, "true"},
    {K::False, "false"},
    {K::This, "this"},
    {K::PlaceholderTypeSpecifier, "placeholder_type_specifier"},
    {K::ReferenceDeclarator, "reference_declarator"},
    {K::PointerDeclarator, "pointer_declarator"},
    {K::PrimitiveType, "primitive_type"},
    {K::Comment, "comment"},
    {K::TemplateDeclaration, "template_declaration"},
    {K::AccessSpecifier, "access_specifier"},
    {K::TypeDescriptor, "type_descriptor"},
    {K::CastExpression, "cast_expression"},
    {K::NewExpression, "new_expression"},
    {K::LinkageSpecification, "linkage_specification"},
    {K::PreprocIfdef, "preproc_ifdef"},
    {K::PreprocIf, "preproc_if"},
    {K::PreprocElse, "preproc_else"},
    {K::PreprocElif, "preproc_elif"},
    {K::SwitchStatement, "switch_statement"},
    {K::CaseStatement, "case_statement"},
    {K::TryStatement, "try_statement"},
    {K::CatchClause, "catch_clause"},
    {K::FieldInitializerList, "field_initializer_list"},
    {K::FieldInitializer, "field_initializer"},
    {K::OperatorName, "operator_name"},
    {K::DestructorName, "destructor_name"},
    {K::CommaExpression, "comma_expression"},
    {K::InitStatement, "init_statement"},
};

struct FieldName {
  F field;
  const char* name;
};
constexpr FieldName kFieldNames[] = {
    {F::Name, "name"},
    {F::Body, "body"},
    {F::Type, "type"},
    {F::Declarator, "declarator"},
    {F::Value, "value"},
    {F::Parameters, "parameters"},
    {F::Function, "function"},
    {F::Arguments, "arguments"},
    {F::Argument, "argument"},
    {F::Field, "field"},
    {F::Operator, "operator"},
    {F::Left, "left"},
    {F::Right, "right"},
    {F::Condition, "condition"},
    {F::Consequence, "consequence"},
    {F::Alternative, "alternative"},
    {F::Scope, "scope"},
    {F::Initializer, "initializer"},
    {F::Update, "update"},
    {F::DefaultValue, "default_value"},
    {F::Path, "path"},
};

struct LanguageTables {
  const TSLanguage* lang = nullptr;
  std::vector<K> kind_by_symbol;
  std::vector<uint8_t> named_by_symbol;
  std::vector<F> field_by_id;
  LanguageTables() {
    lang = tree_sitter_cpp();
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

Tree Tree::parse(const SourceFile& src) {
  Tree t;
  t.src_ = &src;
  TSParser* parser = thread_parser();
  ts_parser_reset(parser);
  std::unique_ptr<TSTree, TreeDeleter> tree(
      ts_parser_parse_string(parser, nullptr, src.text().data(), static_cast<uint32_t>(src.text().size())));
  if (!tree) {
    t.errors_.emplace_back(0, "the parser gave up on this file");
    return t;
  }
  TreeBuilder::build(t, ts_tree_root_node(tree.get()));
  return t;
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

}  // namespace tl::cpp::syntax
