// The ProgramModel on common idioms it must see (issue 9, recall): data loops through wrapper
// names and loaders handed to helpers, calls through instances (also instances passed as
// arguments), placement through frameworks and known-on-accelerator values, loaders rebuilt in
// some epochs only, and builtins behind star imports of modules outside the analysis.
#include <gtest/gtest.h>

#include "analyzer/python/model.h"
#include "support/model_support.h"

using namespace tl;
using namespace tl::py;

namespace {

using Model = tl::test::BuiltModel;

Model build(const std::vector<std::pair<std::string, std::string>>& files) { return tl::test::build_model(files); }

}  // namespace

TEST(ModelRecall, WrapperBoundToANameIsADataLoop) {
  auto b = build({{"t.py", R"(from tqdm import tqdm

def validate(model, val_loader):
    model.eval()
    pbar = tqdm(val_loader, desc="val")
    for x, y in pbar:
        model(x)
    it = tqdm(enumerate(val_loader), total=len(val_loader))
    for i, (x, y) in it:
        model(x)
    ticks = tqdm(range(10))
    for k in ticks:
        model.zero_grad()
    n = len(val_loader)
    for j in range(n):
        model.zero_grad()
)"}});
  EXPECT_EQ(b.loop_at_line("t.py", 6), LoopKind::EvalStep);
  EXPECT_EQ(b.loop_at_line("t.py", 9), LoopKind::EvalStep);
  EXPECT_EQ(b.loop_at_line("t.py", 12), LoopKind::Other);  // a progress bar over a range
  EXPECT_EQ(b.loop_at_line("t.py", 15), LoopKind::Other);  // range(len(loader)) is not the loader
  // the index of enumerate, even behind the tqdm name, is a number and not a batch tensor
  EXPECT_EQ(b.pm.type_of(b.mod("t.py"), b.name_at("t.py", 10, "x")), TypeKind::Tensor);
  const Module& m = b.mod("t.py");
  NodeId i = kNone;
  for (NodeId n = 0; n < m.tree.size(); ++n)
    if (m.tree.is(n, K::Identifier) && m.tree.text(n) == "i" && m.tree.pos(n).line == 9) i = n;
  ASSERT_NE(i, kNone);
  EXPECT_NE(b.pm.type_of(m, i), TypeKind::Tensor);
}

TEST(ModelRecall, InstancesPassedAsArgumentsAreCalledThroughForwardAndCall) {
  auto b = build({{"t.py", R"(import torch
import torch.nn as nn

class Smooth(nn.Module):
    def forward(self, pred, target):
        return (pred - target).abs().mean()

class Other(nn.Module):
    def forward(self, pred, target):
        return (pred - target).pow(2).mean()

class Scaler:
    def __init__(self):
        self._scaler = torch.cuda.amp.GradScaler()
    def __call__(self, loss, optimizer, update_grad=True):
        self._scaler.scale(loss).backward()
        if update_grad:
            self._scaler.step(optimizer)
            self._scaler.update()

def train_one_epoch(model, loader, criterion, aux, optimizer, loss_scaler):
    for x, y in loader:
        out = model(x)
        loss = criterion(out, y) + aux(out, y)
        loss_scaler(loss, optimizer)

def main(model, loader, optimizer):
    criterion = Smooth()
    scaler = Scaler()
    for epoch in range(3):
        train_one_epoch(model, loader, criterion, Smooth(), optimizer, scaler)
    train_one_epoch(model, loader, criterion, Other(), optimizer, scaler)
)"}});
  const Call& crit = b.call("t.py", "criterion(out");
  ASSERT_NE(crit.target, nullptr);
  EXPECT_EQ(crit.target->qualname, "Smooth.forward");
  EXPECT_TRUE(crit.implicit_self);
  // filled with a Smooth by one caller and an Other by the other: unknown
  EXPECT_EQ(b.call("t.py", "aux(out").target, nullptr);
  const Call& sc = b.call("t.py", "loss_scaler(loss");
  ASSERT_NE(sc.target, nullptr);
  EXPECT_EQ(sc.target->qualname, "Scaler.__call__");
  // the backward and the optimizer step sit in the scaler's __call__: a training step loop
  EXPECT_EQ(b.loop_at_line("t.py", 22), LoopKind::TrainStep);
  EXPECT_EQ(b.loop_at_line("t.py", 30), LoopKind::Epoch);
}

TEST(ModelRecall, ModelBuiltThenMovedIsAnInstanceOfItsClass) {
  auto b = build({{"t.py", R"(import torch.nn as nn

class Net(nn.Module):
    def forward(self, x):
        return x

def main(device, x):
    net = Net().to(device)
    net(x)
    other = Net()
    other = other.cuda()
    other(x)
    wrapped = Net()
    wrapped = nn.DataParallel(wrapped)
    wrapped(x)
)"}});
  ASSERT_NE(b.call("t.py", "net(x)").target, nullptr);
  ASSERT_NE(b.call("t.py", "other(x)").target, nullptr);
  EXPECT_EQ(b.call("t.py", "wrapped(x)").target, nullptr);  // a DataParallel wrapper, not a Net
}

TEST(ModelRecall, KnownPlacementOnTheAccelerator) {
  auto b = build({{"t.py", R"(import torch

def step(model, loader, noise_scale):
    device = torch.device("cuda")
    net = torch.nn.Linear(4, 4).to(device)
    for x, y in loader:
        raw = x
        x = x.to(device)
        moved = x
        out = net(x)
        cpu = y.to("cpu")
        h = torch.zeros(4, device=device)
        a, b = x.cuda(), y
        use(raw, moved, out, cpu, h, a, b, noise_scale)
)"}});
  const Module& m = b.mod("t.py");
  auto on = [&](std::string_view name) { return b.pm.on_accelerator(m, b.name_at("t.py", 14, name)); };
  EXPECT_FALSE(on("raw"));  // the batch as the loader yields it
  EXPECT_TRUE(on("moved"));
  EXPECT_TRUE(on("out"));   // the output of a model moved to the GPU
  EXPECT_FALSE(on("cpu"));
  EXPECT_TRUE(on("h"));
  EXPECT_TRUE(on("a"));
  EXPECT_FALSE(on("b"));
  EXPECT_FALSE(on("noise_scale"));  // a parameter: unknown
}

TEST(ModelRecall, LoaderRebuiltUnderAOneTimeFlagDoesNotRunEveryEpoch) {
  auto b = build({{"t.py", R"(from torch.utils.data import DataLoader

def main(ds, model, opt, cfg):
    unfrozen = False
    for epoch in range(100):
        a = DataLoader(ds, num_workers=4)
        if cfg.rebuild:
            b = DataLoader(ds, num_workers=4)
        if epoch >= 50 and not unfrozen:
            c = DataLoader(ds, num_workers=4)
            unfrozen = True
        for x in c:
            model(x).backward()
            opt.step()
)"}});
  const Module& m = b.mod("t.py");
  EXPECT_TRUE(b.pm.runs_every_epoch(m, b.call("t.py", "DataLoader(", 0).node));
  EXPECT_TRUE(b.pm.runs_every_epoch(m, b.call("t.py", "DataLoader(", 1).node));  // configuration guard
  EXPECT_FALSE(b.pm.runs_every_epoch(m, b.call("t.py", "DataLoader(", 2).node));
}

TEST(ModelRecall, DeviceMapPlacesTheProgramOnTheAccelerator) {
  auto b = build({{"auto.py", "from transformers import AutoModel\nm = AutoModel.from_pretrained('x', device_map='auto')\n"},
                  {"var.py", "from transformers import AutoModel\nDM = 'cuda:0'\nm = AutoModel.from_pretrained('x', device_map=DM)\n"},
                  {"rank.py", "import os\nfrom transformers import AutoModel\nlocal_rank = int(os.environ['LOCAL_RANK'])\n"
                              "m = AutoModel.from_pretrained('x', device_map={'': local_rank})\n"},
                  {"cpu.py", "from transformers import AutoModel\nm = AutoModel.from_pretrained('x', device_map='cpu')\n"},
                  {"none.py", "from transformers import AutoModel\nm = AutoModel.from_pretrained('x')\n"}});
  EXPECT_TRUE(b.pm.programs_use_accelerator(b.mod("auto.py")));
  EXPECT_TRUE(b.pm.programs_use_accelerator(b.mod("var.py")));
  EXPECT_TRUE(b.pm.programs_use_accelerator(b.mod("rank.py")));
  EXPECT_FALSE(b.pm.programs_use_accelerator(b.mod("cpu.py")));
  EXPECT_FALSE(b.pm.programs_use_accelerator(b.mod("none.py")));
}

TEST(ModelRecall, StarImportsOutsideTheAnalysisKeepBuiltins) {
  auto b = build({{"ext.py", "from my_utils import *\nprint(1)\nlen([])\nmax(1, 2)\nsetup()\n"},
                  {"helpers.py", "def print(*a):\n    pass\n"},
                  {"local.py", "from helpers import *\nprint(1)\n"}});
  EXPECT_EQ(b.call("ext.py", "print(").qname, "builtins.print");
  EXPECT_EQ(b.call("ext.py", "len(").qname, "builtins.len");
  EXPECT_EQ(b.call("ext.py", "max(").qname, "");    // numpy's star import replaces max: unknown
  EXPECT_EQ(b.call("ext.py", "setup(").qname, "");  // may come from my_utils: unknown
  EXPECT_EQ(b.call("local.py", "print(").qname, "");
  EXPECT_NE(b.call("local.py", "print(").target, nullptr);  // the analysed module's print
}
