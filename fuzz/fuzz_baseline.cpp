// libFuzzer target: the baseline reader (`--baseline FILE`, the `baseline` key). A baseline it
// accepts must survive a round trip: written back (`baseline_text`) and read again, it holds the
// same entries. docs/hardening.md.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#include "analyzer/core/baseline.h"

namespace {

std::string file_path() {
  static std::string path = [] {
    char tmpl[] = "/tmp/trainlint-fuzz-baseline-XXXXXX";
    const char* d = mkdtemp(tmpl);
    return std::string(d ? d : "/tmp") + "/baseline.json";
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = file_path();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  std::string error;
  std::optional<tl::Baseline> b = tl::read_baseline(path, &error);
  if (!b) return 0;
  // round trip: what it writes, it reads back the same (sorted as baseline_text sorts)
  std::string text = tl::baseline_text(b->entries);
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
  }
  std::optional<tl::Baseline> again = tl::read_baseline(path, &error);
  if (!again || again->entries.size() != b->entries.size()) std::abort();
  if (tl::baseline_text(again->entries) != text) std::abort();
  size_t counted = 0;
  for (auto& [fp, n] : again->by_fingerprint) counted += n;
  if (counted != again->entries.size()) std::abort();
  return 0;
}
