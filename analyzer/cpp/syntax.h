// The C++ syntax layer of the fast path: a compact, immutable copy of a tree-sitter-cpp tree
// (flat arrays with O(1) parent / first-child / next-sibling links, like analyzer/python/ast.h).
// The tree-sitter parser and tree handles are owned (RAII) inside syntax.cpp and never escape:
// this header and the program model (model.h) expose no tree-sitter type.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyzer/core/flat_tree.h"
#include "analyzer/core/source_file.h"

namespace tl::cpp::syntax {

using flat::kNone;
using flat::NodeId;

// Node kinds the model reads; everything else is Other.
enum class K : uint8_t {
  Other = 0,
  TranslationUnit, FunctionDefinition, FunctionDeclarator, ClassSpecifier, StructSpecifier, BaseClassClause,
  FieldDeclarationList, FieldDeclaration, Declaration, InitDeclarator, ParameterList, ParameterDeclaration,
  OptionalParameterDeclaration, CompoundStatement, ExpressionStatement, CallExpression, FieldExpression,
  QualifiedIdentifier, Identifier, FieldIdentifier, TypeIdentifier, NamespaceIdentifier, TemplateFunction,
  TemplateMethod, TemplateType, TemplateArgumentList, ArgumentList, InitializerList, ForRangeLoop, ForStatement,
  WhileStatement, DoStatement, IfStatement, ConditionClause, ElseClause, ConditionalExpression, BinaryExpression,
  UnaryExpression, UpdateExpression, AssignmentExpression, PointerExpression, ParenthesizedExpression,
  SubscriptExpression, NamespaceDefinition, DeclarationList, UsingDeclaration, NamespaceAliasDefinition,
  NestedNamespaceSpecifier, LambdaExpression, ReturnStatement, NumberLiteral, StringLiteral, True, False, This,
  PlaceholderTypeSpecifier, ReferenceDeclarator, PointerDeclarator, PrimitiveType, Comment, Error,
  TemplateDeclaration, AccessSpecifier, TypeDescriptor, CastExpression, NewExpression, LinkageSpecification,
  PreprocIfdef, PreprocIf, PreprocElse, PreprocElif, SwitchStatement, CaseStatement, TryStatement, CatchClause,
  FieldInitializerList, FieldInitializer, OperatorName, DestructorName, CommaExpression, InitStatement,
  kCount
};

// Field names the model reads.
enum class F : uint8_t {
  None = 0, Name, Body, Type, Declarator, Value, Parameters, Function, Arguments, Argument, Field, Operator, Left,
  Right, Condition, Consequence, Alternative, Scope, Initializer, Update, DefaultValue, Path,
  kCount
};

using Node = flat::Node<K, F>;
static_assert(sizeof(Node) == 20, "a node is 20 bytes: the trees of a run are most of its memory");
static_assert(static_cast<int>(F::kCount) <= 128 && static_cast<int>(K::kCount) <= 256, "a node's field has 7 bits, its kind 8");

class Tree : public flat::Tree<K, F> {
 public:
  // Parses `src` with tree-sitter-cpp. Never fails for text input: syntax errors become ERROR /
  // MISSING nodes, listed by errors().
  static Tree parse(const SourceFile& src);
  // `src` copied through tree-sitter's public cursor: the reference that the direct copy
  // (analyzer/core/flat_tree_build.h) must equal (tests/unit/tree_copy_test.cpp).
  static Tree parse_by_cursor(const SourceFile& src);
  std::string_view type_name(NodeId n) const;  // the grammar's node type name
};

}  // namespace tl::cpp::syntax
