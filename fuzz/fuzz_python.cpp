// libFuzzer target: one Python file through the whole engine (parse, model, links, every rule,
// suppressions, fingerprints) and the JSON reporter's input. docs/hardening.md.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "analyzer/engine/engine.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::unique_ptr<tl::SourceFile>> files;
  files.push_back(std::make_unique<tl::SourceFile>("fuzz/train.py", std::string(reinterpret_cast<const char*>(data), size)));
  tl::LintOptions opts;
  opts.select = {"ALL"};
  opts.threads = 1;
  tl::LintResult r = tl::lint_sources(std::move(files), opts);
  (void)r;
  return 0;
}
