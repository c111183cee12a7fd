// The project-context promise: `trainlint F` reports on F exactly what `trainlint ROOT` (the whole
// project) reports on F, whatever the working folder and however F is spelled (relative, `../`,
// absolute, its bare name from its own folder, or standard input with --stdin-filename). The
// findings are compared with their positions, messages, notes and fingerprints.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "support/test_support.h"

namespace fs = std::filesystem;
using tl::test::CliResult;
using tl::test::run_cli;
using tl::test::TempDir;
using tl::test::write_file;

namespace {

// (absolute path, line, column, code, message, fingerprint, notes as "abs:line message")
using Key = std::tuple<std::string, int, int, std::string, std::string, std::string, std::string>;

std::string abs_of(const std::string& path, const fs::path& cwd) {
  return (fs::path(path).is_absolute() ? fs::path(path) : cwd / path).lexically_normal().string();
}

std::set<Key> findings(const CliResult& r, const fs::path& cwd) {
  std::set<Key> out;
  nlohmann::json j;
  EXPECT_NO_THROW(j = nlohmann::json::parse(r.out)) << r.out << r.err;
  if (!j.is_object()) return out;
  for (auto& f : j["findings"]) {
    std::string notes;
    for (auto& n : f["notes"])
      notes += abs_of(n["path"], cwd) + ":" + std::to_string(n["range"]["start"]["line"].get<int>()) + " " +
               n["message"].get<std::string>() + "\n";
    out.insert({abs_of(f["path"], cwd), f["range"]["start"]["line"], f["range"]["start"]["column"], f["code"],
                f["message"], f["fingerprint"], notes});
  }
  return out;
}

std::set<Key> only(const std::set<Key>& all, const std::string& abs) {
  std::set<Key> out;
  for (auto& k : all)
    if (std::get<0>(k) == abs) out.insert(k);
  return out;
}

std::string describe(const std::set<Key>& s) {
  std::string out;
  for (auto& k : s)
    out += "  " + std::get<0>(k) + ":" + std::to_string(std::get<1>(k)) + " " + std::get<3>(k) + " " + std::get<5>(k) +
           "\n";
  return out.empty() ? "  (none)\n" : out;
}

// Lints `root` whole, then every Python file under it alone in several spellings, and expects the
// same findings on that file each time.
void expect_context_equality(const fs::path& root) {
  CliResult whole = run_cli("--format json --exit-zero --select ALL .", root.string());
  ASSERT_TRUE(whole.rc == 0) << whole.err;
  std::set<Key> all = findings(whole, root);
  ASSERT_FALSE(all.empty()) << "the project should have findings";
  size_t cross_file = 0;
  for (auto& k : all)
    if (std::get<6>(k).find(std::get<0>(k) + ":") == std::string::npos && !std::get<6>(k).empty()) ++cross_file;
  EXPECT_GT(cross_file, 0u) << "some findings should depend on another file of the project";

  for (auto& e : fs::recursive_directory_iterator(root)) {
    if (e.path().extension() != ".py") continue;
    std::string abs = e.path().lexically_normal().string();
    std::set<Key> expect = only(all, abs);
    struct Spelling {
      std::string arg;
      fs::path cwd;
    };
    std::vector<Spelling> spellings = {
        {fs::relative(e.path(), root).string(), root},
        {abs, "/"},
        {e.path().filename().string(), e.path().parent_path()},
        {fs::relative(e.path(), root.parent_path()).string(), root.parent_path()},
        {fs::relative(e.path(), root / "scripts").string(), root / "scripts"},
    };
    for (auto& s : spellings) {
      CliResult r = run_cli("--format json --exit-zero --select ALL '" + s.arg + "'", s.cwd.string());
      std::set<Key> got = findings(r, s.cwd);
      EXPECT_EQ(got, expect) << "trainlint " << s.arg << " (in " << s.cwd << ") reports\n"
                             << describe(got) << "and the whole project's run reports\n"
                             << describe(expect);
    }
    // the same file read from standard input, named by --stdin-filename
    std::string rel = fs::relative(e.path(), root).string();
    CliResult r = tl::test::run_cli_stdin("--format json --exit-zero --select ALL --stdin-filename '" + rel + "' -",
                                root.string(), e.path());
    std::set<Key> got = findings(r, root);
    EXPECT_EQ(got, expect) << "standard input as " << rel << " reports\n"
                           << describe(got) << "and the whole project's run reports\n"
                           << describe(expect);
  }
}

// A package whose helpers run every step only because a script in another folder calls them in
// its training loop, through an absolute and a relative import.
void write_layered_project(const fs::path& root) {
  write_file(root / "pyproject.toml", "[project]\nname = \"vision-trainer\"\nversion = \"0.1.0\"\n");
  write_file(root / "trainer" / "__init__.py", "");
  write_file(root / "trainer" / "utils" / "__init__.py", "");
  write_file(root / "trainer" / "utils" / "memory.py", R"(import gc

import torch


def release_memory(model):
    """Called after every optimizer step by the engine."""
    gc.collect()
    torch.cuda.empty_cache()
    return model


def report(loss, step):
    print(f"step {step}: loss {loss.item():.4f}")
)");
  write_file(root / "trainer" / "engine.py", R"(import torch

from .utils.memory import release_memory, report


def train_step(model, optimizer, batch, step):
    inputs, targets = batch
    loss = torch.nn.functional.cross_entropy(model(inputs), targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    release_memory(model)
    report(loss, step)
    return loss
)");
  write_file(root / "scripts" / "train.py", R"(import torch
from torch import nn

from trainer.engine import train_step


def main():
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10)).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for step in range(10_000):
        inputs = torch.randn(128, 32, device="cuda")
        targets = torch.randint(0, 10, (128,), device="cuda")
        train_step(model, optimizer, (inputs, targets), step)


if __name__ == "__main__":
    main()
)");
}

TEST(ContextEquality, LayeredPackageFromEveryWorkingFolder) {
  TempDir t;
  write_layered_project(t.path / "vision");
  expect_context_equality(t.path / "vision");
}

TEST(ContextEquality, MultiFileFixtureProjects) {
  // the rule fixtures whose findings cross files (engine -> callbacks -> memory...)
  for (const char* name : {"TL101-gc-collect-per-step", "TL106-log-per-step", "TL305-tensor-created-then-moved"}) {
    SCOPED_TRACE(name);
    TempDir t;
    fs::path root = t.path / "proj";
    fs::create_directories(root / "scripts");
    fs::copy(fs::path(tl::test::source_dir()) / "tests/fixtures/python" / name, root, fs::copy_options::recursive);
    write_file(root / "pyproject.toml", "");
    expect_context_equality(root);
  }
}

// A folder with its own pyproject.toml inside the project keeps its outer module names: the script
// at the top imports `trainer.engine`, and the run of the whole repository sees the call, from
// any working folder. (`trainlint trainer/utils/memory.py` alone analyses the nested project only:
// see the review notes on nested projects.)
TEST(ContextEquality, NestedProjectKeepsItsOuterModuleNames) {
  TempDir t;
  fs::path root = t.path / "vision";
  write_layered_project(root);
  write_file(root / "trainer" / "pyproject.toml", "[project]\nname = \"trainer\"\n");
  std::string memory = (root / "trainer" / "utils" / "memory.py").lexically_normal().string();
  for (const fs::path& cwd : {root, root / "scripts", fs::path("/")}) {
    std::string arg = cwd == root ? "." : cwd == "/" ? root.string() : "..";
    CliResult r = run_cli("--format json --exit-zero --select TL101 '" + arg + "'", cwd.string());
    std::set<Key> got = only(findings(r, cwd), memory);
    ASSERT_EQ(got.size(), 1u) << "from " << cwd << "\n" << r.out << r.err;
    EXPECT_EQ(std::get<3>(*got.begin()), "TL101");
  }
}

// A monorepo with two services, each its own project, whose train.py started as a copy: both files
// are "train.py" in their project. A finding's fingerprint (the baseline's key, SARIF's
// partialFingerprints) must not depend on whether the other service was linted in the same run.
TEST(ContextEquality, FingerprintsDoNotDependOnTheOtherProjectsOfTheRun) {
  TempDir t;
  fs::path root = t.path / "mono";
  std::string train = tl::test::read_file(fs::path(tl::test::source_dir()) / "examples/train_bad.py");
  for (const char* svc : {"svc_a", "svc_b"}) {
    write_file(root / svc / "pyproject.toml", std::string("[project]\nname = \"") + svc + "\"\n");
    write_file(root / svc / "train.py", train);
  }
  write_file(root / ".trainlint.toml", "");
  std::set<Key> all = findings(run_cli("--format json --exit-zero .", root.string()), root);
  for (const char* svc : {"svc_a", "svc_b"}) {
    std::string abs = (root / svc / "train.py").lexically_normal().string();
    std::set<Key> alone = findings(run_cli(std::string("--format json --exit-zero ") + svc + "/train.py", root.string()), root);
    ASSERT_FALSE(alone.empty());
    EXPECT_EQ(alone, only(all, abs)) << svc << " alone reports\n" << describe(alone) << "and with the other service\n"
                                     << describe(only(all, abs));
  }
}

}  // namespace
