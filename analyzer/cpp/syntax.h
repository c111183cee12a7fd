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

#include "analyzer/core/source_file.h"

namespace tl::cpp::syntax {

using NodeId = uint32_t;
inline constexpr NodeId kNone = 0xFFFFFFFFu;

// Node kinds the model reads; everything else is Other.
enum class K : uint16_t {
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

struct Node {
  uint32_t start = 0, end = 0;  // byte offsets
  NodeId parent = kNone, first_child = kNone, next_sibling = kNone;
  NodeId subtree_end = 0;  // ids are pre-order: the subtree of n is [n, subtree_end)
  K kind = K::Other;
  F field = F::None;
  uint8_t named = 0;
  uint16_t symbol = 0;
};

class Tree {
 public:
  // Parses `src` with tree-sitter-cpp. Never fails for text input: syntax errors become ERROR /
  // MISSING nodes, listed by errors().
  static Tree parse(const SourceFile& src);

  const SourceFile& source() const { return *src_; }
  NodeId root() const { return nodes_.empty() ? kNone : 0; }
  size_t size() const { return nodes_.size(); }
  const Node& operator[](NodeId n) const { return nodes_[n]; }
  K kind(NodeId n) const { return nodes_[n].kind; }
  bool is(NodeId n, K k) const { return n != kNone && nodes_[n].kind == k; }
  NodeId parent(NodeId n) const { return nodes_[n].parent; }
  std::string_view text(NodeId n) const { return src_->slice(nodes_[n].start, nodes_[n].end); }
  std::string_view type_name(NodeId n) const;

  NodeId field(NodeId n, F f) const;
  std::vector<NodeId> named_children(NodeId n) const;
  NodeId first_named_child(NodeId n) const;
  template <class Fn>
  void for_each_child(NodeId n, Fn&& fn) const {
    for (NodeId c = nodes_[n].first_child; c != kNone; c = nodes_[c].next_sibling) fn(c);
  }
  // The anonymous operator token of a binary / unary / update / assignment node ("%", "<<", "+=").
  std::string_view operator_text(NodeId n) const;
  bool contains(NodeId outer, NodeId inner) const {
    return outer != kNone && inner != kNone && outer <= inner && inner < nodes_[outer].subtree_end;
  }
  const std::vector<std::pair<uint32_t, std::string>>& errors() const { return errors_; }

 private:
  const SourceFile* src_ = nullptr;
  std::vector<Node> nodes_;
  std::vector<std::pair<uint32_t, std::string>> errors_;
  friend struct TreeBuilder;
};

}  // namespace tl::cpp::syntax
