// The corpus the in-process benchmarks read once: every file trainlint would lint under a folder
// (default: Debian's torch Python tree; TRAINLINT_BENCH_DIR picks another), held in memory.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/core/source_file.h"
#include "analyzer/engine/engine.h"

namespace tl::bench {

struct Corpus {
  std::vector<std::pair<std::string, std::string>> files;  // path, text
  size_t bytes = 0;

  // Fresh SourceFiles of the `.py` files (or of every file), as the engine takes them.
  std::vector<std::unique_ptr<SourceFile>> sources(bool python_only = false) const {
    std::vector<std::unique_ptr<SourceFile>> out;
    out.reserve(files.size());
    for (auto& [p, t] : files)
      if (!python_only || (p.size() > 3 && p.compare(p.size() - 3, 3, ".py") == 0))
        out.push_back(std::make_unique<SourceFile>(p, t));
    return out;
  }
};

inline const Corpus& corpus() {
  static Corpus c = [] {
    Corpus c;
    const char* env = std::getenv("TRAINLINT_BENCH_DIR");
    std::string dir = env ? env : "/usr/lib/python3/dist-packages/torch";
    std::vector<FileMessage> msgs;
    bool io = false;
    for (auto& p : discover_files({dir}, msgs, io)) {
      std::ifstream in(p, std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      c.bytes += ss.str().size();
      c.files.emplace_back(p, ss.str());
    }
    std::fprintf(stderr, "corpus: %s: %zu files, %.1f MB\n", dir.c_str(), c.files.size(), c.bytes / 1e6);
    return c;
  }();
  return c;
}

}  // namespace tl::bench
