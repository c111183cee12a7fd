// The model's program-level notions from docs/concepts.md: a program's facts come from the code it runs
// (reachability from the entry script), test modules, accelerator intent, dataset storage (TL201)
// and CUDA initialisation in execution order (TL302); and per-step messages that follow the
// program's facts.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "analyzer/python/model.h"
#include "analyzer/python/reach.h"
#include "support/test_support.h"

using namespace tl;
using namespace tl::py;
using namespace tl::test;

namespace {

ProgramModel build(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::unique_ptr<SourceFile>> srcs;
  for (auto& [p, t] : files) srcs.push_back(std::make_unique<SourceFile>(p, t));
  return ProgramModel::build(std::move(srcs), 2);
}

// A program's reached functions and classes and its dead branches, one sorted line each.
std::vector<std::string> reach_summary(const ProgramModel& pm, const Program& p) {
  std::vector<std::string> v;
  for (uint32_t id : p.reached_ids) v.push_back(pm.functions()[id]->mod->path + ":" + pm.functions()[id]->qualname);
  for (uint32_t id : p.reached_class_ids) v.push_back("class " + pm.classes()[id]->qualname);
  for (auto& [m, nodes] : p.dead_branches)
    for (NodeId n : nodes) v.push_back("dead " + m->path + ":" + std::to_string(m->tree.pos(n).line));
  std::sort(v.begin(), v.end());
  return v;
}

const Module& mod(const ProgramModel& pm, const std::string& path) {
  for (auto& m : pm.modules())
    if (m->path == path) return *m;
  throw std::runtime_error("no module " + path);
}

const Program& program_of(const ProgramModel& pm, const std::string& entry) {
  for (auto& p : pm.programs())
    if (p.entry && p.entry->path == entry) return p;
  throw std::runtime_error("no program entered at " + entry);
}

const Function& fn(const ProgramModel& pm, const std::string& path, const std::string& qualname) {
  for (auto& f : mod(pm, path).functions)
    if (f->qualname == qualname) return *f;
  throw std::runtime_error("no function " + qualname);
}

// The first node of `path` whose text starts with `prefix`.
NodeId node_at(const ProgramModel& pm, const std::string& path, const std::string& prefix) {
  const Module& m = mod(pm, path);
  for (auto& c : m.calls)
    if (m.tree.text(c.node).substr(0, prefix.size()) == prefix) return c.node;
  throw std::runtime_error("no call " + prefix);
}

const char* const kLib = R"(import torch


def decode(x):
    return x * 2


def to_gpu(x):
    return x.cuda()


def registered_worker(x):
    return x.cuda()


class Prefetcher:
    def __init__(self, loader):
        self.loader = loader

    def __iter__(self):
        for b in self.loader:
            yield b.cuda(non_blocking=True)


class Trainer:
    def __init__(self, model):
        self.model = model

    def fit(self):
        self._place()

    def _place(self):
        self.model.cuda()


if __name__ == "__main__":
    to_gpu(torch.zeros(1))
)";

}  // namespace

TEST(ProgramReach, OnlyFunctionsReachableFromTheEntryCount) {
  auto pm = build({{"lib.py", kLib},
                   {"infer.py", "from lib import decode\nimport numpy as np\n\nif __name__ == '__main__':\n    print(decode(np.ones(3)))\n"},
                   {"spawn.py", "import torch.multiprocessing as mp\nfrom lib import registered_worker\n\n"
                                "if __name__ == '__main__':\n    mp.spawn(registered_worker, nprocs=2)\n"},
                   {"fit.py", "from lib import Trainer\nimport torch\n\nTrainer(torch.nn.Linear(2, 2)).fit()\n"}});
  const Program& infer = program_of(pm, "infer.py");
  EXPECT_TRUE(infer.reaches(&fn(pm, "lib.py", "decode")));
  EXPECT_FALSE(infer.reaches(&fn(pm, "lib.py", "to_gpu")));  // only the library's own __main__ calls it
  EXPECT_FALSE(infer.reaches(&fn(pm, "lib.py", "Prefetcher.__iter__")));
  EXPECT_FALSE(infer.uses_accelerator);
  // a function handed to an unknown callee may run
  const Program& spawn = program_of(pm, "spawn.py");
  EXPECT_TRUE(spawn.reaches(&fn(pm, "lib.py", "registered_worker")));
  EXPECT_TRUE(spawn.uses_accelerator);
  // a class built by the program: its methods, reached through `self`
  const Program& fit = program_of(pm, "fit.py");
  EXPECT_TRUE(fit.reaches(&fn(pm, "lib.py", "Trainer._place")));
  EXPECT_FALSE(fit.reaches(&fn(pm, "lib.py", "to_gpu")));
  EXPECT_TRUE(fit.uses_accelerator);
  // the top level of an imported module runs, its __main__ block does not
  NodeId main_call = node_at(pm, "lib.py", "to_gpu(torch.zeros(1))");
  EXPECT_FALSE(pm.runs_in_program(infer, mod(pm, "lib.py"), main_call));
}

TEST(ProgramReach, ALibraryLintedAloneHasCallersOutsideTheAnalysis) {
  // Nothing imports it and it only defines things: each of its functions may be called.
  auto pm = build({{"engine.py", "import torch\n\n\ndef train_one_epoch(model, loader):\n    model.cuda()\n"}});
  const Program& p = program_of(pm, "engine.py");
  EXPECT_TRUE(p.reaches(&fn(pm, "engine.py", "train_one_epoch")));
  EXPECT_TRUE(p.uses_accelerator);
}

TEST(ProgramReach, DecoratorRegistrationAndCallbacksAreReachable) {
  auto pm = build({{"models.py", R"(import torch
from registry import MODELS


@MODELS.register("gpu_net")
def build_gpu_net():
    return torch.nn.Linear(2, 2).cuda()


@torch.no_grad()
def unused_eval(model):
    return model.cuda()
)"},
                   {"registry.py", "class Registry:\n    def register(self, name):\n        return lambda f: f\n\n\nMODELS = Registry()\n"},
                   {"run.py", "import models\nfrom registry import MODELS\n\nif __name__ == '__main__':\n    print(MODELS)\n"}});
  const Program& p = program_of(pm, "run.py");
  EXPECT_TRUE(p.reaches(&fn(pm, "models.py", "build_gpu_net")));
  EXPECT_FALSE(p.reaches(&fn(pm, "models.py", "unused_eval")));  // torch.no_grad only wraps it
}

TEST(TestModules, RecognisedByNameTestCaseOrUncalledTestFunctions) {
  auto pm = build({{"test_data.py", "import torch\n\n\ndef helper():\n    return 1\n"},
                   {"data_test.py", "x = 1\n"},
                   {"checks.py", "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_a(self):\n        pass\n"},
                   {"pytest_style.py", "def test_shapes():\n    assert True\n"},
                   {"train.py", R"(import torch


def test_epoch(model, loader):
    for x, y in loader:
        model(x)


def main(model, loader):
    for epoch in range(3):
        test_epoch(model, loader)


if __name__ == "__main__":
    main(None, [])
)"}});
  EXPECT_TRUE(mod(pm, "test_data.py").is_test);
  EXPECT_TRUE(mod(pm, "data_test.py").is_test);
  EXPECT_TRUE(mod(pm, "checks.py").is_test);
  EXPECT_TRUE(mod(pm, "pytest_style.py").is_test);
  EXPECT_FALSE(mod(pm, "train.py").is_test);  // its test_* helper is called by the script
  EXPECT_FALSE(mod(pm, "test_data.py").is_entry);
  EXPECT_TRUE(mod(pm, "test_data.py").programs.empty());
}

TEST(TestModules, TheirLoopsAreNotStepLoops) {
  auto pm = build({{"test_train.py", R"(import torch


def test_steps():
    model = torch.nn.Linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = [(torch.randn(4, 2), torch.randn(4, 1))]
    for x, y in loader:
        loss = (model(x) - y).pow(2).mean()
        loss.backward()
        opt.step()
)"}});
  for (auto& L : mod(pm, "test_train.py").loops) EXPECT_EQ(L.kind, LoopKind::Other);
}

TEST(TestModules, OnlyCorrectnessRulesReport) {
  auto r = lint_texts({{"test_gpu.py", R"(import torch


def test_transfer():
    x = torch.randn(3)
    x.cuda()
    model = torch.nn.Linear(3, 1).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        loss = model(x.cuda()).sum()
        loss.backward()
        opt.step()
        print(loss.item())
)"}});
  ASSERT_FALSE(r.findings.empty());
  for (auto& f : r.findings) EXPECT_EQ(f.code.substr(0, 3), "TL4") << f.code << ": " << f.message;
}

TEST(AcceleratorIntent, MentionsOfCudaOptionsAndNccl) {
  auto pm = build({{"cpu.py", "import torch\nfor i in range(3):\n    torch.randn(2).sum()\n"},
                   {"opt.py", "import argparse\np = argparse.ArgumentParser()\np.add_argument('--gpu', type=int, default=0)\n"},
                   {"nccl.py", "import torch.distributed as dist\ndist.init_process_group(backend='nccl')\n"},
                   {"avail.py", "import torch\nprint(torch.cuda.is_available())\n"},
                   {"lib_only.py", "import torch\n\n\ndef never():\n    return torch.cuda.device_count()\n"},
                   {"uses_lib.py", "import lib_only\nimport torch\nprint(torch.ones(1))\n"}});
  EXPECT_FALSE(program_of(pm, "cpu.py").accelerator_intent);
  EXPECT_TRUE(program_of(pm, "opt.py").accelerator_intent);
  EXPECT_TRUE(program_of(pm, "nccl.py").accelerator_intent);
  EXPECT_TRUE(program_of(pm, "avail.py").accelerator_intent);
  EXPECT_FALSE(program_of(pm, "uses_lib.py").accelerator_intent);  // the mention never runs
}

TEST(DatasetStorage, InMemoryLiveStateAndUnknown) {
  auto pm = build({{"d.py", R"(import numpy as np
import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset, IterableDataset, TensorDataset, random_split


class Mem(Dataset):
    def __init__(self):
        self.x = torch.randn(64, 3)
        self.y = np.load("y.npy")

    def __len__(self):
        return 64

    def __getitem__(self, i):
        return self.x[i], torch.as_tensor(self.y[i]).float()


class Files(Dataset):
    def __init__(self, files):
        self.files = files

    def __getitem__(self, i):
        return Image.open(self.files[i])


class Buffer:
    def __init__(self):
        self.items = []

    def push(self, item):
        self.items.append(item)

    def sample(self):
        return self.items[-1]


class Replay(IterableDataset):
    def __init__(self, buffer):
        self.buffer = buffer

    def __iter__(self):
        yield self.buffer.sample()


class Stream(IterableDataset):
    def __init__(self, paths):
        self.paths = paths

    def __iter__(self):
        for p in self.paths:
            yield np.load(p)


class ShardedStream(Stream):
    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        for p in self.paths[info.id::info.num_workers] if info else self.paths:
            yield np.load(p)


buf = Buffer()
ds = TensorDataset(torch.randn(8, 2))
a, b = random_split(ds, [4, 4])
DataLoader(Mem())
DataLoader(a)
DataLoader(Files(["x.jpg"]))
DataLoader(Replay(buf))
DataLoader(Stream(["s.npy"]))
DataLoader(ShardedStream(["s.npy"]))
)"}});
  const Module& m = mod(pm, "d.py");
  auto storage = [&](const std::string& prefix) {
    const Call* c = m.call_at(node_at(pm, "d.py", prefix));
    return pm.dataset_storage(m, pm.positional_arg(m, *c, 0));
  };
  using DS = ProgramModel::DatasetStorage;
  EXPECT_EQ(storage("DataLoader(Mem())"), DS::InMemory);
  EXPECT_EQ(storage("DataLoader(a)"), DS::InMemory);
  EXPECT_EQ(storage("DataLoader(Files("), DS::Unknown);
  EXPECT_EQ(storage("DataLoader(Replay("), DS::LiveState);
  // an IterableDataset that never asks which worker it is: every worker would yield it all
  EXPECT_EQ(storage("DataLoader(Stream("), DS::Unsharded);
  EXPECT_EQ(storage("DataLoader(ShardedStream("), DS::Unknown);
}

TEST(CudaOrder, FollowsTheCallsFromTheEntry) {
  auto pm = build({{"env.py", "import os\n\n\ndef select(d):\n    os.environ['CUDA_VISIBLE_DEVICES'] = d\n"},
                   {"models.py", "import torch\n\n\ndef build():\n    return torch.nn.Linear(2, 2).cuda()\n"},
                   {"good.py", "from env import select\nfrom models import build\n\n\ndef main():\n    select('0')\n    build()\n\n\n"
                               "if __name__ == '__main__':\n    main()\n"}});
  EXPECT_EQ(pm.cuda_initialised_before(&fn(pm, "env.py", "select")), nullptr);
  auto pm2 = build({{"env.py", "import os\n\n\ndef select(d):\n    os.environ['CUDA_VISIBLE_DEVICES'] = d\n"},
                    {"models.py", "import torch\n\n\ndef build():\n    return torch.nn.Linear(2, 2).cuda()\n"},
                    {"bad.py", "from env import select\nfrom models import build\n\n\ndef main():\n    build()\n    select('0')\n\n\n"
                               "if __name__ == '__main__':\n    main()\n"}});
  const Call* init = pm2.cuda_initialised_before(&fn(pm2, "env.py", "select"));
  ASSERT_NE(init, nullptr);
  EXPECT_EQ(init->mod->path, "models.py");  // the real first CUDA site, not the call of build()
  EXPECT_EQ(init->method, "cuda");
}

TEST(CudaOrder, TheNoteNamesTheRealFirstCudaSite) {
  auto r = lint_texts({{"env.py", "import os\n\n\ndef select(d):\n    os.environ['CUDA_VISIBLE_DEVICES'] = d\n"},
                       {"models.py", "import torch\n\n\ndef build():\n    return torch.nn.Linear(2, 2).cuda()\n"},
                       {"bad.py", "from env import select\nfrom models import build\n\n\ndef main():\n    build()\n    select('0')\n\n\n"
                                  "if __name__ == '__main__':\n    main()\n"}},
                      {"TL302"});
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].path, "env.py");
  ASSERT_EQ(r.findings[0].notes.size(), 1u);
  EXPECT_EQ(r.findings[0].notes[0].path, "models.py");
  EXPECT_EQ(r.findings[0].notes[0].range.start.line, 5u);
}

TEST(Messages, PerStepMessagesFollowTheProgram) {
  std::string gpu = kTrainGc;
  std::string cpu = gpu;
  for (std::string s : {"    model = model.cuda()\n", "            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)\n"})
    cpu.erase(cpu.find(s), s.size());
  auto rg = lint_texts({{"train.py", gpu}}, {"TL101"});
  auto rc = lint_texts({{"train.py", cpu}}, {"TL101"});
  ASSERT_EQ(rg.findings.size(), 1u);
  ASSERT_EQ(rc.findings.size(), 1u);
  EXPECT_NE(rg.findings[0].message.find("GPU"), std::string::npos);
  EXPECT_EQ(rc.findings[0].message.find("GPU"), std::string::npos) << rc.findings[0].message;
  EXPECT_NE(rc.findings[0].message.find("step's time"), std::string::npos);
  // TL201 and TL203 too
  auto loader_cpu = lint_texts({{"t.py", R"(import torch
from torch.utils.data import DataLoader


def main(ds, model, opt):
    loader = DataLoader(ds, batch_size=8, num_workers=4)
    plain = DataLoader(ds, batch_size=8)
    for epoch in range(3):
        for x, y in loader:
            loss = model(x).sum()
            loss.backward()
            opt.step()
    return plain
)"}},
                               {"TL201", "TL203"});
  ASSERT_EQ(loader_cpu.findings.size(), 2u);
  for (auto& f : loader_cpu.findings) EXPECT_EQ(f.message.find("GPU"), std::string::npos) << f.message;
}

// Programs are reached on the run's threads: each program's reached functions, classes and dead
// branches are the same whatever the thread count, and dead branches still differ per program.
TEST(ProgramReach, TheSameOnOneThreadOrMany) {
  std::vector<std::pair<std::string, std::string>> files = {{"lib.py", R"(def helper(x, use_amp=False):
    if use_amp:
        return amp_path(x)
    return plain(x)

def amp_path(x):
    return x

def plain(x):
    return x

class Trainer:
    def __init__(self, fast):
        self.fast = fast

    def run(self):
        if self.fast:
            return fast_step()
        return slow_step()

def fast_step():
    pass

def slow_step():
    pass
)"}};
  for (int i = 0; i < 12; ++i) {
    std::string s = "from lib import helper, Trainer\n";
    s += i % 2 ? "helper(1, use_amp=True)\n" : "helper(1)\n";
    s += i % 3 ? "Trainer(False).run()\n" : "Trainer(True).run()\n";
    // the accelerator facts, computed per program on the run's threads, differ between programs
    if (i % 4 == 0) s += "import torch\ndevice = 'cuda'\nnet = torch.nn.Linear(2, 2).to(device)\n";
    if (i % 4 == 1) s += "import torch\nuse_gpu = torch.cuda.is_available()\n";
    if (i % 5 == 0) s += "for batch in loader:\n    loss = net(batch)\n    loss.backward()\n    opt.step()\n";
    files.emplace_back("script" + std::to_string(i) + ".py", s);
  }
  auto build_with = [&](unsigned threads) {
    std::vector<std::unique_ptr<SourceFile>> srcs;
    for (auto& [p, t] : files) srcs.push_back(std::make_unique<SourceFile>(p, t));
    return ProgramModel::build(std::move(srcs), threads);
  };
  // per program: entry, reached qualnames, reached class names, dead branch positions
  auto summary = [](const ProgramModel& pm) {
    std::vector<std::string> out;
    for (auto& p : pm.programs()) {
      std::string s = p.entry ? p.entry->path : "?";
      for (uint32_t id : p.reached_ids) s += " " + pm.functions()[id]->qualname;
      std::vector<std::string> cls;
      for (uint32_t id : p.reached_class_ids) cls.push_back(pm.classes()[id]->qualname);
      std::sort(cls.begin(), cls.end());
      for (auto& c : cls) s += " class:" + c;
      std::vector<std::string> dead;
      for (auto& [m, nodes] : p.dead_branches)
        for (NodeId n : nodes) dead.push_back(m->path + ":" + std::to_string(m->tree.pos(n).line));
      std::sort(dead.begin(), dead.end());
      for (auto& d : dead) s += " dead:" + d;
      s += std::string(" accelerator:") + (p.uses_accelerator ? "yes" : "no") + " intent:" +
           (p.accelerator_intent ? "yes" : "no") + " step:" + (p.has_opt_step ? "yes" : "no") +
           " backward:" + (p.has_backward ? "yes" : "no");
      if (p.accel_mod) s += " at:" + p.accel_mod->path + ":" + std::to_string(p.accel_mod->tree.pos(p.accel_node).line);
      out.push_back(s);
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  ProgramModel one = build_with(1), many = build_with(4);
  auto a = summary(one), b = summary(many);
  EXPECT_EQ(a, b);
  size_t on_accelerator = 0, with_intent = 0, stepping = 0;
  for (auto& p : one.programs()) {
    on_accelerator += p.uses_accelerator;
    with_intent += p.accelerator_intent;
    stepping += p.has_opt_step;
  }
  EXPECT_EQ(on_accelerator, 3u);  // script0, 4, 8
  EXPECT_EQ(with_intent, 6u);     // those and script1, 5, 9
  EXPECT_EQ(stepping, 3u);        // script0, 5, 10
  // the programs differ where their arguments do
  const Function& amp = fn(one, "lib.py", "amp_path");
  const Function& fast = fn(one, "lib.py", "fast_step");
  EXPECT_FALSE(program_of(one, "script0.py").reaches(&amp));
  EXPECT_TRUE(program_of(one, "script1.py").reaches(&amp));
  EXPECT_TRUE(program_of(one, "script0.py").reaches(&fast));
  EXPECT_FALSE(program_of(one, "script1.py").reaches(&fast));
}

// Programs that import the same package share the walk of its import closure (a hub), made once
// with no dead branches and once per set of dead branches programs share. Each program reaches
// what it reaches when it is the only program (no hub): functions, classes and dead branches.
TEST(ProgramReach, ProgramsSharingAPackageReachWhatEachReachesAlone) {
  std::vector<std::pair<std::string, std::string>> core;
  std::string init;
  for (int i = 0; i < 10; ++i) {
    std::string m = "core/m" + std::to_string(i) + ".py";
    std::string s;
    if (i > 0) s += "from core.m" + std::to_string(i - 1) + " import f" + std::to_string(i - 1) + "\n";
    s += "\ndef f" + std::to_string(i) + "(fast=False):\n    if fast:\n        return fast" + std::to_string(i) +
         "()\n    return slow" + std::to_string(i) + "()\n";
    s += "\ndef fast" + std::to_string(i) + "():\n    return " + (i > 0 ? "f" + std::to_string(i - 1) + "()" : "0") + "\n";
    s += "\ndef slow" + std::to_string(i) + "():\n    return Model" + std::to_string(i) + "()\n";
    s += "\nclass Base" + std::to_string(i) + ":\n    def forward(self):\n        return helper" + std::to_string(i) +
         "()\n\nclass Model" + std::to_string(i) + "(Base" + std::to_string(i) + "):\n    pass\n";
    s += "\ndef helper" + std::to_string(i) + "():\n    return 1\n\ndef unused" + std::to_string(i) + "():\n    return 2\n";
    if (i % 3 == 0) s += "\nf" + std::to_string(i) + "()\n";  // import-time code: a dead `if fast:` branch
    core.emplace_back(m, s);
    init += "from core.m" + std::to_string(i) + " import f" + std::to_string(i) + "\n";
  }
  core.emplace_back("core/__init__.py", init);
  std::vector<std::pair<std::string, std::string>> scripts;
  for (int i = 0; i < 6; ++i) {
    std::string s = "import core\nfrom core.m" + std::to_string(i) + " import f" + std::to_string(i) +
                    ", unused" + std::to_string(i) + "\n";
    s += i % 2 ? "f" + std::to_string(i) + "(fast=True)\n" : "f" + std::to_string(i) + "()\n";
    if (i == 4) s += "unused4()\n";
    s += "\nif __name__ == '__main__':\n    print(1)\n";
    scripts.emplace_back("script" + std::to_string(i) + ".py", s);
  }
  auto files = core;
  files.insert(files.end(), scripts.begin(), scripts.end());
  ProgramModel all = build(files);
  ASSERT_EQ(all.programs().size(), scripts.size());
  for (auto& [path, text] : scripts) {
    auto one_files = core;
    one_files.emplace_back(path, text);
    ProgramModel alone = build(one_files);
    ASSERT_EQ(alone.programs().size(), 1u);
    auto expected = reach_summary(alone, alone.programs()[0]);
    EXPECT_EQ(reach_summary(all, program_of(all, path)), expected) << path;
    // the cases the test is about: the package's dead branches, and a script's own reach
    bool dead = std::any_of(expected.begin(), expected.end(), [](auto& s) { return s.starts_with("dead core/m3.py"); });
    EXPECT_EQ(dead, path != "script3.py") << path;  // script3 calls f3(fast=True)
  }
  const Function& unused4 = fn(all, "core/m4.py", "unused4");
  EXPECT_TRUE(program_of(all, "script4.py").reaches(&unused4));
  EXPECT_FALSE(program_of(all, "script2.py").reaches(&unused4));
}

// A tree made to stress the shared walks: an entry inside the package's import closure (the
// package imports a script), main-guarded calls in package modules, registered functions and
// classes, bases across modules, dead branches from parameters and from `self` flags, and a
// library-like entry reached through a test module. With hubs on and off, on one thread and
// four, every program reaches the same functions and classes with the same dead branches (and
// every function has the same "CUDA surely initialised before" call, where it has one).
TEST(ProgramReach, SharedWalksGiveTheAnswersOfWalksOnTheirOwn) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(source_dir()) / "tests/resources/reach_hubs";
  std::vector<std::string> paths;
  for (auto& e : fs::recursive_directory_iterator(root))
    if (e.path().extension() == ".py") paths.push_back(e.path().string());
  std::sort(paths.begin(), paths.end());
  ASSERT_GE(paths.size(), 20u);
  auto build_with = [&](bool hubs, unsigned threads) {
    set_reach_hubs(hubs);
    std::vector<std::unique_ptr<SourceFile>> srcs;
    for (auto& p : paths) srcs.push_back(std::make_unique<SourceFile>(fs::relative(p, root).string(), read_file(p)));
    ProgramModel pm = ProgramModel::build(std::move(srcs), threads);
    set_reach_hubs(true);
    return pm;
  };
  auto summary = [](const ProgramModel& pm) {
    std::vector<std::string> out;
    for (auto& p : pm.programs()) {
      std::string s = "program " + (p.entry ? p.entry->path : "?");
      for (auto& x : reach_summary(pm, p)) s += "\n  " + x;
      out.push_back(s);
    }
    for (const Function* f : pm.functions())
      if (const Call* c = pm.cuda_initialised_before(f))
        out.push_back("cuda " + f->mod->path + ":" + f->qualname + " <- " + c->mod->path + ":" +
                      std::to_string(c->mod->tree.pos(c->node).line));
    std::sort(out.begin(), out.end());
    return out;
  };
  auto expected = summary(build_with(false, 1));
  EXPECT_EQ(summary(build_with(true, 1)), expected);
  EXPECT_EQ(summary(build_with(true, 4)), expected);
  // what makes the tree worth it
  ProgramModel pm = build_with(true, 2);
  EXPECT_GE(pm.programs().size(), 10u);
  size_t with_dead = 0;
  for (auto& p : pm.programs()) with_dead += !p.dead_branches.empty();
  EXPECT_GE(with_dead, 2u);
  EXPECT_TRUE(std::any_of(pm.programs().begin(), pm.programs().end(),
                          [](const Program& p) { return p.entry && p.entry->path == "script_a.py"; }));
}
