// libFuzzer target: the reader of the runtime shim's record files (one rec-<pid>.jsonl), which
// `trainlint run` and `trainlint merge` read from programs that may have crashed mid-write.
// docs/hardening.md.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "analyzer/runtime/records.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  tl::runtime::ProcessRecords r = tl::runtime::parse_records(in, "rec-1234.jsonl");
  (void)r;
  return 0;
}
