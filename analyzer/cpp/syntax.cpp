#include "analyzer/cpp/syntax.h"

#include <tree_sitter/api.h>

#include "analyzer/core/flat_tree_build.h"

extern "C" const TSLanguage* tree_sitter_cpp(void);

namespace tl::cpp::syntax {
namespace {

constexpr flat::Named<K> kKindNames[] = {
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

constexpr flat::Named<F> kFieldNames[] = {
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

using Grammar = flat::Grammar<K, F>;

const Grammar& grammar() {
  static const Grammar g(tree_sitter_cpp(), kKindNames, kFieldNames);
  return g;
}

}  // namespace

namespace {
Tree parse_tree(const SourceFile& src, bool by_cursor) {
  flat::FreshParse tree(grammar().lang, src.text());
  Tree t;
  flat::TreeAccess<K, F>::build(t, src, tree.get(), grammar(), by_cursor);
  return t;
}
}  // namespace

Tree Tree::parse(const SourceFile& src) { return parse_tree(src, false); }
Tree Tree::parse_by_cursor(const SourceFile& src) { return parse_tree(src, true); }

std::string_view Tree::type_name(NodeId n) const { return grammar().symbol_name((*this)[n].symbol); }

}  // namespace tl::cpp::syntax
