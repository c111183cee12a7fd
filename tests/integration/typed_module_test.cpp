// The typed C++ path lives in a module (trainlint-clang.so) that trainlint loads with dlopen when a
// run takes that path (analyzer/cpp/typed_path.h): Clang's libraries are not mapped by any other
// run, and a missing or foreign module means the fast path with a warning, never a failure.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "support/test_support.h"

namespace fs = std::filesystem;
using namespace tl;
using namespace tl::test;

namespace {

bool maps_clang() {
  std::string maps = read_file("/proc/self/maps");
  return maps.find("libclang-cpp") != std::string::npos || maps.find("libLLVM") != std::string::npos;
}

}  // namespace

// This test program links everything the trainlint executable links but the CLI; a Python and a
// C++ run on the fast path must leave Clang unmapped (it costs 0.1 s and 60 MB when linked).
TEST(TypedModule, FastPathRunsNeverMapClang) {
  ASSERT_FALSE(maps_clang()) << "a library of trainlint links libclang-cpp or libLLVM";
  TempDir t;
  write_file(t.path / "train.py", "import gc\nfor x in loader:\n    loss = model(x)\n    loss.backward()\n    opt.step()\n    gc.collect()\n");
  write_file(t.path / "main.cpp", "#include <torch/torch.h>\nint main() { torch::Tensor t = torch::ones({2}); return 0; }\n");
  LintOptions o;
  o.cpp_fast_only = true;
  LintResult r = lint_paths({(t.path / "train.py").string(), (t.path / "main.cpp").string()}, o);
  EXPECT_EQ(r.files_analysed, 2u);
  EXPECT_FALSE(maps_clang());
}

// A module that is missing, is not a shared object, or is another program's library: the run
// still reports what the fast path finds, says why in one warning, and exits as without --clang.
TEST(TypedModule, MissingOrForeignModuleFallsBackToTheFastPath) {
  const std::string file = source_dir() + "/examples/cpp/train_bad.cpp";
  CliResult fast = run_cli("--no-clang --no-cache --format json '" + file + "'");
  ASSERT_EQ(fast.rc, 1) << fast.err;  // the example has findings
  TempDir t;
  write_file(t.path / "not-a-module.so", "this is not an ELF file\n");
  struct Case {
    std::string module, says;
  };
  std::vector<Case> cases = {
      {(t.path / "absent" / "trainlint-clang.so").string(), "cannot load"},
      {(t.path / "not-a-module.so").string(), "cannot load"},
  };
  // a real shared object of this build that is not the typed path
  fs::path shim = fs::path(binary()).parent_path() / "libtrainlint_shim.so";
  if (fs::exists(shim)) cases.push_back({shim.string(), "is not the typed C++ path of this trainlint build"});
  const nlohmann::json fast_json = nlohmann::json::parse(fast.out);
  for (auto& c : cases) {
    CliResult r = run_cli("--clang --no-cache --format json '" + file + "'", source_dir(), "/dev/null",
                          "TRAINLINT_CLANG_MODULE='" + c.module + "' ");
    EXPECT_EQ(r.rc, fast.rc) << c.module << "\n" << r.err;
    nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_TRUE(j["findings"] == fast_json["findings"]) << c.module;
    ASSERT_EQ(j["messages"].size(), 1u) << j["messages"].dump();
    std::string msg = j["messages"][0]["message"].get<std::string>();
    EXPECT_NE(msg.find(c.says), std::string::npos) << msg;
    EXPECT_NE(msg.find("C++ files were analysed by the fast path (--clang asks for the typed path)"),
              std::string::npos)
        << msg;
  }
  // the text output names the tool where a message has no file
  CliResult text = run_cli("--clang --no-cache '" + file + "'", source_dir(), "/dev/null",
                           "TRAINLINT_CLANG_MODULE='" + cases[0].module + "' ");
  EXPECT_EQ(text.err.rfind("trainlint: warning: cannot load ", 0), 0u) << text.err;
}
