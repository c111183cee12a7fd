// `trainlint merge`: the reports of the two "nodes" of one torchrun job (two launches with
// --nnodes 2 over loopback, gloo, one rank each), each under `trainlint run --output node-K.json`,
// merged into one: both ranks' figures, the slowest rank named, the straggler shown.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "analyzer/runtime/boot_files.h"
#include "analyzer/runtime/merge.h"
#include "support/test_support.h"

namespace fs = std::filesystem;
using nlohmann::json;
using tl::test::read_file;
using tl::test::TempDir;
using tl::test::write_file;

namespace {

int shell(const std::string& cmd) {
  int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A DDP loop on the CPU: rank 1's dataset takes 15 ms a sample (a slow disk on that node), so
// rank 0 waits for it at every all-reduce.
const char* kTrain = R"(import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset


class Samples(Dataset):
    def __init__(self, delay):
        self.delay = delay

    def __len__(self):
        return 32

    def __getitem__(self, i):
        time.sleep(self.delay)
        g = torch.Generator().manual_seed(i)
        return torch.randn(16, generator=g), torch.randn(1, generator=g)


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    loader = DataLoader(Samples(0.015 if rank == 1 else 0.0), batch_size=4)
    model = DDP(nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for x, y in loader:
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
)";

// Debian's torch 1.13 torchrun fails on Python 3.11 before it starts anything: Std.from_str("0")
// returns None there (an enum change). This is the real torch.distributed.run with that one fix.
const char* kTorchrun = R"(#!/usr/bin/python3
import sys

from torch.distributed.elastic.multiprocessing import api

_from_str = api.Std.from_str
api.Std.from_str = staticmethod(lambda vm: api.Std(int(vm)) if vm.isdigit() else _from_str(vm))

from torch.distributed.run import main

sys.exit(main())
)";

int free_port() {
  // the kernel's choice for a socket bound to port 0, read back through Python (no C socket code here)
  TempDir t;
  shell("/usr/bin/python3 -c \"import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); "
        "print(s.getsockname()[1])\" >'" + (t.path / "p").string() + "'");
  return std::atoi(read_file(t.path / "p").c_str());
}

json rank_of(const json& merged, int64_t rank) {
  for (auto& r : merged["ranks"])
    if (r["rank"] == rank) return r;
  return json();
}

}  // namespace

TEST(RuntimeMergeCommand, RefusesAFileThatIsNotARunReport) {
  TempDir d;
  write_file(d.path / "lint.json", R"({"schema_version": 1, "findings": []})");
  auto r = tl::test::run_cli("merge lint.json", d.path.string());
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("not a `trainlint run --format json` report"), std::string::npos) << r.err;
}

TEST(RuntimeMergeCommand, TwoTorchrunNodesOverLoopback) {
  if (tl::runtime::boot_files().empty()) GTEST_SKIP() << "the bootstrap (shim/python) was not in the tree at build time";
  TempDir d;
  write_file(d.path / "train.py", kTrain);
  write_file(d.path / "torchrun", kTorchrun);
  fs::permissions(d.path / "torchrun", fs::perms::owner_all);
  const int port = free_port();
  ASSERT_GT(port, 0);
  auto node = [&](int k) {
    return "cd '" + d.path.string() + "' && '" + tl::test::binary() + "' run --format json --output node-" +
           std::to_string(k) + ".json -- ./torchrun --nnodes 2 --nproc_per_node 1 --node_rank " + std::to_string(k) +
           " --master_addr 127.0.0.1 --master_port " + std::to_string(port) +
           " --monitor_interval 0.2 train.py >node-" + std::to_string(k) + ".out 2>&1";
  };
  int rc0 = -1;
  std::thread t0([&] { rc0 = shell(node(0)); });
  int rc1 = shell(node(1));
  t0.join();
  ASSERT_EQ(rc0, 0) << read_file(d.path / "node-0.out");
  ASSERT_EQ(rc1, 0) << read_file(d.path / "node-1.out");

  auto j = tl::test::run_cli("merge --format json node-0.json node-1.json", d.path.string());
  ASSERT_EQ(j.rc, 0) << j.err;
  json m = json::parse(j.out);
  ASSERT_EQ(m["ranks"].size(), 2u) << m.dump(1);
  for (int64_t k : {0, 1}) {
    json r = rank_of(m, k);
    ASSERT_TRUE(r.is_object()) << m.dump(1);
    EXPECT_EQ(r["file"], "node-" + std::to_string(k) + ".json");
    EXPECT_EQ(r["steps"], 8) << r.dump();
    ASSERT_TRUE(r["step_ms"].is_number()) << r.dump();
  }
  // rank 1 waits about 60 ms a step for its batches, rank 0 for nothing: rank 1 sets the pace
  EXPECT_GT(rank_of(m, 1)["data_wait_ms_per_step"].get<double>(), 40.0) << m.dump(1);
  EXPECT_LT(rank_of(m, 0)["data_wait_ms_per_step"].get<double>(), 20.0) << m.dump(1);
  EXPECT_EQ(m["slowest_rank"], 1) << m.dump(1);
  ASSERT_EQ(m["stragglers"].size(), 1u) << m.dump(1);
  EXPECT_EQ(m["stragglers"][0]["rank"], 1);

  auto t = tl::test::run_cli("merge node-0.json node-1.json", d.path.string());
  ASSERT_EQ(t.rc, 0) << t.err;
  EXPECT_NE(t.out.find("trainlint merge: 2 nodes, 2 ranks"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("slowest rank: 1 (node-1.json)"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("straggler: rank 1: waits"), std::string::npos) << t.out;
}
