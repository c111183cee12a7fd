#include "analyzer/python/syntax.h"

#include <string>

#include "analyzer/core/source_file.h"
#include "analyzer/python/ast.h"

namespace tl::py {

size_t count_syntax_errors(std::string_view text) {
  SourceFile src("<fix>", std::string(text));
  return Tree::parse(src).errors().size();
}

}  // namespace tl::py
