// The ProgramModel's shared notions, one by one: name resolution, loop classes, varying
// guards, calls followed across functions and files, value facts, programs.
#include <gtest/gtest.h>

#include <algorithm>

#include "analyzer/python/model.h"
#include "support/model_support.h"
#include "support/test_support.h"

using namespace tl;
using namespace tl::py;

namespace {

using Built = tl::test::BuiltModel;

Built build(const std::vector<std::pair<std::string, std::string>>& files) { return tl::test::build_model(files); }

std::string qname_of_call(const Built& b, const std::string& path, const std::string& prefix) {
  return std::string(b.call(path, prefix).qname);
}

}  // namespace

// A scope's table: each name's bindings together in the order they were made, names in the order
// first bound, found by a scan (a few names) or through the index (more), and a second seal()
// keeping what the first one grouped.
TEST(ScopeNames, GroupsBindingsByNameInBindingOrderAndSealsAgain) {
  ScopeNames s;
  auto bind = [&](std::string_view name, NodeId stmt) {
    Binding b;
    b.stmt = stmt;
    s.add(name, b);
  };
  auto stmts = [&](std::string_view name) {
    std::vector<NodeId> out;
    if (const Bindings* bs = s.find(name))
      for (auto& b : *bs) out.push_back(b.stmt);
    return out;
  };
  bind("a", 1);
  bind("b", 2);
  bind("a", 3);
  s.seal();
  EXPECT_EQ(stmts("a"), (std::vector<NodeId>{1, 3}));
  EXPECT_EQ(stmts("b"), (std::vector<NodeId>{2}));
  EXPECT_EQ(s.find("c"), nullptr);
  EXPECT_EQ(s.find(""), nullptr);
  std::vector<std::string_view> order;
  for (auto& [name, bs] : s) order.push_back(name);
  EXPECT_EQ(order, (std::vector<std::string_view>{"a", "b"}));
  s.seal();  // nothing added: the same table
  EXPECT_EQ(stmts("a"), (std::vector<NodeId>{1, 3}));

  // past the scan's few names: the index, and what the first seal() grouped kept first
  static const std::vector<std::string> more = {"n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8", "n9", "n10"};
  for (size_t i = 0; i < more.size(); ++i) bind(more[i], static_cast<NodeId>(10 + i));
  bind("a", 99);
  s.seal();
  EXPECT_EQ(s.size(), 13u);
  EXPECT_EQ(stmts("a"), (std::vector<NodeId>{1, 3, 99}));
  EXPECT_EQ(stmts("b"), (std::vector<NodeId>{2}));
  for (size_t i = 0; i < more.size(); ++i) EXPECT_EQ(stmts(more[i]), (std::vector<NodeId>{static_cast<NodeId>(10 + i)}));
  EXPECT_EQ(s.find("n11"), nullptr);
  EXPECT_EQ(s.begin()->first, "a");
}

TEST(ModelNames, EveryImportAndAliasForm) {
  auto b = build({{"t.py", R"(import torch
import torch.nn as nn
import torch.utils.data as tud
from torch import nn as tnn
from torch.utils.data import DataLoader as DL
from gc import collect
import gc as g
DP = nn.DataParallel
torch.nn.DataParallel(m)
nn.DataParallel(m)
tnn.DataParallel(m)
DP(m)
DL(ds)
tud.DataLoader(ds)
collect()
g.collect()
)"}});
  EXPECT_EQ(qname_of_call(b, "t.py", "torch.nn.DataParallel"), "torch.nn.DataParallel");
  EXPECT_EQ(qname_of_call(b, "t.py", "nn.DataParallel"), "torch.nn.DataParallel");
  EXPECT_EQ(qname_of_call(b, "t.py", "tnn.DataParallel"), "torch.nn.DataParallel");
  EXPECT_EQ(qname_of_call(b, "t.py", "DP("), "torch.nn.DataParallel");
  EXPECT_EQ(qname_of_call(b, "t.py", "DL("), "torch.utils.data.DataLoader");
  EXPECT_EQ(qname_of_call(b, "t.py", "tud.DataLoader"), "torch.utils.data.DataLoader");
  EXPECT_EQ(qname_of_call(b, "t.py", "collect()"), "gc.collect");
  EXPECT_EQ(qname_of_call(b, "t.py", "g.collect()"), "gc.collect");
}

TEST(ModelNames, LocalDefinitionsShadowImports) {
  auto b = build({{"t.py", R"(from gc import collect
from torch.utils.data import DataLoader

class DataLoader:
    pass

def train():
    def collect():
        return 0
    collect()
    DataLoader()
)"}});
  EXPECT_EQ(qname_of_call(b, "t.py", "collect()"), "");
  EXPECT_EQ(qname_of_call(b, "t.py", "DataLoader()"), "");
  EXPECT_NE(b.call("t.py", "DataLoader()").target_class, nullptr);
}

TEST(ModelNames, RelativeAndStarImportsBetweenAnalysedFiles) {
  auto b = build({{"pkg/__init__.py", ""},
                  {"pkg/helpers.py", "import torch\nsave = torch.save\ndef dump(m):\n    torch.save(m, 'x')\n"},
                  {"pkg/util.py", "import gc\ndef free():\n    gc.collect()\n"},
                  {"pkg/train.py", "from .helpers import dump, save\nfrom .util import *\nfrom . import util\n"
                                   "dump(1)\nsave(2)\nfree()\nutil.free()\n"}});
  EXPECT_NE(b.call("pkg/train.py", "dump(").target, nullptr);
  EXPECT_EQ(b.call("pkg/train.py", "save(").qname, "torch.save");
  EXPECT_NE(b.call("pkg/train.py", "free(").target, nullptr);
  EXPECT_NE(b.call("pkg/train.py", "util.free(").target, nullptr);
}

TEST(ModelLoops, ClassifiesStepEpochAndNestedLoops) {
  auto b = build({{"t.py", R"(import torch
from torch.utils.data import DataLoader

def train(model, opt, loader, val_loader, epochs):
    for epoch in range(epochs):
        for x, y in loader:
            for micro in range(4):
                loss = model(x).sum()
                loss.backward()
            opt.step()
        with torch.no_grad():
            for x, y in val_loader:
                model(x)

def nanogpt(model, optimizer):
    for it in range(1000):
        x, y = get_batch("train")
        loss = model(x, y)
        loss.backward()
        optimizer.step()
)"}});
  EXPECT_EQ(b.loop_at_line("t.py", 5), LoopKind::Epoch);
  EXPECT_EQ(b.loop_at_line("t.py", 6), LoopKind::TrainStep);
  EXPECT_EQ(b.loop_at_line("t.py", 7), LoopKind::Other);  // micro-batches: part of the step
  EXPECT_EQ(b.loop_at_line("t.py", 12), LoopKind::EvalStep);
  EXPECT_EQ(b.loop_at_line("t.py", 16), LoopKind::TrainStep);  // rule 2: innermost loop with a step
}

TEST(ModelLoops, EpochLoopThroughCallsAcrossFiles) {
  auto b = build({{"engine.py", R"(def train_one_epoch(model, loader, optimizer):
    for batch in loader:
        optimizer.zero_grad()
        model(batch).backward()
        optimizer.step()
)"},
                  {"main.py", R"(from engine import train_one_epoch
for epoch in range(10):
    train_one_epoch(model, loader, optimizer)
)"}});
  EXPECT_EQ(b.loop_at_line("engine.py", 2), LoopKind::TrainStep);
  EXPECT_EQ(b.loop_at_line("main.py", 2), LoopKind::Epoch);
}

TEST(ModelGuards, VaryingAndNonVaryingGuards) {
  auto b = build({{"t.py", R"(import gc, torch
def train(args, rank, loader, opt, model):
    best = 0
    for i, (x, y) in enumerate(loader):
        loss = model(x)
        loss.backward()
        opt.step()
        acc = loss.item()
        if i % 100 == 0:
            gc.collect()
        if i == len(loader) - 1:
            gc.collect()
        if acc > best:
            gc.collect()
        if args.free:
            gc.collect()
        if rank == 0:
            gc.collect()
        if is_main_process():
            gc.collect()
        gc.collect() if i % 2 else None
        args.free and gc.collect()
        if args.smoke:
            gc.collect()
            break
)"}});
  EXPECT_FALSE(b.per_step("t.py", "gc.collect()", 0));  // %
  EXPECT_FALSE(b.per_step("t.py", "gc.collect()", 1));  // last iteration
  EXPECT_FALSE(b.per_step("t.py", "gc.collect()", 2));  // value assigned in the loop
  EXPECT_TRUE(b.per_step("t.py", "gc.collect()", 3));   // configuration
  EXPECT_TRUE(b.per_step("t.py", "gc.collect()", 4));   // rank
  EXPECT_TRUE(b.per_step("t.py", "gc.collect()", 5));   // is_main_process()
  EXPECT_FALSE(b.per_step("t.py", "gc.collect()", 6));  // ternary on the loop target
  EXPECT_TRUE(b.per_step("t.py", "gc.collect()", 7));   // `and` on configuration
  EXPECT_TRUE(b.per_step("t.py", "gc.collect()", 8));   // break right after does not make it periodic
}

TEST(ModelGuards, EarlyContinueMakesTheRestPeriodic) {
  auto b = build({{"t.py", R"(import gc
for i, batch in enumerate(train_loader):
    optimizer.step()
    if i >= max_steps:
        break
    gc.collect()
    if i % 10 != 0:
        continue
    gc.collect()
)"}});
  EXPECT_TRUE(b.per_step("t.py", "gc.collect()", 0));
  EXPECT_FALSE(b.per_step("t.py", "gc.collect()", 1));
}

TEST(ModelCalls, FollowedThreeLevelsAcrossFilesWithArguments) {
  auto b = build({{"a.py", R"(from b import level1
for step, batch in enumerate(loader):
    optimizer.step()
    level1(step)
)"},
                  {"b.py", "from c import level2\ndef level1(step):\n    level2(step)\n"},
                  {"c.py", R"(import gc
def level2(step):
    level3(step)
    gc.collect()

def level3(step):
    if step % 50 == 0:
        gc.collect()
    gc.collect()
)"}});
  EXPECT_TRUE(b.per_step("c.py", "gc.collect()", 0));   // level 2
  EXPECT_FALSE(b.per_step("c.py", "gc.collect()", 1));  // periodic in level 3
  EXPECT_TRUE(b.per_step("c.py", "gc.collect()", 2));   // level 3
  auto sc = b.pm.runs_every_step(b.mod("c.py"), b.call("c.py", "gc.collect()", 2).node);
  ASSERT_TRUE(sc.has_value());
  EXPECT_EQ(sc->chain.size(), 3u);  // level1 -> level2 -> level3
}

TEST(ModelCalls, FrameworkHooksAreStepBodies) {
  auto b = build({{"t.py", R"(import gc
import pytorch_lightning as pl
class Model(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        gc.collect()
        return self.net(batch).sum()
    def on_train_epoch_end(self):
        gc.collect()
)"}});
  EXPECT_TRUE(b.per_step("t.py", "gc.collect()", 0));
  EXPECT_FALSE(b.per_step("t.py", "gc.collect()", 1));
}

TEST(ModelValues, LiteralsArgparseDictsAndUnknowns) {
  auto b = build({{"t.py", R"(import argparse, os
from torch.utils.data import DataLoader
parser = argparse.ArgumentParser()
parser.add_argument("--workers", type=int, default=0)
parser.add_argument("--num-threads", type=int, default=4)
args = parser.parse_args()
zero = 0
kw = {"num_workers": 0, "batch_size": 8}
cuda_kw = {"batch_size": 8}
if args.cuda:
    cuda_kw.update({"num_workers": 1})
def make(ds, n):
    DataLoader(ds, num_workers=n)
DataLoader(ds, num_workers=zero)
DataLoader(ds, num_workers=args.workers)
DataLoader(ds, num_workers=args.num_threads)
DataLoader(ds, num_workers=os.cpu_count())
DataLoader(ds, **kw)
DataLoader(ds, **cuda_kw)
DataLoader(ds)
)"}});
  const Module& m = b.mod("t.py");
  auto vals = [&](int n) { return b.pm.keyword_values(m, b.call("t.py", "DataLoader(", n), "num_workers", 5); };
  auto only_zero = [](const ValueSet& v) {
    return v.all([](const Literal& l) { return l.kind == Literal::Kind::Int && l.text == "0"; }, true);
  };
  EXPECT_FALSE(only_zero(vals(0)));  // a parameter: unknown
  EXPECT_TRUE(only_zero(vals(1)));   // a name whose only value is 0
  EXPECT_TRUE(only_zero(vals(2)));   // argparse default 0
  EXPECT_FALSE(only_zero(vals(3)));  // argparse default 4
  EXPECT_FALSE(only_zero(vals(4)));  // os.cpu_count()
  EXPECT_TRUE(only_zero(vals(5)));   // **dict literal with 0
  EXPECT_FALSE(only_zero(vals(6)));  // dict updated with 1 under a condition
  EXPECT_TRUE(vals(7).maybe_absent);
  EXPECT_TRUE(only_zero(vals(7)));   // missing
}

TEST(ModelValues, ExecConfiguratorMakesGlobalsUnknown) {
  auto b = build({{"t.py", R"(from torch.utils.data import DataLoader
num_workers = 0
exec(open("configurator.py").read())
DataLoader(ds, num_workers=num_workers)
)"}});
  auto v = b.pm.keyword_values(b.mod("t.py"), b.call("t.py", "DataLoader("), "num_workers", 5);
  EXPECT_TRUE(v.unknown);
}

TEST(ModelPrograms, FactsStayWithinOneProgram) {
  auto b = build({{"gpu.py", "import torch\ndevice = torch.device('cuda')\nmodel.to(device)\n"},
                  {"cpu.py", "import torch\nmodel.to('cpu')\n"},
                  {"shared.py", "x = 1\n"},
                  {"uses_shared.py", "import shared\nimport torch\nmodel.cuda()\n"}});
  EXPECT_TRUE(b.pm.programs_use_accelerator(b.mod("gpu.py")));
  EXPECT_FALSE(b.pm.programs_use_accelerator(b.mod("cpu.py")));
  EXPECT_TRUE(b.pm.programs_use_accelerator(b.mod("shared.py")));  // imported by a GPU program
}

// An instance handed down through three functions in three files (one round of the parameter
// pass each), kept as an attribute on the way, resolves the call at the end; a parameter two
// callers fill with different classes stays unknown. The pass re-judges only what a round can
// change, which must give what judging everything again gives.
TEST(ModelCalls, ParameterInstancesHandedDownThroughSeveralFunctions) {
  auto b = build({{"train.py", R"(from losses import LabelSmoothing, Focal
from engine import run
from other import pick

def main():
    crit = LabelSmoothing()
    run(crit)
    a = LabelSmoothing()
    b = Focal()
    pick(a)
    pick(b)

if __name__ == "__main__":
    main()
)"},
                  {"losses.py", R"(import torch.nn as nn
class LabelSmoothing(nn.Module):
    def forward(self, x):
        return x

class Focal(nn.Module):
    def forward(self, x):
        return x
)"},
                  {"engine.py", R"(from steps import Stepper

def run(criterion):
    inner(criterion)

def inner(crit):
    s = Stepper(crit)
    s.step(1)
)"},
                  {"steps.py", R"(class Stepper:
    def __init__(self, loss_fn):
        self.loss_fn = loss_fn

    def step(self, x):
        return self.loss_fn(x)
)"},
                  {"other.py", R"(def pick(fn):
    return fn(3)
)"}});
  const py::Call& c = b.call("steps.py", "self.loss_fn(");
  ASSERT_NE(c.target, nullptr);
  EXPECT_EQ(c.target->qualname, "LabelSmoothing.forward");
  EXPECT_TRUE(c.implicit_self);
  EXPECT_EQ(b.call("other.py", "fn(").target, nullptr);  // LabelSmoothing or Focal
}

// The parameter pass judges functions and re-resolves calls on the threads: each round must give
// what one thread gives, whatever the threads. Twelve handed-down chains of different lengths (one
// round each hop, up to the pass's four), a parameter filled with two classes, and every call of
// every module compared between 1 and 8 threads.
TEST(ModelCalls, ParameterInstancesAreTheSameOnAnyNumberOfThreads) {
  std::vector<std::pair<std::string, std::string>> files;
  std::string losses = "import torch.nn as nn\n", train, main = "def main():\n";
  for (int k = 0; k < 12; ++k) {
    std::string K = std::to_string(k);
    losses += "class Loss" + K + "(nn.Module):\n    def forward(self, x):\n        return x\n";
    train += "from chain" + K + " import hop" + K + "_0\nfrom losses import Loss" + K + "\n";
    main += "    crit" + K + " = Loss" + K + "()\n    hop" + K + "_0(crit" + K + ")\n";
    if (k % 3 == 0) {  // a second class for the same parameter
      std::string other = std::to_string((k + 1) % 12);
      main += "    other" + K + " = Loss" + other + "()\n    hop" + K + "_0(other" + K + ")\n";
    }
    std::string chain;
    const int hops = 1 + k % 5;
    for (int h = 0; h < hops; ++h) {
      std::string fn = "hop" + K + "_" + std::to_string(h);
      if (h + 1 < hops) chain += "def " + fn + "(c):\n    return hop" + K + "_" + std::to_string(h + 1) + "(c)\n";
      else chain += "def " + fn + "(c):\n    return c(1)\n";
    }
    files.emplace_back("chain" + K + ".py", chain);
  }
  train += main + "\nif __name__ == \"__main__\":\n    main()\n";
  files.emplace_back("losses.py", losses);
  files.emplace_back("train.py", train);
  auto answers = [&](unsigned threads) {
    auto b = tl::test::build_model(files, threads);
    std::vector<std::string> out;
    for (auto& m : b.pm.modules())
      for (auto& c : m->calls)
        out.push_back(m->path + ":" + std::string(m->tree.text(c.node)) + " -> " +
                      (c.target ? c.target->qualname : "") + " / " + std::string(c.qname));
    std::sort(out.begin(), out.end());
    return out;
  };
  auto one = answers(1);
  int resolved = 0;
  for (auto& a : one)
    if (a.find("c(1) -> Loss") != std::string::npos) ++resolved;
  // the chains of up to four hops resolve (k % 5 < 4); those whose head is fed two classes
  // (k % 3 == 0: 0, 3, 6, 9) and the five-hop ones (4, 9) do not: 1, 2, 5, 7, 8, 10, 11
  EXPECT_EQ(resolved, 7);
  EXPECT_EQ(answers(8), one);
  EXPECT_EQ(answers(3), one);
}

// enclosing_function searches the function definitions by node id; it must name the function a
// walk up the parents finds, for every node: nested functions, methods, lambdas (not functions
// here), decorators, defaults and code after a nested function.
TEST(ModelScopes, EnclosingFunctionIsTheInnermostDefinitionAround) {
  auto b = build({{"a.py", R"(import functools
x = [lambda y: y + 1 for _ in range(3)]

def deco(f):
    @functools.wraps(f)
    def wrapper(*args, k=lambda: 0, **kw):
        def inner():
            return f(*args)
        z = inner()
        return z
    return wrapper

class Net:
    @deco
    def forward(self, x, d=len([1])):
        class Local:
            def m(self):
                return lambda q: q
        return Local().m()(x)

    def other(self):
        pass

def last():
    return 1
)"}});
  const py::Module& m = b.mod("a.py");
  size_t inside = 0;
  for (py::NodeId n = 0; n < m.tree.size(); ++n) {
    py::Function* walked = nullptr;
    for (py::NodeId p = n; p != py::kNone; p = m.tree.parent(p))
      if (m.tree.is(p, py::K::FunctionDefinition)) {
        walked = m.function_of_def(p);
        ASSERT_NE(walked, nullptr) << "every definition here is entered";
        break;
      }
    EXPECT_EQ(m.enclosing_function(n), walked) << "node " << n << ": " << m.tree.text(n);
    if (walked) ++inside;
  }
  EXPECT_GT(inside, 50u);
  EXPECT_LT(inside, m.tree.size());
  EXPECT_EQ(m.enclosing_function(py::kNone), nullptr);
}
