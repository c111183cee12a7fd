// The syntax check that `--fix` runs on a fixed Python file before writing it (see
// analyzer/core/fix.h, FixOptions::syntax_errors).
#pragma once
#include <cstddef>
#include <string_view>

namespace tl::py {

// The number of syntax errors (tree-sitter ERROR and MISSING nodes) in a Python source text;
// 0 when it parses.
size_t count_syntax_errors(std::string_view text);

}  // namespace tl::py
