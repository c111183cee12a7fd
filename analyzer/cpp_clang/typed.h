// The typed C++ front end: Clang libTooling (Debian's libclang-cpp 14, linked as a shared
// library) parses each C++ source file of a run with its real compile command and LibTorch's
// headers, and reads exact types off the AST (at::Tensor vs a module, module holders, `auto`,
// class template instances, typedefs). It builds no model of its own: its facts (analyzer/cpp/
// model.h, TypedFacts) go into the one C++ program model that the fast path's syntax tree
// structures, so every rule reads one model whichever path typed it (docs/cpp.md).
//
// No Clang header is included here: only this directory's .cpp sees them (compiled without RTTI,
// like Debian's LLVM), and the rest of trainlint builds without them.
#pragma once
#include <string>
#include <vector>

#include "analyzer/core/source_file.h"
#include "analyzer/cpp/model.h"

namespace tl::cpp {

struct ClangOptions {
  // -p: a folder holding compile_commands.json. Empty: each file's database is looked for upward
  // from it (compile_commands.json, compile_flags.txt); none found: the default command below.
  std::string compile_db_dir;
  // Where precompiled headers of <torch/torch.h> are kept across runs (created when missing);
  // empty: built for this run in a temporary folder and removed.
  std::string pch_dir;
  unsigned threads = 1;
};

struct ClangMessage {
  std::string path;
  std::string text;
  bool fallback = false;  // the file got no typed facts: the fast path's types alone were used
};

struct ClangResult {
  TypedFacts facts;
  std::vector<ClangMessage> messages;
  std::vector<std::string> include_dirs;  // LibTorch include folders used by the default command
  double pch_ms = 0;                       // building precompiled headers (0: reused or none)
  bool pch_reused = false;
  size_t parsed = 0;                       // source files Clang parsed
};

// The default compile command's LibTorch include folders: $TORCH_INCLUDE (a folder holding
// torch/torch.h, or LibTorch's include/), Debian's libtorch-dev, then the `torch` package of
// `python3`. Empty when none has torch/torch.h.
std::vector<std::string> torch_include_dirs();

// Parses the C++ source files among `files` whose `parse` flag is set (the files a run reports
// on; headers are typed through the sources that include them). Every file of the run is read
// from its SourceFile, so unsaved editor buffers count.
ClangResult typed_facts(const std::vector<const SourceFile*>& files, const std::vector<bool>& parse,
                        const ClangOptions& opts);

}  // namespace tl::cpp
