// libFuzzer target: the configuration loader (`pyproject.toml`'s [tool.trainlint] table, a
// `.trainlint.toml`), every key, type and rule name, as the CLI, the LSP and `trainlint run` read
// them. The first byte picks the file name; the rest is the file. docs/hardening.md.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "analyzer/core/config.h"
#include "rules/registry.h"

namespace {

bool known(std::string_view s) {
  if (s == "ALL" || s == "all") return true;
  for (auto& r : tl::registry())
    if (tl::selector_matches(s, r.code, r.slug)) return true;
  return false;
}

std::string canon(std::string_view s) {
  const tl::RuleEntry* r = tl::find_rule(s);
  return r ? std::string(r->code) : std::string();
}

std::filesystem::path folder() {
  static std::filesystem::path dir = [] {
    char tmpl[] = "/tmp/trainlint-fuzz-config-XXXXXX";
    const char* d = mkdtemp(tmpl);
    return std::filesystem::path(d ? d : "/tmp");
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const char* names[] = {"pyproject.toml", ".trainlint.toml", "ci.toml"};
  std::filesystem::path file = folder() / names[data[0] % 3];
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data + 1), static_cast<std::streamsize>(size - 1));
  }
  std::string error;
  std::optional<tl::Config> c = tl::load_config_file(file, known, canon, &error);
  // a configuration or an error, never both
  if (c && !error.empty()) std::abort();
  // the discovery path reads the same file through the per-folder cache
  tl::ConfigSet set(known, canon);
  std::string init_error;
  if (set.init(data[0] % 3 == 2 ? file.string() : std::string(), false, &init_error)) (void)set.for_dir(folder());
  return 0;
}
