// Bad input found by review: each gets a clear message or a well-formed report, never a crash or
// lost output.
#include <gtest/gtest.h>

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

// TL101 at 19:13 under --select TL101.
const char* kTrainGc = R"(import gc

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def train(model, optimizer, epochs=3):
    ds = TensorDataset(torch.randn(512, 16), torch.randint(0, 2, (512,)))
    loader = DataLoader(ds, batch_size=32, num_workers=4, pin_memory=True)
    model = model.cuda()
    for epoch in range(epochs):
        for x, y in loader:
            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            gc.collect()
)";

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

}  // namespace
