// Bad input found by review: each gets a clear message or a well-formed report, never a crash or
// lost output.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "support/test_support.h"

namespace fs = std::filesystem;
using tl::test::CliResult;
using tl::test::kTrainGc;
using tl::test::run_cli;
using tl::test::run_cli_stdin;
using tl::test::TempDir;
using tl::test::write_file;

namespace {


// A file name that is not UTF-8 (Latin-1 "café.py"): the JSON report still comes out, with the
// byte replaced, and the exit status is the findings' one.
TEST(Robustness, JsonReportOfAFileNamedInLatin1) {
  TempDir t;
  write_file(t.path / "caf\xe9.py", kTrainGc);
  CliResult r = run_cli("--select TL101 --format json \"$(printf 'caf\\351.py')\"", t.path.string());
  EXPECT_EQ(r.rc, 1) << r.err;
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(r.out)) << r.out << r.err;
  ASSERT_EQ(j["findings"].size(), 1u);
  EXPECT_EQ(j["findings"][0]["code"], "TL101");
  EXPECT_EQ(j["findings"][0]["path"], "caf\xef\xbf\xbd.py");  // U+FFFD
}

TEST(Robustness, JsonReportOfAMissingPathNamedInLatin1) {
  TempDir t;
  CliResult r = run_cli("--format json \"$(printf 'gone\\351.py')\"", t.path.string());
  EXPECT_EQ(r.rc, 2) << r.err;
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(r.out)) << r.out << r.err;
  ASSERT_EQ(j["messages"].size(), 1u);
  EXPECT_EQ(j["messages"][0]["kind"], "error");
}

// pre-commit passes repository-relative paths, an editor absolute ones, a user `../`: one file in
// several spellings is linted once, so its findings are not reported (and counted) twice.
TEST(Robustness, OneFileInSeveralSpellingsIsReportedOnce) {
  TempDir t;
  fs::path proj = t.path / "proj";
  write_file(proj / "train.py", kTrainGc);
  std::string abs = (proj / "train.py").string();
  CliResult r = run_cli("--select TL101 --format json train.py ./train.py '" + abs + "' ../proj/train.py .",
                        proj.string());
  EXPECT_EQ(r.rc, 1) << r.err;
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(r.out)) << r.out;
  EXPECT_EQ(j["summary"]["files"], 1);
  ASSERT_EQ(j["findings"].size(), 1u) << r.out;
  EXPECT_EQ(j["findings"][0]["path"], "train.py");
}

// `--fix -` is a filter: standard output is the buffer, fixed or not. A buffer trainlint does not
// fix (a notebook) or cannot read (not UTF-8) still comes back unchanged, and the report goes to
// stderr; otherwise an editor would replace the buffer with the report, or with nothing.
TEST(Robustness, FixOnStandardInputAlwaysEchoesTheBuffer) {
  TempDir t;
  fs::path nb = fs::path(tl::test::source_dir()) / "tests/fixtures/notebooks/train_cifar.ipynb";
  CliResult r = run_cli_stdin("--fix - --stdin-filename train_cifar.ipynb", t.path, nb);
  EXPECT_EQ(r.out, tl::test::read_file(nb));
  EXPECT_NE(r.err.find("not fixed"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("[TL201 dataloader-no-workers]"), std::string::npos) << r.err;

  write_file(t.path / "latin1.py", "# caf\xe9\nimport torch\n");
  r = run_cli_stdin("--fix - --stdin-filename latin1.py", t.path, t.path / "latin1.py");
  EXPECT_EQ(r.out, "# caf\xe9\nimport torch\n");
  EXPECT_NE(r.err.find("not valid UTF-8"), std::string::npos) << r.err;

  write_file(t.path / "train.py", kTrainGc);
  r = run_cli_stdin("--fix - --select TL101 --stdin-filename train.py", t.path, t.path / "train.py");
  EXPECT_EQ(r.out, kTrainGc);
  EXPECT_EQ(r.rc, 1);
}

// `trainlint run` on a script whose name is not UTF-8: the plan, the report and the trace are
// JSON; the program must still run and the report come out (it used to abort before starting it).
TEST(Robustness, RunOnAScriptNamedInLatin1) {
  TempDir t;
  write_file(t.path / "entra\xeenement.py", R"(import gc

import torch

model = torch.nn.Linear(16, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    loss = model(torch.randn(8, 16)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    gc.collect()
print("trained")
)");
  CliResult r = run_cli("run --format json --trace trace.json -- /usr/bin/python3 \"$(printf 'entra\\356nement.py')\"",
                        t.path.string());
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "trained\n");
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(r.err)) << r.err;
  EXPECT_EQ(j["summary"]["files"], 1) << r.err;
  nlohmann::json trace;
  EXPECT_NO_THROW(trace = nlohmann::json::parse(tl::test::read_file(t.path / "trace.json")));
  EXPECT_FALSE(trace.is_null());
}

// Findings that cannot be written (a full disk) are an error, not a silent exit 1 or 0.
TEST(Robustness, StandardOutputThatCannotBeWrittenIsAnError) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  TempDir t;
  write_file(t.path / "train.py", kTrainGc);
  std::string errp = (t.path / "err").string();
  for (const char* format : {"text", "json", "sarif"}) {
    std::string cmd = "cd '" + t.path.string() + "' && '" + tl::test::binary() + "' --select TL101 --format " + format +
                      " train.py >/dev/full 2>'" + errp + "'";
    int status = std::system(cmd.c_str());
    EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 2) << format;
    EXPECT_NE(tl::test::read_file(errp).find("cannot write the report"), std::string::npos) << format;
  }
}

// An editor pipes every buffer through `--force-exclude - --stdin-filename PATH`: a file the
// configuration excludes, or .gitignore ignores, gets no findings, as a named path would not.
TEST(Robustness, ForceExcludeAppliesToTheStandardInputName) {
  TempDir t;
  fs::path proj = t.path / "proj";
  write_file(proj / "pyproject.toml", "[tool.trainlint]\nextend-exclude = [\"vendor\"]\n");
  write_file(proj / ".gitignore", "generated/\n");
  write_file(proj / "train.py", kTrainGc);
  ASSERT_EQ(std::system(("git init -q '" + proj.string() + "'").c_str()), 0);
  for (const char* name : {"vendor/train.py", "generated/train.py"}) {
    CliResult r = run_cli_stdin(std::string("--force-exclude --select TL101 - --stdin-filename ") + name, proj,
                                proj / "train.py");
    EXPECT_EQ(r.rc, 0) << name << r.out;
    EXPECT_EQ(r.out, "") << name;
    // without --force-exclude the name is linted, as a path given explicitly is
    r = run_cli_stdin(std::string("--select TL101 - --stdin-filename ") + name, proj, proj / "train.py");
    EXPECT_EQ(r.rc, 1) << name << r.out << r.err;
  }
  CliResult r = run_cli_stdin("--force-exclude --select TL101 - --stdin-filename train.py", proj, proj / "train.py");
  EXPECT_EQ(r.rc, 1) << r.out << r.err;
}

}  // namespace
