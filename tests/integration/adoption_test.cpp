// Adopting trainlint in pre-commit and CI, through the binary: files linted in their project's
// context, standard input, .gitignore, configuration files, suppressions, --add-noqa,
// baselines and --diff-base.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>

#include "support/test_support.h"

namespace fs = std::filesystem;
using nlohmann::json;
using tl::test::CliResult;
using tl::test::read_file;
using tl::test::run_cli;
using tl::test::TempDir;
using tl::test::write_file;

namespace {

bool contains(const std::string& s, const std::string& p) { return s.find(p) != std::string::npos; }

CliResult sh(const std::string& cmdline, const fs::path& cwd) {
  TempDir t;
  std::string outp = (t.path / "out").string(), errp = (t.path / "err").string();
  std::string cmd = "cd '" + cwd.string() + "' && " + cmdline + " >'" + outp + "' 2>'" + errp + "' </dev/null";
  int status = std::system(cmd.c_str());
  CliResult r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(outp);
  r.err = read_file(errp);
  return r;
}

// trainlint with `input` on standard input.
CliResult with_stdin(const std::string& args, const std::string& input, const fs::path& cwd) {
  TempDir t;
  write_file(t.path / "in", input);
  return tl::test::run_cli_stdin(args, cwd, t.path / "in");
}

json parse(const std::string& s) {
  json j;
  EXPECT_NO_THROW(j = json::parse(s)) << s;
  return j;
}

// "path:line code" of every finding of a JSON document, restricted to `path` when given.
std::set<std::string> where(const json& doc, const std::string& path = "") {
  std::set<std::string> s;
  for (auto& f : doc["findings"])
    if (path.empty() || f["path"] == path)
      s.insert(f["path"].get<std::string>() + ":" + std::to_string(f["range"]["start"]["line"].get<int>()) + " " +
               f["code"].get<std::string>());
  return s;
}

void git(const fs::path& repo, const std::string& args) {
  auto r = sh("git -c user.name=t -c user.email=t@example.invalid -c init.defaultBranch=main " + args, repo);
  ASSERT_EQ(r.rc, 0) << "git " << args << "\n" << r.err;
}

// ---- a small detection project: a training script, a helper whose step loop it calls, a dataset,
// a model, a CPU-only evaluation script and a test module ----------------------------------------

const char* kTrain = R"(import argparse

import torch
from torch.utils.data import DataLoader

from nets.yolo import YoloBody
from utils.dataloader import YoloDataset, yolo_collate
from utils.utils_fit import fit_one_epoch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=16)
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = YoloBody(num_classes=20).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    train_set = YoloDataset("2007_train.txt", input_shape=(640, 640))
    loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, num_workers=4,
                        pin_memory=True, persistent_workers=True, collate_fn=yolo_collate)
    for epoch in range(args.epochs):
        fit_one_epoch(model, optimizer, loader, epoch, device)


if __name__ == "__main__":
    main()
)";

// TL105 at 17:17 and TL101 at 18:9 only with train.py as context (the GPU and the epoch loop
// are there); the program-level TL501/TL502 at 15:9.
const char* kFit = R"(import gc

import torch
from tqdm import tqdm


def fit_one_epoch(model, optimizer, gen, epoch, device):
    loss = 0
    pbar = tqdm(gen, desc=f"Epoch {epoch + 1}")
    for iteration, (images, targets) in enumerate(pbar):
        images = images.to(device)
        targets = [t.to(device) for t in targets]
        optimizer.zero_grad()
        outputs = model(images)
        loss_value = model.loss(outputs, targets)
        loss_value.backward()
        optimizer.step()
        loss += loss_value.item()
        gc.collect()
        pbar.set_postfix(loss=loss / (iteration + 1))
    torch.save(model.state_dict(), f"logs/ep{epoch + 1:03d}.pth")
)";

const char* kDataset = R"(import numpy as np
import torch
from PIL import Image
from torch.utils.data import Dataset


class YoloDataset(Dataset):
    def __init__(self, annotation_path, input_shape):
        with open(annotation_path) as f:
            self.lines = f.readlines()
        self.input_shape = input_shape

    def __len__(self):
        return len(self.lines)

    def __getitem__(self, index):
        line = self.lines[index].split()
        image = Image.open(line[0]).convert("RGB")
        box = np.array([list(map(int, b.split(","))) for b in line[1:]])
        return np.array(image, dtype=np.float32), box


def yolo_collate(batch):
    images = torch.from_numpy(np.stack([b[0] for b in batch]))
    return images, [torch.from_numpy(b[1]) for b in batch]
)";

const char* kYolo = R"(import torch.nn as nn


class YoloBody(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, padding=1)
        self.head = nn.Conv2d(16, num_classes, 1)

    def forward(self, x):
        return self.head(self.conv(x).relu())

    def loss(self, out, targets):
        return out.float().mean()
)";

// A CPU evaluation script that shares nothing with train.py's program.
const char* kEval = R"(import torch
from torch.utils.data import DataLoader, Dataset


class Folder(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.load(f"samples/{i}.pt")


@torch.no_grad()
def main():
    model = torch.nn.Linear(4, 2)
    loader = DataLoader(Folder(100), batch_size=8)
    for batch in loader:
        print(model(batch).shape)


if __name__ == "__main__":
    main()
)";

struct DetectionProject {
  TempDir dir;
  fs::path root() const { return dir.path; }
  std::string cwd() const { return dir.path.string(); }
  explicit DetectionProject(bool with_git = true) {
    write_file(dir.path / "train.py", kTrain);
    write_file(dir.path / "utils/utils_fit.py", kFit);
    write_file(dir.path / "utils/dataloader.py", kDataset);
    write_file(dir.path / "utils/__init__.py", "");
    write_file(dir.path / "nets/yolo.py", kYolo);
    write_file(dir.path / "nets/__init__.py", "");
    write_file(dir.path / "tools/eval_cpu.py", kEval);
    if (with_git) git(dir.path, "init -q .");
  }
};

// Every finding of a JSON run as a comparable object (fingerprint included).
std::vector<json> findings_of(const json& doc, const std::string& path) {
  std::vector<json> v;
  for (auto& f : doc["findings"])
    if (f["path"] == path) v.push_back(f);
  return v;
}

}  // namespace

// ---- 0. files in their project's context --------------------------------------------------------

TEST(ProjectContext, AFileAloneHasTheFindingsOfTheWholeProjectRun) {
  DetectionProject p;
  json whole = parse(run_cli("--format json --select ALL .", p.cwd()).out);
  ASSERT_FALSE(whole["findings"].empty());
  for (std::string f : {"utils/utils_fit.py", "train.py", "utils/dataloader.py", "nets/yolo.py", "tools/eval_cpu.py"}) {
    auto r = run_cli("--format json --select ALL " + f, p.cwd());
    json alone = parse(r.out);
    EXPECT_EQ(alone["summary"]["files"], 1) << f;
    EXPECT_EQ(alone["summary"]["context_files"], 6) << f << ": the project's other files";
    EXPECT_EQ(findings_of(alone, f), findings_of(whole, f)) << f;
    for (auto& x : alone["findings"]) EXPECT_EQ(x["path"], f) << "only the file given is reported";
  }
  // the helper's per-step findings need the script that calls it: they are there
  EXPECT_EQ(where(whole, "utils/utils_fit.py"),
            (std::set<std::string>{"utils/utils_fit.py:16 TL501", "utils/utils_fit.py:16 TL502",
                                   "utils/utils_fit.py:18 TL105", "utils/utils_fit.py:19 TL101"}));
  // and without context they are lost: that is what the context is for
  json bare = parse(run_cli("--format json --select ALL --no-context utils/utils_fit.py", p.cwd()).out);
  EXPECT_EQ(where(bare), (std::set<std::string>{"utils/utils_fit.py:19 TL101"}));
}

TEST(ProjectContext, FromAnotherFolderAndForSeveralFiles) {
  DetectionProject p;
  fs::create_directories(p.root() / "sub");
  json whole = parse(run_cli("--format json .", p.cwd()).out);
  auto r = run_cli("--format json ../utils/utils_fit.py ../utils/dataloader.py", (p.root() / "sub").string());
  json two = parse(r.out);
  EXPECT_EQ(two["summary"]["files"], 2);
  std::set<std::string> want, got;
  for (auto& f : whole["findings"])
    if (f["path"] == "utils/utils_fit.py" || f["path"] == "utils/dataloader.py")
      want.insert(f["path"].get<std::string>() + " " + f["code"].get<std::string>() + " " + f["fingerprint"].get<std::string>());
  for (auto& f : two["findings"]) {
    std::string path = f["path"];
    ASSERT_EQ(path.rfind("../", 0), 0u) << path;
    got.insert(path.substr(3) + " " + f["code"].get<std::string>() + " " + f["fingerprint"].get<std::string>());
  }
  EXPECT_EQ(got, want) << "same findings, same fingerprints (they use project-relative paths)";
}

TEST(ProjectContext, AFileInNoProjectIsLintedAlone) {
  TempDir d;  // no pyproject.toml, .trainlint.toml, setup.py or .git up to /tmp
  write_file(d.path / "train_gpu.py", "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n");
  write_file(d.path / "helper.py", kFit);
  auto r = run_cli("--format json helper.py", d.path.string());
  EXPECT_EQ(where(parse(r.out)), (std::set<std::string>{"helper.py:19 TL101"}));
}

TEST(ProjectContext, GitignoredFilesAreNoContextUnlessAsked) {
  DetectionProject p;
  // a GPU script that calls the helper, in a folder the repository ignores
  write_file(p.root() / ".gitignore", "scratch/\n*.log\n");
  write_file(p.root() / "scratch/try_gpu.py",
             "import torch\nfrom utils.helper import run\nmodel = torch.nn.Linear(2, 2).cuda()\n"
             "opt = torch.optim.SGD(model.parameters(), lr=0.1)\nfor epoch in range(3):\n    run(model, opt)\n");
  write_file(p.root() / "utils/helper.py",
             "def run(model, opt):\n    for x in loader:\n        loss = model(x).sum()\n        loss.backward()\n"
             "        opt.step()\n        print(loss.item())\n");
  auto r = run_cli("--format json --select TL105 utils/helper.py", p.cwd());
  EXPECT_TRUE(where(parse(r.out)).empty()) << "the ignored GPU script is not context: nothing trains on a GPU";
  r = run_cli("--format json --select TL105 --no-respect-gitignore utils/helper.py", p.cwd());
  EXPECT_EQ(where(parse(r.out)), (std::set<std::string>{"utils/helper.py:6 TL105"}));
  // a walk skips the ignored folder; named on the command line it is linted; --force-exclude skips it
  r = run_cli("--format json --select ALL .", p.cwd());
  // the parsed report is kept: a range-for over a member of a temporary reads freed memory (ASan)
  const auto all = parse(r.out);
  for (auto& f : all["findings"]) EXPECT_NE(f["path"].get<std::string>().rfind("scratch/", 0), 0u);
  r = run_cli("--format json scratch/try_gpu.py", p.cwd());
  EXPECT_EQ(parse(r.out)["summary"]["files"], 1);
  r = run_cli("--format json --force-exclude scratch/try_gpu.py", p.cwd());
  EXPECT_EQ(parse(r.out)["summary"]["files"], 0);
}

TEST(Gitignore, NegationAnchoringAndOutsideARepository) {
  TempDir d;
  write_file(d.path / "repo/.gitignore", "/gen/\n*_pb2.py\n!keep_pb2.py\nlogs\n");
  write_file(d.path / "repo/src/.gitignore", "local_*.py\n");
  for (const char* f : {"gen/a.py", "src/gen/b.py", "src/x_pb2.py", "src/keep_pb2.py", "src/local_try.py",
                        "logs/c.py", "src/logs/d.py", "src/ok.py"})
    write_file(d.path / "repo" / f, "x = 1\n");
  git(d.path / "repo", "init -q .");
  auto r = run_cli("--format json .", (d.path / "repo").string());
  EXPECT_EQ(parse(r.out)["summary"]["files"], 3) << "src/gen/b.py, src/keep_pb2.py and src/ok.py";
  auto git_says = sh("git ls-files --others --exclude-standard -- '*.py'", d.path / "repo");
  EXPECT_EQ(git_says.out, "src/gen/b.py\nsrc/keep_pb2.py\nsrc/ok.py\n") << "the same files git would add";
  // the same tree outside a repository: .gitignore means nothing there
  fs::remove_all(d.path / "repo/.git");
  r = run_cli("--format json .", (d.path / "repo").string());
  EXPECT_EQ(parse(r.out)["summary"]["files"], 8);
}

TEST(StandardInput, TheBufferReplacesTheFileInItsProject) {
  DetectionProject p;
  std::string edited = kFit;
  edited.replace(edited.find("        gc.collect()\n"), 21, "        pass\n");
  auto r = with_stdin("--format json - --stdin-filename utils/utils_fit.py", edited, p.root());
  json j = parse(r.out);
  EXPECT_EQ(where(j), (std::set<std::string>{"utils/utils_fit.py:16 TL501", "utils/utils_fit.py:16 TL502",
                                             "utils/utils_fit.py:18 TL105"}))
      << "the disk's gc.collect() is gone, the context (train.py) is still there";
  r = with_stdin("-", "import gc\nfor b in loader:\n    opt.step()\n    gc.collect()\n", p.root());
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(contains(r.out, "-:4:5: warning:")) << r.out;
  r = run_cli("--stdin-filename x.py train.py", p.cwd());
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(contains(r.err, "`-`")) << r.err;
}

TEST(Paths, WhatCannotBeAnalysedGetsAClearMessage) {
  DetectionProject p;
  write_file(p.root() / "notes.txt", "gc.collect()\n");
  write_file(p.root() / "src/model.cpp", "#include <torch/torch.h>\n");
  write_file(p.root() / "src/kernels.cu", "__global__ void k() {}\n");
  write_file(p.root() / "bin/launch", "#!/usr/bin/env python3\nimport gc\nfor b in loader:\n    opt.step()\n    gc.collect()\n");
  auto r = run_cli("notes.txt src/model.cpp src/kernels.cu bin/launch", p.cwd());
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(contains(r.err, "notes.txt: error: cannot analyse: not a Python file")) << r.err;
  EXPECT_TRUE(contains(r.err, "src/kernels.cu: error: cannot analyse: not a Python file")) << r.err;
  EXPECT_FALSE(contains(r.err, "src/model.cpp")) << "C++ is analysed (the fast path)\n" << r.err;
  EXPECT_TRUE(contains(r.out, "bin/launch:5:5: warning:")) << "a python shebang makes a script Python\n" << r.out;
}

TEST(Paths, CleanRunSaysSoOnStderrUnlessQuiet) {
  DetectionProject p;
  auto r = run_cli("nets/yolo.py nets/__init__.py", p.cwd());
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "no findings in 2 files\n");
  EXPECT_EQ(run_cli("-q nets/yolo.py", p.cwd()).err, "");
}

// ---- 1. configuration ---------------------------------------------------------------------------

TEST(Configuration, PyprojectKeysApply) {
  DetectionProject p;
  write_file(p.root() / "pyproject.toml", R"([project]
name = "detector"

[tool.trainlint]
select = ["TL1", "TL2", "TL5"]
ignore = ["host-sync-per-step"]
extend-select = ["TL402"]
fail-on = "error"
extend-exclude = ["tools"]

[tool.trainlint.per-file-ignores]
"utils/data*.py" = ["TL204"]

[tool.trainlint.severity]
TL101 = "error"
)");
  auto r = run_cli("--format json .", p.cwd());
  json j = parse(r.out);
  EXPECT_EQ(where(j), (std::set<std::string>{"utils/utils_fit.py:16 TL501", "utils/utils_fit.py:16 TL502",
                                             "utils/utils_fit.py:19 TL101"}));
  for (auto& f : j["findings"])
    if (f["code"] == "TL101") EXPECT_EQ(f["severity"], "error");
  EXPECT_EQ(r.rc, 1) << "fail-on error, and TL101 is an error here";
  EXPECT_EQ(j["summary"]["files"], 6) << "tools/ is excluded";
  // --select on the command line is the whole choice: the configuration's ignore steps aside
  r = run_cli("--format json --select TL1 --ignore TL101 .", p.cwd());
  EXPECT_EQ(where(parse(r.out)), (std::set<std::string>{"utils/utils_fit.py:18 TL105"}));
  EXPECT_EQ(r.rc, 0) << "fail-on error still comes from the configuration";
  // --ignore adds to the configuration's ignore
  r = run_cli("--format json --ignore TL101 .", p.cwd());
  EXPECT_EQ(where(parse(r.out)), (std::set<std::string>{"utils/utils_fit.py:16 TL501", "utils/utils_fit.py:16 TL502"}));
  // --isolated: no configuration at all
  r = run_cli("--format json --isolated .", p.cwd());
  EXPECT_TRUE(where(parse(r.out)).count("utils/utils_fit.py:18 TL105"));
}

TEST(Configuration, NearestWinsAndDottedFileFirst) {
  DetectionProject p;
  write_file(p.root() / "pyproject.toml", "[tool.trainlint]\nselect = [\"TL101\"]\n");
  write_file(p.root() / "utils/.trainlint.toml", "select = [\"TL105\"]\n");
  write_file(p.root() / "utils/pyproject.toml", "[tool.trainlint]\nselect = [\"TL204\"]\n");
  write_file(p.root() / "nets/pyproject.toml", "[project]\nname = \"nets\"\n");  // no table: not a configuration
  auto r = run_cli("--format json --select ALL --isolated .", p.cwd());
  ASSERT_FALSE(where(parse(r.out)).empty());
  r = run_cli("--format json .", p.cwd());
  EXPECT_EQ(where(parse(r.out)), (std::set<std::string>{"utils/utils_fit.py:18 TL105"}))
      << "utils/ follows utils/.trainlint.toml (TL105 only), the rest the root's (TL101: none outside utils)";
  // --config: one configuration for every file
  write_file(p.root() / "ci.toml", "select = [\"TL204\"]\n");
  r = run_cli("--format json --config ci.toml .", p.cwd());
  EXPECT_EQ(where(parse(r.out)), (std::set<std::string>{"utils/dataloader.py:18 TL204"}));
}

TEST(Configuration, MistakesAreExit2WithFileAndLine) {
  DetectionProject p;
  struct Case {
    const char* toml;
    const char* message;
  } cases[] = {
      {"[tool.trainlint]\nselcet = [\"TL1\"]\n",
       "pyproject.toml:2: unknown key 'selcet' in [tool.trainlint] (did you mean 'select'?)"},
      {"[tool.trainlint]\nselect = \"TL1\"\n", "pyproject.toml:2: 'select' in [tool.trainlint] must be a list"},
      {"[tool.trainlint]\nignore = [\"TL101\", \"TL9999\"]\n",
       "pyproject.toml:2: 'ignore' in [tool.trainlint]: unknown rule 'TL9999'"},
      {"[tool.trainlint]\nfail-on = \"fatal\"\n", "pyproject.toml:2: 'fail-on' in [tool.trainlint] must be \"error\""},
      {"[tool.trainlint.severity]\nTL105 = 3\n", "pyproject.toml:2: 'severity' in [tool.trainlint] for TL105 must be"},
      {"[tool.trainlint.per-file-ignores]\n\"tests/*\" = [\"gc-colect-per-step\"]\n",
       "pyproject.toml:2: 'tests/*' in [tool.trainlint.per-file-ignores]: unknown rule 'gc-colect-per-step'"},
      {"[tool.trainlint.run]\ntreshold = 2\n", "pyproject.toml:2: unknown key 'treshold' in [tool.trainlint.run] (did you mean 'threshold'?)"},
      {"[tool.trainlint.run]\ngc-pauses = 150\n",
       "pyproject.toml:2: 'gc-pauses' in [tool.trainlint.run] must be a percentage from 0 to 100"},
      {"[tool.trainlint]\nselect = [\"TL1\"\n", "pyproject.toml:2: invalid TOML"},
      // found by fuzz_config: toml++ 3.3 asserts (or, built with clang, assumes: undefined
      // behaviour) on these; each must be a parse error with its line
      {"[tool.trainlint]\n[=]\n", "pyproject.toml:2: invalid TOML"},
      {"[tool.trainlint]\n[\x02select]\n", "pyproject.toml:2: invalid TOML"},
      {"[tool.trainlint]\nselect = [\"TL1\"] \xc3\xa9\n", "pyproject.toml:2: invalid TOML"},
      {"[tool.trainlint]\n\nfail-on = 4\t\t\xef\xba\xbf\n", "pyproject.toml:3: invalid TOML"},
  };
  for (auto& c : cases) {
    write_file(p.root() / "pyproject.toml", c.toml);
    auto r = run_cli("utils/utils_fit.py", p.cwd());
    EXPECT_EQ(r.rc, 2) << c.toml;
    EXPECT_EQ(r.out, "") << "no findings are printed from a broken configuration";
    EXPECT_TRUE(contains(r.err, std::string("trainlint: error: ") + c.message)) << c.toml << "\n" << r.err;
  }
  // beyond ASCII where TOML allows it: strings (all four kinds), comments, a byte-order mark
  write_file(p.root() / "pyproject.toml",
             "\xef\xbb\xbf[project]  # \xc3\xa9t\xc3\xa9\nname = \"d\xc3\xa9mo \\\" \xe8\xae\xad\"\ndescription = 'caf\xc3\xa9'\n"
             "readme = \"\"\"\n\xe8\xae\xad\xe7\xbb\x83 \"\" \"\"\"\nlicense = '''\n\xf0\x9f\x9a\x80'''\n"
             "[tool.trainlint]\nselect = [\"TL1\"]  # \xf0\x9f\x9a\x80\n");
  {
    auto ok = run_cli("utils/utils_fit.py", p.cwd());
    EXPECT_NE(ok.rc, 2) << ok.err;
    EXPECT_FALSE(contains(ok.err, "invalid TOML")) << ok.err;
  }
  fs::remove(p.root() / "pyproject.toml");
  write_file(p.root() / ".trainlint.toml", "[tool.trainlint]\nselect = [\"TL1\"]\n");
  auto r = run_cli("train.py", p.cwd());
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(contains(r.err, ".trainlint.toml takes the keys themselves")) << r.err;
  r = run_cli("--config missing.toml train.py", p.cwd());
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(contains(r.err, "--config missing.toml: no such file")) << r.err;
  // every mistake of a file, in file order; a broken configuration of the working folder counts
  // even when it governs none of the files linted
  fs::remove(p.root() / ".trainlint.toml");
  write_file(p.root() / "sub/pyproject.toml", "[tool.trainlint]\nselect = \"TL1\"\nfail-on = \"eror\"\n\n[tool.trainlint.run]\ntreshold = 2\n");
  r = run_cli("../train.py", (p.root() / "sub").string());
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err,
            "trainlint: error: pyproject.toml:2: 'select' in [tool.trainlint] must be a list of rule codes, slugs or code "
            "prefixes, e.g. select = [\"TL1\", \"TL201\"]; found a string\n"
            "trainlint: error: pyproject.toml:3: 'fail-on' in [tool.trainlint] must be \"error\", \"warning\" or \"info\", "
            "not \"eror\"\n"
            "trainlint: error: pyproject.toml:6: unknown key 'treshold' in [tool.trainlint.run] (did you mean "
            "'threshold'?); known: threshold, data-stall, gc-pauses, gpu-idle, report\n");
}

// ---- 2. suppressions ----------------------------------------------------------------------------

TEST(Suppressions, CommentsOnTheFlaggedLinesAndFile) {
  DetectionProject p;
  std::string fit = kFit;
  fit.replace(fit.find("        gc.collect()\n"), 21, "        gc.collect()  # NOQA: gc-collect-per-step\n");
  fit.replace(fit.find("        loss += loss_value.item()\n"), 34,
              "        loss += loss_value.item()  # trainlint: ignore[host-sync-per-step]\n");
  fit = "# trainlint: ignore-file[TL501]\n" + fit;
  write_file(p.root() / "utils/utils_fit.py", fit);
  auto r = run_cli("--format json utils/utils_fit.py", p.cwd());
  EXPECT_EQ(where(parse(r.out)), (std::set<std::string>{"utils/utils_fit.py:17 TL502"}));
  // the stale ones, with TL001
  write_file(p.root() / "utils/utils_fit.py", fit + "\n\ndef stats(t):\n    return t.mean()  # noqa: TL105\n");
  r = run_cli("--format json --extend-select TL001 utils/utils_fit.py", p.cwd());
  EXPECT_EQ(where(parse(r.out)), (std::set<std::string>{"utils/utils_fit.py:17 TL502", "utils/utils_fit.py:26 TL001"}));
}

TEST(AddNoqa, SuppressesEveryFindingOnceAndKeepsComments) {
  DetectionProject p;
  write_file(p.root() / "utils/multi.py", R"(import gc

from torch.utils.data import DataLoader


def run(model, ds, opt):
    loader = DataLoader(
        ds,
        batch_size=8,
    )
    for x, y in loader:
        msg = """a
multi-line string"""; loss = model(x).sum(); loss.backward(); opt.step(); gc.collect()
        total = loss.item() + \
            1  # sum it
        opt.zero_grad(set_to_none=False)  # trainlint: ignore[TL106]
        model.cuda()
)");
  std::string before = read_file(p.root() / "utils/multi.py");
  auto r = run_cli("--add-noqa --select ALL .", p.cwd());
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "trainlint: added suppressions for")) << r.err;
  std::string after = read_file(p.root() / "utils/multi.py");
  EXPECT_EQ(after, R"(import gc

from torch.utils.data import DataLoader


def run(model, ds, opt):
    loader = DataLoader(  # trainlint: ignore[TL201, TL202]
        ds,
        batch_size=8,
    )
    for x, y in loader:
        msg = """a
multi-line string"""; loss = model(x).sum(); loss.backward(); opt.step(); gc.collect()  # trainlint: ignore[TL101, TL502]
        total = loss.item() + \
            1  # sum it  # trainlint: ignore[TL105]
        opt.zero_grad(set_to_none=False)  # trainlint: ignore[TL106, TL503]
        model.cuda()
)") << before;
  // nothing is left to report, and a second run changes nothing
  r = run_cli("--select ALL .", p.cwd());
  EXPECT_EQ(r.rc, 0) << r.out;
  std::string snapshot = read_file(p.root() / "utils/utils_fit.py");
  r = run_cli("--add-noqa --select ALL .", p.cwd());
  EXPECT_TRUE(contains(r.err, "nothing to suppress")) << r.err;
  EXPECT_EQ(read_file(p.root() / "utils/multi.py"), after);
  EXPECT_EQ(read_file(p.root() / "utils/utils_fit.py"), snapshot);
  // and TL001 finds none of them stale
  EXPECT_EQ(run_cli("--select ALL --extend-select TL001 .", p.cwd()).rc, 0);
}

// ---- 3. baselines -------------------------------------------------------------------------------

namespace {

std::string insert_after(std::string text, const std::string& anchor, const std::string& what) {
  auto at = text.find(anchor);
  EXPECT_NE(at, std::string::npos) << anchor;
  return text.insert(at + anchor.size(), what);
}

}  // namespace

TEST(Baseline, WrittenSortedAndStable) {
  DetectionProject p;
  auto r = run_cli("--write-baseline trainlint-baseline.json .", p.cwd());
  EXPECT_EQ(r.rc, 0);
  EXPECT_TRUE(contains(r.err, "trainlint: wrote 7 findings in 7 files to trainlint-baseline.json")) << r.err;
  std::string first = read_file(p.root() / "trainlint-baseline.json");
  json b = parse(first);
  EXPECT_EQ(b["version"], 1);
  ASSERT_EQ(b["findings"].size(), 7u);
  std::vector<std::string> keys;
  for (auto& e : b["findings"]) {
    keys.push_back(e["path"].get<std::string>() + "\x1f" + e["code"].get<std::string>());
    for (const char* k : {"path", "code", "slug", "scope", "statement", "fingerprint"}) EXPECT_TRUE(e.contains(k)) << k;
  }
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
  EXPECT_EQ(b["findings"][4]["code"], "TL105");
  EXPECT_EQ(b["findings"][4]["statement"], "loss += loss_value.item()");
  EXPECT_EQ(b["findings"][4]["scope"], "fit_one_epoch");
  // from another folder, with the project's files named differently: the same bytes
  fs::create_directories(p.root() / "sub");
  r = run_cli("--write-baseline ../again.json ..", (p.root() / "sub").string());
  EXPECT_EQ(read_file(p.root() / "again.json"), first);
  // a configuration added to a subfolder makes it a project of its own, but files keep their
  // names in the repository: the same baseline
  write_file(p.root() / "utils/.trainlint.toml", "extend-select = [\"TL001\"]\n");
  r = run_cli("--write-baseline again.json .", p.cwd());
  EXPECT_EQ(read_file(p.root() / "again.json"), first);
  fs::remove(p.root() / "utils/.trainlint.toml");
  // with the baseline nothing is new
  r = run_cli("--baseline trainlint-baseline.json .", p.cwd());
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(contains(r.err, "trainlint: 7 findings are in the baseline trainlint-baseline.json and not reported")) << r.err;
  EXPECT_TRUE(contains(r.err, "no new findings in 7 files")) << r.err;
}

TEST(Baseline, SurvivesCodeMovingAndReportsOnlyNewFindings) {
  DetectionProject p;
  ASSERT_EQ(run_cli("--write-baseline bl.json .", p.cwd()).rc, 0);
  fs::path fit = p.root() / "utils/utils_fit.py";
  std::string original = read_file(fit);

  // lines inserted above, and an unrelated function changed elsewhere in the file
  std::string moved = "import os\nimport sys\n\n\ndef unrelated(x):\n    return x * 2\n\n\n" + original;
  write_file(fit, moved);
  auto r = run_cli("--format json --baseline bl.json .", p.cwd());
  EXPECT_TRUE(parse(r.out)["findings"].empty()) << r.out;
  write_file(fit, insert_after(moved, "return x * 2\n", "\n\ndef other(y):\n    return os.path.join(y, \"z\")\n"));
  r = run_cli("--format json --baseline bl.json .", p.cwd());
  EXPECT_TRUE(parse(r.out)["findings"].empty()) << r.out;

  // the function moved to the end of the file, re-indented comments and blank lines added in it
  std::string fn = original.substr(original.find("def fit_one_epoch"));
  std::string head = original.substr(0, original.find("def fit_one_epoch"));
  std::string reordered = head + "def helper():\n    return 1\n\n\n" + fn;
  reordered = insert_after(reordered, "        optimizer.step()\n", "\n        # the loss, for the progress bar\n");
  write_file(fit, reordered);
  r = run_cli("--format json --baseline bl.json .", p.cwd());
  EXPECT_TRUE(parse(r.out)["findings"].empty()) << r.out;

  // a second, identical occurrence in the same function is new
  write_file(fit, insert_after(reordered, "        gc.collect()\n", "        gc.collect()\n"));
  r = run_cli("--format json --baseline bl.json .", p.cwd());
  json j = parse(r.out);
  ASSERT_EQ(j["findings"].size(), 1u) << r.out;
  EXPECT_EQ(j["findings"][0]["code"], "TL101");
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(contains(r.err, "7 findings are in the baseline bl.json")) << r.err;
}

TEST(Baseline, RewritingDropsFixedFindings) {
  DetectionProject p;
  ASSERT_EQ(run_cli("--write-baseline bl.json .", p.cwd()).rc, 0);
  fs::path fit = p.root() / "utils/utils_fit.py";
  std::string text = read_file(fit);
  text.replace(text.find("        gc.collect()\n"), 21, "");
  write_file(fit, text);
  auto r = run_cli("--baseline bl.json .", p.cwd());
  EXPECT_EQ(r.rc, 0);
  EXPECT_TRUE(contains(r.err, "1 baselined finding is gone; `trainlint --write-baseline bl.json` drops it")) << r.err;
  ASSERT_EQ(run_cli("--write-baseline bl.json .", p.cwd()).rc, 0);
  json b = parse(read_file(p.root() / "bl.json"));
  EXPECT_EQ(b["findings"].size(), 6u);
  for (auto& e : b["findings"]) EXPECT_NE(e["code"], "TL101");
}

TEST(Baseline, FromTheConfigurationAndErrors) {
  DetectionProject p;
  ASSERT_EQ(run_cli("--write-baseline ci/accepted.json .", p.cwd()).rc, 2) << "its folder does not exist";
  fs::create_directories(p.root() / "ci");
  ASSERT_EQ(run_cli("--write-baseline ci/accepted.json .", p.cwd()).rc, 0);
  write_file(p.root() / "pyproject.toml", "[tool.trainlint]\nbaseline = \"ci/accepted.json\"\n");
  auto r = run_cli(".", p.cwd());
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(contains(r.err, "in the baseline")) << r.err;
  r = run_cli("--no-baseline .", p.cwd());
  EXPECT_EQ(r.rc, 1);
  write_file(p.root() / "ci/accepted.json", "{\"findings\": 3}");
  r = run_cli(".", p.cwd());
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(contains(r.err, "is not a trainlint baseline")) << r.err;
  r = run_cli("--baseline nowhere.json .", p.cwd());
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(contains(r.err, "cannot read the baseline nowhere.json")) << r.err;
}

TEST(DiffBase, OnlyFindingsOnChangedLines) {
  DetectionProject p;
  git(p.root(), "add -A");
  git(p.root(), "commit -qm base");
  fs::path fit = p.root() / "utils/utils_fit.py";
  write_file(fit, insert_after(read_file(fit), "        optimizer.step()\n", "        torch.cuda.empty_cache()\n"));
  write_file(p.root() / "tools/new_script.py",
             "import gc\nfor b in loader:\n    opt.step()\n    gc.collect()\n");
  auto r = run_cli("--format json --diff-base HEAD .", p.cwd());
  EXPECT_EQ(where(parse(r.out)), (std::set<std::string>{"tools/new_script.py:4 TL101", "utils/utils_fit.py:18 TL102"}))
      << "the changed line and the untracked file; not the old findings";
  r = run_cli("--diff-base HEAD .", p.cwd());
  EXPECT_TRUE(contains(r.err, "findings are on lines not changed since HEAD and not reported")) << r.err;
  // a multi-line statement counts when any of its lines changed
  git(p.root(), "add -A");
  git(p.root(), "commit -qm step");
  std::string train = read_file(p.root() / "train.py");
  train.replace(train.find("pin_memory=True, "), 17, "");
  write_file(p.root() / "train.py", train);
  r = run_cli("--format json --diff-base HEAD .", p.cwd());
  EXPECT_EQ(where(parse(r.out)), (std::set<std::string>{"train.py:20 TL202"}));
  // deleting a line inside a multi-line statement changes that statement
  git(p.root(), "add -A");
  git(p.root(), "commit -qm pin");
  train = read_file(p.root() / "train.py");
  train.replace(train.find("shuffle=True, num_workers=4,\n"), 29, "shuffle=True,\n");
  write_file(p.root() / "train.py", train);
  r = run_cli("--format json --select TL201 --diff-base HEAD .", p.cwd());
  EXPECT_EQ(where(parse(r.out)), (std::set<std::string>{"train.py:20 TL201"}));
  git(p.root(), "add -A");
  git(p.root(), "commit -qm workers");
  train = read_file(p.root() / "train.py");
  train.replace(train.find("    args = parser.parse_args()\n"), 30, "");
  write_file(p.root() / "train.py", train);
  r = run_cli("--format json --diff-base HEAD .", p.cwd());
  EXPECT_TRUE(where(parse(r.out)).empty()) << "a deleted line between two statements changes neither";
  r = run_cli("--diff-base no-such-ref .", p.cwd());
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(contains(r.err, "--diff-base no-such-ref: not a commit")) << r.err;
}

TEST(DiffBase, OutsideAGitRepositoryIsAClearError) {
  DetectionProject p(/*with_git=*/false);
  auto r = run_cli("--diff-base HEAD train.py", p.cwd());
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(contains(r.err, "--diff-base needs a git repository")) << r.err;
}

// ---- 5. fixes through the whole pipeline ---------------------------------------------------------

TEST(FixCli, FixesWhatIsReportedAndLeavesTheRest) {
  DetectionProject p;
  write_file(p.root() / "utils/evaluate.py", R"(import torch
from torch.utils.data import DataLoader


device = torch.device("cuda")


def evaluate(model, val_set):
    loader = DataLoader(val_set, batch_size=64, num_workers=4)  # noqa: TL202
    ckpt = torch.load("best.pth")
    model.load_state_dict(ckpt)
    for x, y in DataLoader(val_set, batch_size=64, num_workers=4, persistent_workers=True):
        x = x.to(device)
        y.to(device)
        model.zero_grad(set_to_none=False)


def finetune(model, optimizer, x):
    model(x.to(device)).sum().backward()
    optimizer.step()
)");
  fs::path ev = p.root() / "utils/evaluate.py";
  std::string before = read_file(ev);
  // --diff writes nothing, exits 1, and the diff applies
  auto r = run_cli("--diff --select ALL utils/evaluate.py", p.cwd());
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(read_file(ev), before);
  EXPECT_TRUE(contains(r.out, "--- a/utils/evaluate.py\n+++ b/utils/evaluate.py\n")) << r.out;
  EXPECT_TRUE(contains(r.err, "1 more fix is available with --unsafe-fixes")) << r.err;
  // --fix: safe fixes only; the suppressed TL202 keeps its line
  r = run_cli("--fix --select ALL utils/evaluate.py", p.cwd());
  std::string fixed = read_file(ev);
  EXPECT_TRUE(contains(fixed, "    loader = DataLoader(val_set, batch_size=64, num_workers=4)  # noqa: TL202\n")) << fixed;
  EXPECT_TRUE(contains(fixed, "persistent_workers=True, pin_memory=True):")) << fixed;
  EXPECT_TRUE(contains(fixed, "        y = y.to(device)\n")) << fixed;
  EXPECT_TRUE(contains(fixed, "        model.zero_grad()\n")) << fixed;
  EXPECT_TRUE(contains(fixed, "torch.load(\"best.pth\")")) << "TL402's fix is unsafe";
  EXPECT_TRUE(contains(r.out, "[TL402 torch-load-no-map-location]")) << "what is left is reported\n" << r.out;
  r = run_cli("--unsafe-fixes --select ALL utils/evaluate.py", p.cwd());
  EXPECT_TRUE(contains(read_file(ev), "torch.load(\"best.pth\", map_location=\"cpu\")")) << read_file(ev);
  // again: nothing to do
  std::string settled = read_file(ev);
  r = run_cli("--unsafe-fixes --select ALL utils/evaluate.py", p.cwd());
  EXPECT_EQ(read_file(ev), settled);
  EXPECT_TRUE(contains(r.err, "fixed 0 findings in 0 files")) << r.err;
}

TEST(FixCli, StandardInputPrintsTheFixedCode) {
  DetectionProject p;
  std::string train = kTrain;
  train.replace(train.find("pin_memory=True, "), 17, "");
  std::string want = train;
  want.replace(want.find("collate_fn=yolo_collate)"), 24, "collate_fn=yolo_collate, pin_memory=True)");
  auto r = with_stdin("--fix - --stdin-filename train.py", train, p.root());
  EXPECT_EQ(r.out, want) << "the fixed code, and only it, on stdout";
  EXPECT_TRUE(contains(r.err, "fixed 1 finding in 1 file")) << r.err;
  EXPECT_EQ(read_file(p.root() / "train.py"), kTrain) << "the file on disk is not touched";
}

TEST(FixCli, StaleSuppressionsAreRemovedByTheirFix) {
  DetectionProject p;
  std::string fit = kFit;
  fit.replace(fit.find("        gc.collect()\n"), 21, "        gc.collect()  # noqa: TL101, TL105, E501\n");
  fit.replace(fit.find("        optimizer.zero_grad()\n"), 30, "        optimizer.zero_grad()  # trainlint: ignore[TL503]\n");
  write_file(p.root() / "utils/utils_fit.py", fit);
  auto r = run_cli("--extend-select TL001 --fix utils/utils_fit.py", p.cwd());
  std::string after = read_file(p.root() / "utils/utils_fit.py");
  EXPECT_TRUE(contains(after, "        gc.collect()  # noqa: TL101, E501\n")) << after;
  EXPECT_TRUE(contains(after, "        optimizer.zero_grad()\n")) << after;
  EXPECT_TRUE(contains(r.err, "fixed 2 findings in 1 file")) << r.err;
  EXPECT_FALSE(contains(r.out, "TL001")) << r.out;
}
