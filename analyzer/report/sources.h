// The analysed SourceFile of each path in a LintResult, for reporters: the text reporter's source
// excerpt, and a notebook's positions read as cell and line in the cell (SourceFile::cell_line).
#pragma once
#include <string>
#include <unordered_map>

#include "analyzer/core/engine.h"

namespace tl::report {

class SourceIndex {
 public:
  explicit SourceIndex(const LintResult& res) {
    if (!res.model) return;
    for (auto& m : res.model->modules()) by_path_.emplace(m->path, m->src.get());
  }
  // Null when `path` was not analysed (a file that could not be read, a skipped notebook).
  const SourceFile* find(const std::string& path) const {
    auto it = by_path_.find(path);
    return it == by_path_.end() ? nullptr : it->second;
  }

 private:
  std::unordered_map<std::string, const SourceFile*> by_path_;
};

}  // namespace tl::report
