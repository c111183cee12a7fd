// What the engine fuzz targets share: one in-memory file named `name` (its extension picks the
// front end) linted with every rule, as `trainlint --select ALL` would.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "analyzer/engine/engine.h"

inline void lint_one(const uint8_t* data, size_t size, const char* name) {
  std::vector<std::unique_ptr<tl::SourceFile>> files;
  files.push_back(std::make_unique<tl::SourceFile>(name, std::string(reinterpret_cast<const char*>(data), size)));
  tl::LintOptions opts;
  opts.select = {"ALL"};
  opts.threads = 1;
  tl::LintResult r = tl::lint_sources(std::move(files), opts);
  (void)r;
}
