// libFuzzer target: one C++ (LibTorch) file through the fast path (tree-sitter-cpp, the C++ model,
// every C++ rule). docs/hardening.md.
#include "fuzz/lint_one.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  lint_one(data, size, "fuzz/train.cpp");
  return 0;
}
