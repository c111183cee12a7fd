// End-to-end tests of `trainlint --format sarif|github|gitlab`, `--output`, `--statistics` and
// `--exit-zero`: what a CI job sees on stdout, in the file it uploads, and in the exit status.
// Every SARIF log is validated against the official SARIF 2.1.0 schema.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "rules/registry.h"
#include "support/sarif_validate.h"
#include "support/test_support.h"

namespace fs = std::filesystem;
using nlohmann::json;
using tl::test::CliResult;
using tl::test::run_cli;
using tl::test::TempDir;
using tl::test::write_file;

namespace {

// TL101 at 20:13 (`gc.collect()` every step), its step loop `for images, labels in loader:` at
// 14:9. Under the full catalog also TL502 (no mixed precision, info).
const char* kTrain = R"(import gc

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def train(model, optimizer, epochs=3):
    ds = TensorDataset(torch.randn(512, 16), torch.randint(0, 2, (512,)))
    loader = DataLoader(ds, batch_size=32, num_workers=4, pin_memory=True, persistent_workers=True)
    model = model.cuda()
    criterion = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        for images, labels in loader:
            images, labels = images.cuda(non_blocking=True), labels.cuda(non_blocking=True)
            loss = criterion(model(images), labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            gc.collect()
)";

// TL201 and TL202 at 8:10 (a DataLoader without workers or pinned memory in a program that trains
// on the GPU); under the full catalog also TL502 at 12:5.
const char* kLoaders = R"(import torch
from torch.utils.data import DataLoader

model = torch.nn.Linear(8, 1).cuda()
optimizer = torch.optim.Adam(model.parameters())

dataset = torch.load("pairs.pt", map_location="cpu")
loader = DataLoader(dataset, batch_size=16)
for x, y in loader:
    loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
)";

// A syntax error at line 7; nothing to find before it.
const char* kBroken = R"(import torch


def build(width):
    return torch.nn.Linear(width, width)

def broken(:
    pass
)";

// A checkout: train.py, a folder with a space and a file with a non-ASCII name, a syntax error.
struct Checkout {
  TempDir dir;
  fs::path root() const { return dir.path; }
  std::string cwd() const { return dir.path.string(); }
  Checkout() {
    write_file(dir.path / "train.py", kTrain);
    write_file(dir.path / "data loaders" / "loader_ü.py", kLoaders);
    write_file(dir.path / "broken.py", kBroken);
  }
};

json parse(const std::string& s) {
  json j;
  EXPECT_NO_THROW(j = json::parse(s)) << s;
  return j;
}

const json* result_for(const json& log, const std::string& rule, const std::string& uri) {
  for (auto& r : log["runs"][0]["results"])
    if (r["ruleId"] == rule && r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == uri) return &r;
  return nullptr;
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> v;
  size_t start = 0;
  while (start < s.size()) {
    size_t nl = s.find('\n', start);
    if (nl == std::string::npos) nl = s.size();
    v.push_back(s.substr(start, nl - start));
    start = nl + 1;
  }
  return v;
}

bool contains(const std::string& s, const std::string& p) { return s.find(p) != std::string::npos; }

// ---- SARIF ------------------------------------------------------------------------------------

TEST(SarifCli, ExamplesAreValidSarif) {
  auto r = run_cli("--format sarif examples/");
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_EQ(r.err, "");
  auto v = tl::test::validate_sarif(r.out);
  EXPECT_EQ(v.rc, 0) << v.output;
  json log = parse(r.out);
  auto& run = log["runs"][0];
  EXPECT_EQ(run["tool"]["driver"]["rules"].size(), tl::registry().size());
  // the TL101 of the README: examples/train_bad.py:153:17, its step loop at 141:13
  const json* tl101 = result_for(log, "TL101", "examples/train_bad.py");
  ASSERT_NE(tl101, nullptr) << r.out;
  EXPECT_EQ((*tl101)["locations"][0]["physicalLocation"]["region"]["startLine"], 153);
  EXPECT_EQ((*tl101)["locations"][0]["physicalLocation"]["region"]["startColumn"], 17);
  EXPECT_EQ((*tl101)["relatedLocations"][0]["physicalLocation"]["region"]["startLine"], 141);
  EXPECT_EQ(run["originalUriBaseIds"]["%SRCROOT%"]["uri"], "file://" + tl::test::source_dir() + "/");
}

TEST(SarifCli, ProjectWithNotesSpacesAndASyntaxError) {
  Checkout c;
  auto r = run_cli("--format sarif .", c.cwd());
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_EQ(r.err, "");  // file messages are in the log, not on stderr
  auto v = tl::test::validate_sarif(r.out);
  EXPECT_EQ(v.rc, 0) << v.output;
  json log = parse(r.out);

  const json* gc = result_for(log, "TL101", "train.py");
  ASSERT_NE(gc, nullptr) << r.out;
  EXPECT_EQ((*gc)["level"], "warning");
  EXPECT_EQ((*gc)["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"], "%SRCROOT%");
  EXPECT_EQ((*gc)["locations"][0]["physicalLocation"]["region"],
            json({{"startLine", 20}, {"startColumn", 13}, {"endLine", 20}, {"endColumn", 25}}));
  auto& related = (*gc)["relatedLocations"][0];
  EXPECT_EQ(related["id"], 1);
  EXPECT_EQ(related["message"]["text"], "runs every iteration of this training step loop");
  EXPECT_EQ(related["physicalLocation"]["region"]["startLine"], 14);
  EXPECT_TRUE(contains((*gc)["message"]["text"], "([runs every iteration of this training step loop](1))"))
      << (*gc)["message"];
  size_t idx = (*gc)["ruleIndex"];
  EXPECT_EQ(log["runs"][0]["tool"]["driver"]["rules"][idx]["id"], "TL101");

  // the fingerprint is the one the JSON report (and the baseline) uses
  auto j = run_cli("--format json --select TL101 .", c.cwd());
  json doc = parse(j.out);
  ASSERT_EQ(doc["findings"].size(), 1u);
  EXPECT_EQ((*gc)["partialFingerprints"]["trainlintFingerprint/v1"], doc["findings"][0]["fingerprint"]);

  // a folder with a space and a non-ASCII file name: percent-encoded relative URIs
  EXPECT_NE(result_for(log, "TL201", "data%20loaders/loader_%C3%BC.py"), nullptr) << r.out;
  EXPECT_NE(result_for(log, "TL202", "data%20loaders/loader_%C3%BC.py"), nullptr) << r.out;

  // the syntax error is a tool execution notification with its position
  auto& inv = log["runs"][0]["invocations"][0];
  EXPECT_EQ(inv["executionSuccessful"], true);
  ASSERT_EQ(inv["toolExecutionNotifications"].size(), 1u) << inv;
  auto& note = inv["toolExecutionNotifications"][0];
  EXPECT_EQ(note["level"], "warning");
  EXPECT_TRUE(note["message"]["text"].get<std::string>().starts_with("syntax error")) << note;
  EXPECT_EQ(note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "broken.py");
  EXPECT_EQ(note["locations"][0]["physicalLocation"]["region"]["startLine"], 7);
}

TEST(SarifCli, UnreadablePathMakesTheRunUnsuccessful) {
  Checkout c;
  auto r = run_cli("--format sarif train.py missing.py", c.cwd());
  EXPECT_EQ(r.rc, 2);
  auto v = tl::test::validate_sarif(r.out);
  EXPECT_EQ(v.rc, 0) << v.output;
  json log = parse(r.out);
  auto& inv = log["runs"][0]["invocations"][0];
  EXPECT_EQ(inv["executionSuccessful"], false);
  EXPECT_EQ(inv["toolExecutionNotifications"][0]["level"], "error");
  EXPECT_EQ(inv["toolExecutionNotifications"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "missing.py");
}

TEST(SarifCli, FilesOutsideTheCurrentFolderGetAbsoluteUris) {
  Checkout c;
  fs::create_directories(c.root() / "jobs");
  auto r = run_cli("--format sarif --select TL101 ../train.py", (c.root() / "jobs").string());
  EXPECT_EQ(r.rc, 1) << r.err;
  auto v = tl::test::validate_sarif(r.out);
  EXPECT_EQ(v.rc, 0) << v.output;
  json log = parse(r.out);
  auto& art = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"];
  EXPECT_EQ(art["uri"], "file://" + c.cwd() + "/train.py");
  EXPECT_FALSE(art.contains("uriBaseId"));
}

// ---- GitHub and GitLab ------------------------------------------------------------------------

TEST(GithubCli, AnnotationsForFindingsAndFileMessages) {
  Checkout c;
  auto r = run_cli("--format github .", c.cwd());
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "");
  auto ls = lines_of(r.out);
  std::set<std::string> starts;
  for (auto& l : ls) {
    EXPECT_TRUE(l.starts_with("::error ") || l.starts_with("::warning ") || l.starts_with("::notice ")) << l;
    starts.insert(l.substr(0, l.find("::", 2)));
  }
  EXPECT_TRUE(starts.count("::warning file=train.py,line=20,col=13,endLine=20,endColumn=25,title=TL101 gc-collect-per-step"))
      << r.out;
  EXPECT_TRUE(starts.count("::warning file=data loaders/loader_ü.py,line=8,col=10,endLine=8,endColumn=44,"
                           "title=TL201 dataloader-no-workers"))
      << r.out;
  bool syntax = false, note = false;
  for (auto& l : ls) {
    if (l.starts_with("::warning file=broken.py,line=7,") && contains(l, ",title=trainlint::syntax error")) syntax = true;
    if (l.starts_with("::warning file=train.py,line=20,") &&
        contains(l, "%0Anote: train.py:14:9: runs every iteration of this training step loop"))
      note = true;
  }
  EXPECT_TRUE(syntax) << r.out;
  EXPECT_TRUE(note) << r.out;
}

TEST(GitlabCli, CodeQualityReport) {
  Checkout c;
  auto r = run_cli("--format gitlab .", c.cwd());
  EXPECT_EQ(r.rc, 1);
  json issues = parse(r.out);
  ASSERT_TRUE(issues.is_array());
  std::set<std::string> fps, where;
  for (auto& i : issues) {
    fps.insert(i["fingerprint"].get<std::string>());
    where.insert(i["check_name"].get<std::string>() + " " + i["location"]["path"].get<std::string>() + ":" +
                 std::to_string(i["location"]["lines"]["begin"].get<int>()) + " " + i["severity"].get<std::string>());
  }
  EXPECT_EQ(fps.size(), issues.size());
  EXPECT_TRUE(where.count("TL101 train.py:20 major")) << r.out;
  EXPECT_TRUE(where.count("TL201 data loaders/loader_ü.py:8 major")) << r.out;
  EXPECT_TRUE(where.count("file-message broken.py:7 minor")) << r.out;
}

// ---- --output, --exit-zero, --statistics ------------------------------------------------------

TEST(OutputOption, SarifToTheFileTextToStdout) {
  Checkout c;
  auto r = run_cli("--format sarif --output 'reports/trainlint out.sarif' .", c.cwd());
  EXPECT_EQ(r.rc, 2) << "the folder `reports` does not exist";
  EXPECT_TRUE(contains(r.err, "cannot write reports/trainlint out.sarif")) << r.err;

  r = run_cli("--format sarif --output 'trainlint out.sarif' .", c.cwd());
  EXPECT_EQ(r.rc, 1);
  // stdout: the text report, as without --output; file messages on stderr
  EXPECT_TRUE(contains(r.out, "train.py:20:13: warning: `gc.collect()`")) << r.out;
  EXPECT_TRUE(contains(r.out, " | ")) << "source excerpts";
  EXPECT_TRUE(contains(r.err, "broken.py:7:")) << r.err;
  // the file: the SARIF log
  auto file = c.root() / "trainlint out.sarif";
  auto v = tl::test::validate_sarif_files({file});
  EXPECT_EQ(v.rc, 0) << v.output;
  json log = parse(tl::test::read_file(file));
  EXPECT_NE(result_for(log, "TL101", "train.py"), nullptr);
}

TEST(OutputOption, JsonAndTextFiles) {
  Checkout c;
  auto r = run_cli("--format json -o report.json --select TL101 train.py", c.cwd());
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(r.out.starts_with("train.py:20:13: warning:")) << r.out;
  json doc = parse(tl::test::read_file(c.root() / "report.json"));
  EXPECT_EQ(doc["schema_version"], 1);
  EXPECT_EQ(doc["findings"][0]["code"], "TL101");

  r = run_cli("--color always --output report.txt --select TL101 train.py", c.cwd());
  std::string text = tl::test::read_file(c.root() / "report.txt");
  EXPECT_TRUE(text.starts_with("train.py:20:13: warning:")) << text;  // never coloured in a file
  EXPECT_TRUE(contains(r.out, "\033[")) << "stdout keeps --color always";
}

TEST(ExitZero, FindingsDoNotFailButErrorsDo) {
  Checkout c;
  auto r = run_cli("--exit-zero train.py", c.cwd());
  EXPECT_EQ(r.rc, 0);
  EXPECT_TRUE(contains(r.out, "[TL101 gc-collect-per-step]")) << r.out;
  r = run_cli("--exit-zero --format sarif --output out.sarif train.py", c.cwd());
  EXPECT_EQ(r.rc, 0);
  r = run_cli("--exit-zero train.py missing.py", c.cwd());
  EXPECT_EQ(r.rc, 2) << "an unreadable path is still an error";
  r = run_cli("--exit-zero --format xml train.py", c.cwd());
  EXPECT_EQ(r.rc, 2) << "a usage error is still an error";
}

TEST(StatisticsOption, CountsPerRule) {
  Checkout c;
  auto r = run_cli("--statistics --select TL1,TL2 .", c.cwd());
  EXPECT_EQ(r.rc, 1) << "statistics do not change the exit status";
  EXPECT_EQ(r.out,
            "1\tTL101\t[ ] gc-collect-per-step\n"
            "1\tTL201\t[ ] dataloader-no-workers\n"
            "1\tTL202\t[*] dataloader-no-pin-memory\n")
      << "[*]: a safe fix is offered (TL202 adds pin_memory=True)";
  auto j = run_cli("--statistics --format json --select TL1,TL2 .", c.cwd());
  json stats = parse(j.out);
  ASSERT_EQ(stats.size(), 3u);
  EXPECT_EQ(stats[0], json({{"code", "TL101"}, {"slug", "gc-collect-per-step"}, {"severity", "warning"},
                            {"count", 1}, {"fixable", 0}, {"unsafe_fixable", 0}}));
}

TEST(StatisticsOption, WithAnUploadFormatNeedsOutput) {
  Checkout c;
  auto r = run_cli("--statistics --format sarif .", c.cwd());
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(contains(r.err, "--output")) << r.err;
  r = run_cli("--statistics --format sarif --output log.sarif --select TL101 .", c.cwd());
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "1\tTL101\tgc-collect-per-step\n");
  auto v = tl::test::validate_sarif_files({c.root() / "log.sarif"});
  EXPECT_EQ(v.rc, 0) << v.output;
}

TEST(HelpText, NamesTheFormatsAndOptions) {
  auto r = run_cli("--help");
  EXPECT_EQ(r.rc, 0);
  for (const char* s : {"sarif", "github", "gitlab", "--output", "--statistics", "--exit-zero"})
    EXPECT_TRUE(contains(r.out, s)) << s << "\n" << r.out;
}

}  // namespace
