// A C++ program model built from in-memory files, with lookups by call text and line, for the
// C++ model and rule tests (fast path).
#pragma once
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/cpp/model.h"

namespace tl::test {

struct CppBuilt {
  std::vector<std::unique_ptr<SourceFile>> files;
  cpp::Model model;

  uint32_t tu(const std::string& path) const {
    for (auto& t : model.translation_units())
      if (t.path == path) return t.index;
    throw std::runtime_error("no translation unit " + path);
  }
  std::string_view text(const cpp::Site& s) const {
    return model.translation_units()[s.tu].src->slice(s.range.begin, s.range.end);
  }
  // The n-th call (0-based, in source order of the model) in `path` whose text starts with `prefix`.
  const cpp::CallSite& call(const std::string& path, const std::string& prefix, int n = 0) const {
    uint32_t t = tu(path);
    for (auto& c : model.calls())
      if (c.tu == t && text(c).substr(0, prefix.size()) == prefix && n-- == 0) return c;
    throw std::runtime_error("no call " + prefix);
  }
  bool per_step(const std::string& path, const std::string& prefix, int n = 0) const {
    return model.runs_every_step(call(path, prefix, n)).has_value();
  }
  const cpp::Loop& loop_at_line(const std::string& path, uint32_t line) const {
    uint32_t t = tu(path);
    for (auto& l : model.loops())
      if (l.tu == t && l.range.start.line == line) return l;
    throw std::runtime_error("no loop at line " + std::to_string(line));
  }
  const cpp::Variable& var(const std::string& path, const std::string& name, int n = 0) const {
    uint32_t t = tu(path);
    for (auto& v : model.variables())
      if (v.tu == t && v.name == name && n-- == 0) return v;
    throw std::runtime_error("no variable " + name);
  }
};

inline std::unique_ptr<CppBuilt> build_cpp(const std::vector<std::pair<std::string, std::string>>& files) {
  auto b = std::make_unique<CppBuilt>();
  std::vector<const SourceFile*> ptrs;
  for (auto& [path, text] : files) {
    b->files.push_back(std::make_unique<SourceFile>(path, text));
    ptrs.push_back(b->files.back().get());
  }
  b->model = cpp::Model::build(ptrs);
  return b;
}

}  // namespace tl::test
