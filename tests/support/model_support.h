// A program model built from in-memory files, with lookups by path, call text and line, for the
// model's unit tests.
#pragma once
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyzer/python/model.h"

namespace tl::test {

struct BuiltModel {
  py::ProgramModel pm;
  const py::Module& mod(const std::string& path) const {
    for (auto& m : pm.modules())
      if (m->path == path) return *m;
    throw std::runtime_error("no module " + path);
  }
  // The n-th call (0-based) whose source text starts with `prefix`.
  const py::Call& call(const std::string& path, const std::string& prefix, int n = 0) const {
    const py::Module& m = mod(path);
    for (auto& c : m.calls)
      if (m.tree.text(c.node).substr(0, prefix.size()) == prefix && n-- == 0) return c;
    throw std::runtime_error("no call " + prefix);
  }
  bool per_step(const std::string& path, const std::string& prefix, int n = 0) const {
    const py::Call& c = call(path, prefix, n);
    return pm.runs_every_step(mod(path), c.node).has_value();
  }
  py::LoopKind loop_at_line(const std::string& path, uint32_t line) const {
    const py::Module& m = mod(path);
    for (auto& L : m.loops)
      if (m.tree.pos(L.node).line == line) return L.kind;
    throw std::runtime_error("no loop at line " + std::to_string(line));
  }
  // The first identifier named `name` on 1-based line `line`.
  py::NodeId name_at(const std::string& path, uint32_t line, std::string_view name) const {
    const py::Module& m = mod(path);
    for (py::NodeId n = 0; n < m.tree.size(); ++n)
      if (m.tree.is(n, py::K::Identifier) && m.tree.text(n) == name && m.tree.pos(n).line == line) return n;
    throw std::runtime_error("no identifier " + std::string(name));
  }
};

// The model of `files` ({path, text}), built with `threads` threads (2 unless asked).
inline BuiltModel build_model(const std::vector<std::pair<std::string, std::string>>& files, unsigned threads = 2) {
  std::vector<std::unique_ptr<SourceFile>> srcs;
  for (auto& [p, t] : files) srcs.push_back(std::make_unique<SourceFile>(p, t));
  return BuiltModel{py::ProgramModel::build(std::move(srcs), threads)};
}

}  // namespace tl::test
