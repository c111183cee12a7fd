// The typed C++ front end: Clang libTooling (Debian's libclang-cpp 14, linked as a shared
// library into the module trainlint-clang.so, which trainlint loads when a run needs it:
// analyzer/cpp/typed_path.h) parses each C++ source file of a run with its real compile command
// and LibTorch's headers, and reads exact types off the AST (at::Tensor vs a module, module
// holders, `auto`, class template instances, typedefs). It builds no model of its own: its facts (analyzer/cpp/
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
#include "analyzer/cpp/typed_path.h"

namespace tl::cpp {

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
