// libFuzzer target: one Python file through the whole engine (parse, model, links, every rule,
// suppressions, fingerprints). docs/hardening.md.
#include "fuzz/lint_one.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  lint_one(data, size, "fuzz/train.py");
  return 0;
}
