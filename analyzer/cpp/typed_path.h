// The typed C++ path as the rest of trainlint sees it: its options and results, and the module
// that holds it. Clang's libraries (libclang-cpp and libLLVM, about 60 MB mapped and 0.1 s of
// start-up: relocations and static constructors) are not linked into trainlint: the typed front
// end (analyzer/cpp_clang) is built as a separate module, trainlint-clang.so, loaded with dlopen
// the first time a run takes the typed path. A run that does not (every Python run, every
// pre-commit hook on the fast path) never maps them (docs/cpp.md "Where the typed path lives").
#pragma once
#include <cstdint>
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

// What trainlint-clang.so hands over (its one exported symbol, kTypedPathSymbol, returns it).
// The module and the executable are built from the same sources and exchange C++ objects, so the
// module checks nothing itself: the loader compares `abi` and the sizes of the exchanged types
// with its own and refuses a module from another build.
struct TypedPathModule {
  uint32_t abi = 0;
  uint32_t sizes[4] = {};
  std::vector<std::string> (*torch_include_dirs)() = nullptr;
  ClangResult (*typed_facts)(const std::vector<const SourceFile*>& files, const std::vector<bool>& parse,
                             const ClangOptions& opts) = nullptr;
};

constexpr uint32_t kTypedPathAbi = 1;  // bump when TypedPathModule or the exchanged types change
constexpr const char* kTypedPathSymbol = "trainlint_typed_path_module";
constexpr const char* kTypedPathFile = "trainlint-clang.so";
inline void typed_path_sizes(uint32_t out[4]) {
  out[0] = sizeof(ClangOptions);
  out[1] = sizeof(ClangResult);
  out[2] = sizeof(TypedFile);
  out[3] = sizeof(SourceFile);
}

// The typed path's module, loaded once per process (thread-safe): from $TRAINLINT_CLANG_MODULE
// when set, else trainlint-clang.so beside the executable (the build tree), else in the installed
// private library folder (`lib/trainlint/`, relative to the executable). Null when it is not
// there or cannot be loaded, with `why` saying where it looked or what failed.
const TypedPathModule* typed_path_module(std::string* why);

// Which module a run would load (its path, size and modification time; nothing is loaded), for the
// on-disk cache's key: a run entry made with one module is not answered for another.
std::string typed_path_module_identity();

}  // namespace tl::cpp
