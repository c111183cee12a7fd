// Runs tests/integration/validate_sarif.py (Debian's python3-jsonschema against the official
// SARIF 2.1.0 schema in tests/resources/) on SARIF logs.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/test_support.h"

namespace tl::test {

struct Validation {
  int rc = -1;  // 0 valid, 1 invalid, 2 the validator could not run
  std::string output;
};

inline Validation validate_sarif_files(const std::vector<std::filesystem::path>& files) {
  TempDir t;
  std::string outp = (t.path / "out").string();
  std::string cmd = "/usr/bin/python3 '" + source_dir() + "/tests/integration/validate_sarif.py' '" + source_dir() +
                    "/tests/resources/sarif-schema-2.1.0.json'";
  for (auto& f : files) cmd += " '" + f.string() + "'";
  cmd += " >'" + outp + "' 2>&1 </dev/null";
  int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_file(outp)};
}

inline Validation validate_sarif(const std::string& text) {
  TempDir t;
  auto p = t.path / "log.sarif";
  write_file(p, text);
  return validate_sarif_files({p});
}

inline Validation validate_sarif(const nlohmann::json& log) { return validate_sarif(log.dump(2)); }

}  // namespace tl::test
