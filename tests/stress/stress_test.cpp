// Stress: inputs at the scale and in the states a monorepo or a broken checkout hands a linter
// (issue "Speed at scale and hardening"). Each drives the built binary as users run it and checks
// that it ends with a documented exit code, says what happened to the odd input, and still reports
// the findings of everything else. Other bad input (syntax errors, binary and non-UTF-8 files, a
// 20 MB file, symlink loops, FIFOs, paths in Latin-1) is in tests/integration.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "support/test_support.h"

namespace fs = std::filesystem;
using tl::test::CliResult;
using tl::test::run_cli;
using tl::test::TempDir;
using tl::test::write_file;

namespace {

bool contains(const std::string& s, const std::string& sub) { return s.find(sub) != std::string::npos; }

// A training script whose step loop calls gc.collect(): TL101 on its last line.
const char* const kLoop =
    "import gc\n\n\ndef train(model, loader, opt):\n    for batch in loader:\n        loss = model(batch)\n"
    "        loss.backward()\n        opt.step()\n        gc.collect()\n";

size_t count_code(const nlohmann::json& j, const std::string& code) {
  size_t n = 0;
  for (auto& f : j["findings"]) n += f["code"] == code;
  return n;
}

TEST(Stress, AHundredThousandSmallFiles) {
  TempDir d;
  size_t flagged = 0;
  for (int i = 0; i < 100000; ++i) {
    fs::path p = d.path / ("pkg" + std::to_string(i / 1000)) / ("m" + std::to_string(i % 1000) + ".py");
    if (i % 997 == 0) {
      write_file(p, kLoop);
      ++flagged;
    } else {
      write_file(p, "import torch\n\n\ndef f" + std::to_string(i) + "(x):\n    return torch.relu(x) * " +
                        std::to_string(i % 13) + "\n");
    }
  }
  CliResult r = run_cli("--format json --select TL101 .", d.path.string());
  ASSERT_EQ(r.rc, 1) << r.err.substr(0, 2000);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["summary"]["files"], 100000);
  EXPECT_EQ(count_code(j, "TL101"), flagged);
  EXPECT_EQ(r.err, "");
}

TEST(Stress, FiveThousandDeepBlocksAndExpressions) {
  TempDir d;
  const int n = 5000;
  // blocks: CPython itself refuses more than 100 nested blocks; a syntax error, no crash
  std::string blocks = "import gc\n";
  for (int i = 0; i < n; ++i) blocks += std::string(i, ' ') + "if x:\n";
  blocks += std::string(n, ' ') + "gc.collect()\n";
  write_file(d.path / "deep_blocks.py", blocks);
  // expressions tree-sitter parses: every walk of the tree, the model and the rules meets them
  std::string e = "import torch\n";
  e += "a = " + std::string(n, '(') + "1" + std::string(n, ')') + "\n";
  e += "b = " + std::string(n, '[') + std::string(n, ']') + "\n";
  std::string calls;
  for (int i = 0; i < n; ++i) calls += "f(";
  e += "c = " + calls + "x" + std::string(n, ')') + "\n";
  e += "d = x";
  for (int i = 0; i < n; ++i) e += " + x";
  e += "\ne = " + [&] {
    std::string s;
    for (int i = 0; i < n; ++i) s += "not ";
    return s;
  }() + "x\n";
  e += "g = x";
  for (int i = 0; i < n; ++i) e += ".a";
  e += "\nh = " + [&] {
    std::string s = "x";
    for (int i = 0; i < n; ++i) s = "(lambda: " + s + ")";
    return s;
  }() + "\n";
  write_file(d.path / "deep_exprs.py", e + "\n\n" + kLoop);
  // C++: nested blocks and parentheses
  write_file(d.path / "deep.cpp", "int main() {\n" + std::string(n, '{') + std::string(n, '}') + "\n  int x = " +
                                       std::string(n, '(') + "1" + std::string(n, ')') + ";\n  return x;\n}\n");
  write_file(d.path / "train.py", kLoop);
  for (const char* fmt : {"text", "json", "sarif"}) {
    CliResult r = run_cli(std::string("--format ") + fmt + " --select TL101 .", d.path.string());
    EXPECT_EQ(r.rc, 1) << fmt << ": " << r.err;
    // the syntax error, located (in the report's messages for the machine formats)
    const std::string& where = std::string(fmt) == "text" ? r.err : r.out;
    EXPECT_TRUE(contains(where, "deep_blocks.py")) << where.substr(0, 2000);
    EXPECT_TRUE(contains(where, "syntax error")) << where.substr(0, 2000);
    EXPECT_FALSE(contains(r.err, "deep_exprs.py")) << r.err;  // parsed, no complaint
    if (std::string(fmt) == "json") {
      auto j = nlohmann::json::parse(r.out);
      EXPECT_EQ(count_code(j, "TL101"), 2u) << r.out;  // train.py and the loop after the deep expressions
    }
  }
}

TEST(Stress, AFiftyMegabyteFile) {
  TempDir d;
  std::string text = "import gc\nimport torch\nimport torch.nn as nn\n";
  for (int i = 0; text.size() < (50u << 20); ++i) {
    std::string k = std::to_string(i);
    text += "\n\nclass Block" + k + "(nn.Module):\n    def __init__(self, dim=64):\n        super().__init__()\n"
            "        self.fc = nn.Linear(dim, dim)\n\n    def forward(self, x):\n        return torch.relu(self.fc(x))\n"
            "\n\ndef evaluate_" + k + "(model, loader):\n    with torch.no_grad():\n        return sum(model(x).sum() for x in loader)\n";
  }
  text += "\n\n";
  size_t loop_line = static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  text += kLoop;
  write_file(d.path / "generated.py", text);
  CliResult r = run_cli("--format json --select TL101 generated.py", d.path.string());
  ASSERT_EQ(r.rc, 1) << r.err;
  EXPECT_EQ(r.err, "");  // analysed, not skipped
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(count_code(j, "TL101"), 1u);
  EXPECT_EQ(j["findings"][0]["range"]["start"]["line"], loop_line + 8) << "gc.collect() is the loop's 9th line";
}

TEST(Stress, PermissionDeniedFilesAndFoldersForAnUnprivilegedUser) {
  // Root reads every file whatever its mode, so the case runs trainlint as `nobody`.
  if (geteuid() != 0 && access("/usr/bin/setpriv", X_OK) != 0) GTEST_SKIP() << "needs root and setpriv, or non-root";
  if (geteuid() == 0 && access("/usr/bin/setpriv", X_OK) != 0) GTEST_SKIP() << "root without util-linux setpriv";
  TempDir d;
  fs::path root = d.path / "proj";
  write_file(root / "train.py", kLoop);
  write_file(root / "locked/inner.py", kLoop);
  write_file(root / "secret.py", kLoop);
  fs::permissions(d.path, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
  for (const fs::path& p : {root, root / "locked"})
    fs::permissions(p, fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(root / "train.py", fs::perms::owner_read | fs::perms::owner_write | fs::perms::others_read);
  chmod((root / "locked").c_str(), 0);
  chmod((root / "secret.py").c_str(), 0);
  std::string as = geteuid() == 0 ? "/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups " : "";
  fs::path out = d.path / "out", err = d.path / "err";
  std::string cmd = "cd '" + root.string() + "' && " + as + "'" + tl::test::binary() + "' --select TL101 . >'" +
                    out.string() + "' 2>'" + err.string() + "'";
  int status = std::system(cmd.c_str());
  int rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::string o = tl::test::read_file(out), e = tl::test::read_file(err);
  chmod((root / "locked").c_str(), 0755);
  EXPECT_EQ(rc, 2) << e;  // a file that cannot be read is an error
  EXPECT_TRUE(contains(e, "locked: warning: skipped folder: Permission denied")) << e;
  EXPECT_TRUE(contains(e, "secret.py: error: cannot read: Permission denied")) << e;
  EXPECT_TRUE(contains(o, "train.py:9:9: warning: ")) << o;
  EXPECT_FALSE(contains(o, "inner.py")) << o;
}

TEST(Stress, AFileThatDisappearsBeforeItIsRead) {
  TempDir d;
  write_file(d.path / "train.py", kLoop);
  write_file(d.path / "gone.py", kLoop);
  fs::create_symlink("gone.py", d.path / "link.py");
  fs::remove(d.path / "gone.py");  // the link's target went away after the checkout listed it
  CliResult r = run_cli("--select TL101 .", d.path.string());
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "link.py: warning: skipped: No such file or directory")) << r.err;
  EXPECT_TRUE(contains(r.out, "train.py:9:9: warning: ")) << r.out;
  // named on the command line, it is an error
  CliResult e = run_cli("--select TL101 link.py train.py", d.path.string());
  EXPECT_EQ(e.rc, 2) << e.err;
  EXPECT_TRUE(contains(e.err, "link.py: error: cannot read: ")) << e.err;
  EXPECT_TRUE(contains(e.out, "train.py:9:9: warning: ")) << e.out;
}

// A limit on address space (`ulimit -v`, common on shared clusters): without one, each analysis
// thread reserves 8 GiB of address space for its parses (the parse arena); under one, the parses
// use malloc, so that the run keeps the room it needs for its threads' stacks and malloc's heaps
// (ranges of a quarter of a 3 GB limit made malloc fail at -j 4). Under every limit the run gives
// the findings it gives without one.
TEST(Stress, ALimitOnAddressSpaceLeavesTheRunRoom) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer's shadow memory does not fit under a limit on address space";
#else
  const std::string args = "--no-cache -j 4 --format json tests/fixtures/python";
  CliResult free_run = run_cli(args);
  ASSERT_EQ(free_run.rc, 1) << free_run.err.substr(0, 2000);
  ASSERT_GT(count_code(nlohmann::json::parse(free_run.out), "TL101"), 3u);
  for (const char* kb : {"3000000", "6000000", "20000000"}) {
    CliResult r = run_cli(args, tl::test::source_dir(), "/dev/null", std::string("ulimit -v ") + kb + " && ");
    EXPECT_EQ(r.rc, 1) << kb << " KB: " << r.err.substr(0, 2000);
    auto at = std::mismatch(r.out.begin(), r.out.end(), free_run.out.begin(), free_run.out.end());
    EXPECT_TRUE(r.out == free_run.out) << kb << " KB: the output differs at byte " << (at.first - r.out.begin())
                                       << ": " << std::string(at.first, std::min(at.first + 300, r.out.end()))
                                       << "\nwithout a limit: "
                                       << std::string(at.second, std::min(at.second + 300, free_run.out.end()));
    EXPECT_FALSE(contains(r.err, "out of memory")) << kb << " KB: " << r.err.substr(0, 2000);
  }
#endif
}


// Under limits on address space too small for the run as trainlint tunes it, and at thread
// counts whose stacks alone would not fit: the findings of a run with room, or exit status 2 with
// a message that says memory or threads ran out; never a signal (tree-sitter's default allocator
// aborted, and the Python grammar's scanner dereferenced a refused block).
TEST(Stress, TightLimitsOnAddressSpaceEndInResultsOrAClearError) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer's shadow memory does not fit under a limit on address space";
#else
  const std::string dir = "tests/fixtures/python";
  CliResult free_run = run_cli("--no-cache -j 2 --format json " + dir);
  ASSERT_EQ(free_run.rc, 1) << free_run.err.substr(0, 2000);
  int completed = 0;
  for (const char* kb : {"100000", "150000", "250000"}) {
    for (const char* jobs : {"1", "2", "16"}) {
      CliResult r = run_cli(std::string("--no-cache -j ") + jobs + " --format json " + dir, tl::test::source_dir(),
                            "/dev/null", std::string("ulimit -v ") + kb + " && ");
      const std::string what = std::string(kb) + " KB, -j " + jobs + ": rc " + std::to_string(r.rc) + ": ";
      ASSERT_TRUE(r.rc == 1 || r.rc == 2) << what << r.err.substr(0, 2000);
      if (r.rc == 1) {
        ++completed;
        EXPECT_TRUE(r.out == free_run.out) << what << "the findings differ from a run without a limit";
      } else {
        EXPECT_TRUE(contains(r.err, "out of memory") || contains(r.err, "cannot start an analysis thread"))
            << what << r.err.substr(0, 2000);
        EXPECT_FALSE(contains(r.err, "internal error")) << what << r.err.substr(0, 2000);
      }
    }
  }
  // with the malloc tuning left out under a limit, smaller stacks and one heap, a run of one or
  // two threads fits in 150 MB (it needed about 250 MB tuned); -j 16 takes the threads whose
  // stacks fit in an eighth of the limit (4 at 150 MB), and completes too
  EXPECT_GE(completed, 7);
  for (const char* jobs : {"2", "16"}) {
    CliResult r = run_cli(std::string("--no-cache -j ") + jobs + " --format json " + dir, tl::test::source_dir(),
                          "/dev/null", "ulimit -v 150000 && ");
    EXPECT_EQ(r.rc, 1) << "-j " << jobs << ": " << r.err.substr(0, 2000);
  }
#endif
}

// How many threads a run takes: what -j asks, fewer under a limit on address space; by default
// the CPUs the process may run on (its affinity mask; a cgroup's CPU quota is unit-tested).
TEST(Stress, ThreadsFollowTheLimitOnAddressSpaceAndTheCpusAllowed) {
  const std::string args = "--no-cache --format json tests/fixtures/python/TL101-gc-collect-per-step.py";
  auto threads_line = [](const std::string& err) {
    size_t at = err.find("trainlint: threads ");
    return at == std::string::npos ? std::string() : err.substr(at, err.find('\n', at) - at);
  };
  CliResult free_run = run_cli("-j 16 " + args, tl::test::source_dir(), "/dev/null", "TRAINLINT_TIMING=1 ");
  EXPECT_EQ(threads_line(free_run.err), "trainlint: threads 16 (-j 16)") << free_run.err.substr(0, 2000);
#if !defined(__SANITIZE_ADDRESS__)
  CliResult limited =
      run_cli("-j 16 " + args, tl::test::source_dir(), "/dev/null", "ulimit -v 150000 && TRAINLINT_TIMING=1 ");
  EXPECT_EQ(threads_line(limited.err), "trainlint: threads 4 (-j 16)") << limited.err.substr(0, 2000);
  EXPECT_EQ(limited.out, free_run.out);
#endif
  if (std::system("taskset -c 0 true >/dev/null 2>&1") == 0) {
    CliResult one_cpu = run_cli(args, tl::test::source_dir(), "/dev/null", "TRAINLINT_TIMING=1 taskset -c 0 ");
    EXPECT_EQ(threads_line(one_cpu.err), "trainlint: threads 1 (default)") << one_cpu.err.substr(0, 2000);
    EXPECT_EQ(one_cpu.out, free_run.out);
  }
}

}  // namespace
