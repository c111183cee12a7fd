// libFuzzer target: `trainlint merge`, the reports of several nodes of one job combined. The input
// is the nodes' `trainlint run --format json` documents separated by NUL bytes; documents that are
// not JSON are dropped, as `merge_command` refuses them before merging. The merged document is then
// written both ways (text and JSON). docs/hardening.md.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analyzer/runtime/merge.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string in(reinterpret_cast<const char*>(data), size);
  std::vector<tl::runtime::NodeReport> nodes;
  size_t start = 0;
  while (start <= in.size() && nodes.size() < 16) {
    size_t end = in.find('\0', start);
    if (end == std::string::npos) end = in.size();
    tl::runtime::NodeReport n;
    n.file = "node-" + std::to_string(nodes.size()) + ".json";
    n.doc = nlohmann::json::parse(in.begin() + static_cast<std::ptrdiff_t>(start), in.begin() + static_cast<std::ptrdiff_t>(end),
                                  nullptr, false);
    if (!n.doc.is_discarded()) nodes.push_back(std::move(n));
    start = end + 1;
  }
  tl::runtime::MergeResult r = tl::runtime::merge_reports(nodes);
  if (!r.error.empty()) return 0;
  std::ostringstream text;
  tl::runtime::write_merge_text(text, r.doc);
  std::string json_text = r.doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  (void)json_text;
  return 0;
}
