// trainlint-clang.so's one exported symbol: the typed path's entry points, for the loader in
// analyzer/cpp/typed_path.cpp. Everything else in the module is hidden.
#include "analyzer/cpp_clang/typed.h"

extern "C" __attribute__((visibility("default"))) const tl::cpp::TypedPathModule* trainlint_typed_path_module() {
  static const tl::cpp::TypedPathModule m = [] {
    tl::cpp::TypedPathModule x;
    x.abi = tl::cpp::kTypedPathAbi;
    tl::cpp::typed_path_sizes(x.sizes);
    x.torch_include_dirs = &tl::cpp::torch_include_dirs;
    x.typed_facts = &tl::cpp::typed_facts;
    return x;
  }();
  return &m;
}
