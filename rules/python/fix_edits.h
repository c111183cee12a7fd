// Building fixes for Python rules: edits that add or remove a call argument in the layout the
// call is written in (one line, or one argument per line with or without a trailing comma,
// comments kept). Every edit carries byte offsets and line/column positions.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "rules/python/rule_context.h"

namespace tl::rules {

// Replaces bytes [begin, end) of `m`'s text (begin == end: an insertion).
Edit edit_bytes(const py::Module& m, uint32_t begin, uint32_t end, std::string replacement);
// Replaces node `n`'s text.
Edit replace_node(const py::Module& m, py::NodeId n, std::string replacement);

// Edits that add `argument` ("pin_memory=True") after the last argument of `call` (a call node):
// `f(a)` -> `f(a, pin_memory=True)`; a call written one argument per line gets a new line with
// the same indentation, and a trailing comma when the call has one. Empty when the call has no
// plain argument list (`f(x for x in y)`) or the list has a shape these edits do not handle.
std::vector<Edit> add_argument(const py::Module& m, py::NodeId call, std::string_view argument);

// Edits that remove argument `arg` (a child of a call's argument list) and its comma:
// `f(a, b=False)` -> `f(a)`, `f(b=False)` -> `f()`; an argument on a line of its own goes with its
// line (and a comment on that line). Empty when `arg` is not a call argument.
std::vector<Edit> remove_argument(const py::Module& m, py::NodeId arg);

}  // namespace tl::rules
