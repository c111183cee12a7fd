// End-to-end tests of the `trainlint` binary: what a user sees on stdout/stderr, the JSON
// document, exit codes, folder walking, and bad input (each gets a message; the run goes on).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace fs = std::filesystem;
using tl::test::CliResult;
using tl::test::kTrainGc;
using tl::test::run_cli;
using tl::test::TempDir;
using tl::test::write_file;

namespace {

// ---- realistic training snippets ------------------------------------------------------------


// TL301 at 5:9; TL201 and TL202 at 7:10. Nothing else under the full catalog (it trains, with one
// optimizer step, but has no training loop).
const char* kMulti = R"(import torch
import torch.nn as nn
from torch.utils.data import DataLoader

model = nn.DataParallel(nn.Linear(16, 2)).cuda()
ds = torch.load("features.pt", map_location="cpu")
loader = DataLoader(ds)
torch.optim.SGD(model.parameters(), lr=0.1).step()
)";

// TL204 (info) at 13:16 only, under the full catalog.
const char* kPil = R"(from PIL import Image
from torch.utils.data import Dataset


class Folder(Dataset):
    def __init__(self, paths):
        self.paths = paths

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        return Image.open(self.paths[i]).convert("RGB")
)";

// No findings under the full catalog: persistent pinned workers, DDP, autocast + GradScaler,
// periodic gc, no per-step logging or host sync.
const char* kClean = R"(import gc

import torch
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset


def main(model, optimizer, rank):
    model = DDP(model.cuda(rank), device_ids=[rank])
    scaler = torch.amp.GradScaler("cuda")
    ds = TensorDataset(torch.randn(256, 8), torch.randn(256, 1))
    loader = DataLoader(ds, batch_size=32, num_workers=4, pin_memory=True, persistent_workers=True)
    for step, (x, y) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.mse_loss(model(x.cuda(rank)), y.cuda(rank))
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        if step % 1000 == 0:
            gc.collect()
)";

// TL101 at 7:9 before a syntax error at line 9; under the full catalog also TL203 at 4:10.
const char* kSyntaxError = R"(import gc
from torch.utils.data import DataLoader

loader = DataLoader(range(10), num_workers=2, pin_memory=True)
for epoch in range(3):
    for batch in loader:
        gc.collect()

def broken(:
    pass
)";

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

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }
bool ends_with(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}
bool contains(const std::string& s, const std::string& p) { return s.find(p) != std::string::npos; }

std::string strip_ansi(const std::string& s) { return std::regex_replace(s, std::regex("\x1b\\[[0-9;]*m"), ""); }

// Runs a shell command line in `cwd`, capturing stdout and stderr (for things run_cli cannot do).
CliResult run_shell(const std::string& cmdline, const std::string& cwd) {
  TempDir t;
  std::string outp = (t.path / "out").string(), errp = (t.path / "err").string();
  std::string cmd = "cd '" + cwd + "' && " + cmdline + " >'" + outp + "' 2>'" + errp + "' </dev/null";
  int status = std::system(cmd.c_str());
  CliResult r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = tl::test::read_file(outp);
  r.err = tl::test::read_file(errp);
  return r;
}

nlohmann::json parse_json(const CliResult& r) {
  nlohmann::json j;
  EXPECT_NO_THROW(j = nlohmann::json::parse(r.out)) << r.out;
  return j;
}

// The set of "path code" of the findings in a JSON document.
std::set<std::string> path_codes(const nlohmann::json& j) {
  std::set<std::string> s;
  for (auto& f : j["findings"]) s.insert(f["path"].get<std::string>() + " " + f["code"].get<std::string>());
  return s;
}

std::set<std::string> codes(const nlohmann::json& j) {
  std::set<std::string> s;
  for (auto& f : j["findings"]) s.insert(f["code"].get<std::string>());
  return s;
}

// A project folder with the three snippets.
struct Project {
  TempDir dir;
  std::string cwd() const { return dir.path.string(); }
  Project() {
    write_file(dir.path / "train.py", kTrainGc);
    write_file(dir.path / "multi.py", kMulti);
    write_file(dir.path / "pil.py", kPil);
    write_file(dir.path / "clean.py", kClean);
  }
};

// ---- text output ------------------------------------------------------------------------------

TEST(CliOutput, FindingLineCaretAndNote) {
  Project p;
  auto r = run_cli("--select TL101 train.py", p.cwd());
  EXPECT_EQ(r.rc, 1) << r.out << r.err;
  EXPECT_EQ(r.err, "");
  auto ls = lines_of(r.out);
  ASSERT_GE(ls.size(), 6u) << r.out;
  // path:line:col: severity: message [CODE slug]
  EXPECT_TRUE(starts_with(ls[0], "train.py:19:13: warning: `gc.collect()`")) << ls[0];
  EXPECT_TRUE(ends_with(ls[0], " [TL101 gc-collect-per-step]")) << ls[0];
  EXPECT_TRUE(std::regex_match(ls[0], std::regex(R"(^[^:]+:\d+:\d+: (error|warning|info): .+ \[TL\d{3} [a-z0-9-]+\]$)")))
      << ls[0];
  // the source line, then a caret under the flagged call spanning it
  EXPECT_EQ(ls[1], " 19 |             gc.collect()");
  EXPECT_EQ(ls[2], "    |             ^" + std::string(11, '~'));  // under all of `gc.collect()`
  // a note pointing at the step loop (`for x, y in loader:` at 13:9)
  EXPECT_TRUE(starts_with(ls[3], "train.py:13:9: note: ")) << ls[3];
  EXPECT_TRUE(contains(ls[3], "loop")) << ls[3];
  EXPECT_EQ(ls[4], "");
  EXPECT_TRUE(starts_with(ls[5], "1 finding (1 warning) in 1 file.")) << ls[5];
}

TEST(CliOutput, SeveritiesAndSortOrderAcrossFiles) {
  Project p;
  auto r = run_cli("pil.py multi.py", p.cwd());
  EXPECT_EQ(r.rc, 1);
  std::vector<std::string> firsts;
  for (auto& l : lines_of(r.out))
    if (std::regex_search(l, std::regex(R"(^\S+:\d+:\d+: (warning|info|error): )"))) firsts.push_back(l);
  ASSERT_EQ(firsts.size(), 4u) << r.out;
  // sorted by path, then position, then code
  EXPECT_TRUE(starts_with(firsts[0], "multi.py:5:9: warning: ")) << firsts[0];
  EXPECT_TRUE(ends_with(firsts[0], "[TL301 data-parallel]"));
  EXPECT_TRUE(starts_with(firsts[1], "multi.py:7:10: warning: "));
  EXPECT_TRUE(ends_with(firsts[1], "[TL201 dataloader-no-workers]"));
  EXPECT_TRUE(ends_with(firsts[2], "[TL202 dataloader-no-pin-memory]"));
  EXPECT_TRUE(starts_with(firsts[3], "pil.py:13:16: info: ")) << firsts[3];
  EXPECT_TRUE(ends_with(firsts[3], "[TL204 pil-decode]"));
  EXPECT_TRUE(contains(r.out, "4 findings (3 warnings, 1 info) in 2 files.")) << r.out;
}

TEST(CliOutput, NoColourWhenNotATerminal) {
  Project p;
  auto plain = run_cli("train.py multi.py nope.py", p.cwd());  // stdout/stderr are files here
  EXPECT_FALSE(contains(plain.out, "\x1b[")) << plain.out;
  EXPECT_FALSE(contains(plain.err, "\x1b[")) << plain.err;
  auto never = run_cli("--color never train.py multi.py nope.py", p.cwd());
  EXPECT_EQ(never.out, plain.out);
  auto always = run_cli("--color always train.py multi.py nope.py", p.cwd());
  EXPECT_TRUE(contains(always.out, "\x1b[")) << always.out;
  EXPECT_EQ(strip_ansi(always.out), plain.out);  // colour is the only difference
  EXPECT_EQ(always.rc, plain.rc);
}

TEST(CliOutput, ColourOnATerminal) {
  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "no `script` to make a terminal";
  Project p;
  std::string bin = "'" + tl::test::binary() + "'";
  auto tty = run_shell("script -qec \"" + bin + " train.py\" /dev/null", p.cwd());
  if (!contains(tty.out, "train.py")) GTEST_SKIP() << "`script` could not run a terminal here: " << tty.err;
  EXPECT_TRUE(contains(tty.out, "\x1b[")) << tty.out;
  auto no_color = run_shell("script -qec \"NO_COLOR=1 " + bin + " train.py\" /dev/null", p.cwd());
  EXPECT_FALSE(contains(no_color.out, "\x1b[")) << no_color.out;
  auto never = run_shell("script -qec \"" + bin + " --color never train.py\" /dev/null", p.cwd());
  EXPECT_FALSE(contains(never.out, "\x1b[")) << never.out;
}

TEST(CliOutput, QuietPrintsFindingsAndNotesOnly) {
  Project p;
  auto r = run_cli("-q --select TL101 train.py", p.cwd());
  EXPECT_EQ(r.rc, 1);
  auto ls = lines_of(r.out);
  ASSERT_EQ(ls.size(), 2u) << r.out;
  EXPECT_TRUE(starts_with(ls[0], "train.py:19:13: warning: "));
  EXPECT_TRUE(starts_with(ls[1], "train.py:13:9: note: "));
}

TEST(CliOutput, FileMessagesGoToStderr) {
  Project p;
  write_file(p.dir.path / "bin.py", std::string("PK\x03\x04\0\0\x14\0", 8));
  auto r = run_cli("bin.py train.py", p.cwd());
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "bin.py: warning: skipped: binary file (contains NUL bytes)\n");
  EXPECT_FALSE(contains(r.out, "bin.py"));
  EXPECT_TRUE(contains(r.out, "[TL101 gc-collect-per-step]"));
}

// ---- JSON ---------------------------------------------------------------------------------------

TEST(CliJson, DocumentedSchema) {
  Project p;
  write_file(p.dir.path / "syntax.py", kSyntaxError);
  // the first eight rules' findings on these files (TL203/TL502 also fire under the full catalog)
  auto r = run_cli("--format json --select TL101,TL201,TL202,TL204,TL301 train.py multi.py pil.py syntax.py", p.cwd());
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "");  // file messages are in the document, not on stderr
  auto j = parse_json(r);
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["tool"]["name"], "trainlint");
  EXPECT_TRUE(j["tool"]["version"].is_string());
  ASSERT_TRUE(j["findings"].is_array());
  ASSERT_EQ(j["findings"].size(), 6u) << j.dump(2);
  for (auto& f : j["findings"]) {
    for (const char* k : {"code", "slug", "severity", "message", "path", "range", "notes", "fix", "probe", "fingerprint"})
      EXPECT_TRUE(f.contains(k)) << k << " missing in " << f.dump();
    EXPECT_TRUE(std::regex_match(f["code"].get<std::string>(), std::regex("TL[0-9]{3}")));
    EXPECT_TRUE(f["severity"] == "error" || f["severity"] == "warning" || f["severity"] == "info");
    EXPECT_TRUE(f["message"].is_string());
    for (const char* k : {"byte_start", "byte_end"}) EXPECT_TRUE(f["range"][k].is_number_unsigned()) << k;
    for (const char* k : {"start", "end"}) {
      EXPECT_GE(f["range"][k]["line"].get<int>(), 1);
      EXPECT_GE(f["range"][k]["column"].get<int>(), 1);
    }
    EXPECT_TRUE(f["notes"].is_array());
    EXPECT_TRUE(f["fix"].is_null() || (f["fix"]["title"].is_string() && f["fix"]["edits"].is_array()));
    EXPECT_TRUE(f["probe"].is_string());
    EXPECT_TRUE(std::regex_match(f["fingerprint"].get<std::string>(), std::regex("[0-9a-f]{16}")));
  }
  // the TL101 finding in detail
  auto& g = *std::find_if(j["findings"].begin(), j["findings"].end(),
                          [](auto& f) { return f["code"] == "TL101" && f["path"] == "train.py"; });
  EXPECT_EQ(g["slug"], "gc-collect-per-step");
  EXPECT_EQ(g["severity"], "warning");
  EXPECT_EQ(g["probe"], "site");
  EXPECT_EQ(g["range"]["start"]["line"], 19);
  EXPECT_EQ(g["range"]["start"]["column"], 13);
  EXPECT_EQ(g["range"]["end"]["line"], 19);
  EXPECT_EQ(g["range"]["end"]["column"], 25);
  std::string src = kTrainGc;
  EXPECT_EQ(src.substr(g["range"]["byte_start"].get<size_t>(),
                       g["range"]["byte_end"].get<size_t>() - g["range"]["byte_start"].get<size_t>()),
            "gc.collect()");
  ASSERT_GE(g["notes"].size(), 1u);
  EXPECT_EQ(g["notes"][0]["path"], "train.py");
  EXPECT_EQ(g["notes"][0]["range"]["start"]["line"], 13);
  EXPECT_TRUE(g["notes"][0]["message"].is_string());
  // TL204 is info
  for (auto& f : j["findings"])
    if (f["code"] == "TL204") EXPECT_EQ(f["severity"], "info");
  // messages: the syntax error, with its position
  ASSERT_EQ(j["messages"].size(), 1u) << j["messages"].dump();
  auto& m = j["messages"][0];
  EXPECT_EQ(m["kind"], "warning");
  EXPECT_EQ(m["path"], "syntax.py");
  EXPECT_TRUE(contains(m["message"].get<std::string>(), "syntax error"));
  EXPECT_EQ(m["line"], 9);
  EXPECT_TRUE(m["column"].is_number());
  // summary
  EXPECT_EQ(j["summary"]["files"], 4);
  EXPECT_EQ(j["summary"]["findings"], 6);
  EXPECT_EQ(j["summary"]["by_severity"]["error"], 0);
  EXPECT_EQ(j["summary"]["by_severity"]["warning"], 5);
  EXPECT_EQ(j["summary"]["by_severity"]["info"], 1);
}

TEST(CliJson, MessagesWithoutPositionHaveNoLineOrColumn) {
  Project p;
  auto r = run_cli("--format json --select TL101 nope.py train.py", p.cwd());
  EXPECT_EQ(r.rc, 2);
  auto j = parse_json(r);
  ASSERT_EQ(j["messages"].size(), 1u);
  EXPECT_EQ(j["messages"][0]["kind"], "error");
  EXPECT_EQ(j["messages"][0]["path"], "nope.py");
  EXPECT_FALSE(j["messages"][0].contains("line"));
  EXPECT_FALSE(j["messages"][0].contains("column"));
  EXPECT_EQ(j["findings"].size(), 1u);
}

TEST(CliJson, CleanRunIsAValidEmptyDocument) {
  Project p;
  auto r = run_cli("--format json clean.py", p.cwd());
  EXPECT_EQ(r.rc, 0);
  auto j = parse_json(r);
  EXPECT_TRUE(j["findings"].is_array());
  EXPECT_TRUE(j["findings"].empty());
  EXPECT_TRUE(j["messages"].empty());
  EXPECT_EQ(j["summary"]["files"], 1);
  EXPECT_EQ(j["summary"]["findings"], 0);
}

TEST(CliJson, FingerprintSurvivesCodeMovingDown) {
  TempDir d;
  write_file(d.path / "train.py", kTrainGc);
  auto before = parse_json(run_cli("--format json --select TL101 train.py", d.path.string()));
  ASSERT_EQ(before["findings"].size(), 1u);
  // unrelated lines above the finding: a docstring, an import, a helper function
  write_file(d.path / "train.py", std::string("\"\"\"Trains the classifier.\"\"\"\nimport os\n\n\ndef seed():\n"
                                              "    os.environ[\"PYTHONHASHSEED\"] = \"0\"\n\n") +
                                      kTrainGc);
  auto after = parse_json(run_cli("--format json --select TL101 train.py", d.path.string()));
  ASSERT_EQ(after["findings"].size(), 1u);
  EXPECT_EQ(after["findings"][0]["range"]["start"]["line"], 26);  // moved down 7 lines
  EXPECT_EQ(after["findings"][0]["fingerprint"], before["findings"][0]["fingerprint"]);
  // nor does whitespace on the flagged line
  std::string reindented = kTrainGc;
  reindented.replace(reindented.find("            gc.collect()"), 24, "            gc.collect()  ");
  write_file(d.path / "train.py", reindented);
  auto trailing = parse_json(run_cli("--format json --select TL101 train.py", d.path.string()));
  ASSERT_EQ(trailing["findings"].size(), 1u);
  EXPECT_EQ(trailing["findings"][0]["fingerprint"], before["findings"][0]["fingerprint"]);
}

TEST(CliJson, FingerprintsDifferBetweenFindings) {
  TempDir d;
  write_file(d.path / "multi.py", kMulti);
  // two identical gc.collect() lines in the same loop are still two findings
  std::string twice = kTrainGc;
  twice += "            gc.collect()\n";
  write_file(d.path / "train.py", twice);
  const std::string args = "--format json --select TL101,TL201,TL202,TL301 multi.py train.py";
  auto j = parse_json(run_cli(args, d.path.string()));
  ASSERT_EQ(j["findings"].size(), 5u) << j.dump(2);
  std::set<std::string> fps;
  for (auto& f : j["findings"]) fps.insert(f["fingerprint"].get<std::string>());
  EXPECT_EQ(fps.size(), 5u);  // TL201 and TL202 on the same call differ, so do the two gc.collect()
  // and they are deterministic
  auto again = parse_json(run_cli(args, d.path.string()));
  EXPECT_EQ(again, j);
}

// ---- --select / --ignore --------------------------------------------------------------------

TEST(CliSelect, ByCodeSlugAndPrefix) {
  Project p;
  auto sel = [&](const std::string& args) {
    auto r = run_cli("--format json " + args + " train.py multi.py pil.py", p.cwd());
    EXPECT_NE(r.rc, 2) << args << ": " << r.err;
    return codes(parse_json(r));
  };
  using S = std::set<std::string>;
  // all rules: train.py also has TL203 (workers not persistent) and TL502 (no mixed precision)
  EXPECT_EQ(sel(""), (S{"TL101", "TL201", "TL202", "TL203", "TL204", "TL301", "TL502"}));
  EXPECT_EQ(sel("--select TL101"), (S{"TL101"}));
  EXPECT_EQ(sel("--select data-parallel"), (S{"TL301"}));
  EXPECT_EQ(sel("--select TL2"), (S{"TL201", "TL202", "TL203", "TL204"}));
  EXPECT_EQ(sel("--select tl2"), (S{"TL201", "TL202", "TL203", "TL204"}));
  EXPECT_EQ(sel("--select TL101,pil-decode"), (S{"TL101", "TL204"}));
  EXPECT_EQ(sel("--select TL101 --select TL301"), (S{"TL101", "TL301"}));
  EXPECT_EQ(sel("--select=TL301"), (S{"TL301"}));
  EXPECT_EQ(sel("--ignore TL101"), (S{"TL201", "TL202", "TL203", "TL204", "TL301", "TL502"}));
  EXPECT_EQ(sel("--ignore dataloader-no-workers"), (S{"TL101", "TL202", "TL203", "TL204", "TL301", "TL502"}));
  EXPECT_EQ(sel("--ignore TL2"), (S{"TL101", "TL301", "TL502"}));
  EXPECT_EQ(sel("--select TL2 --ignore TL202"), (S{"TL201", "TL203", "TL204"}));
  EXPECT_EQ(sel("--select ALL --ignore TL1,TL3"), (S{"TL201", "TL202", "TL203", "TL204", "TL502"}));
}

TEST(CliSelect, OptionBeforePathsDoesNotSwallowThem) {
  Project p;
  auto r = run_cli("--select TL101 train.py multi.py", p.cwd());
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_TRUE(contains(r.out, "train.py:19:13: warning: ")) << r.out;
  EXPECT_FALSE(contains(r.out, "TL301"));
  EXPECT_TRUE(contains(r.out, "in 2 files.")) << r.out;
}

TEST(CliSelect, UnknownRuleIsAUsageError) {
  Project p;
  auto r = run_cli("--select TL999 train.py", p.cwd());
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(contains(r.err, "unknown rule 'TL999'")) << r.err;
  EXPECT_EQ(r.out, "");
  auto s = run_cli("--select gc-collect-every-step train.py", p.cwd());
  EXPECT_EQ(s.rc, 2);
  EXPECT_TRUE(contains(s.err, "gc-collect-every-step")) << s.err;
  auto i = run_cli("--ignore TL999 train.py", p.cwd());
  EXPECT_EQ(i.rc, 2);
  EXPECT_TRUE(contains(i.err, "unknown rule 'TL999'")) << i.err;
}

// ---- exit codes ---------------------------------------------------------------------------------

TEST(CliExit, CleanFileExitsZeroWithOneLineOnStderr) {
  Project p;
  auto r = run_cli("clean.py", p.cwd());
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "no findings in 1 file\n");
  r = run_cli("-q clean.py", p.cwd());  // quiet for hooks: nothing at all
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "");
}

TEST(CliExit, FailOnThresholds) {
  Project p;
  EXPECT_EQ(run_cli("pil.py", p.cwd()).rc, 0);  // info only, default --fail-on warning
  EXPECT_EQ(run_cli("--fail-on warning pil.py", p.cwd()).rc, 0);
  EXPECT_EQ(run_cli("--fail-on info pil.py", p.cwd()).rc, 1);
  EXPECT_EQ(run_cli("--fail-on error pil.py", p.cwd()).rc, 0);
  EXPECT_EQ(run_cli("train.py", p.cwd()).rc, 1);  // a warning
  EXPECT_EQ(run_cli("--fail-on error train.py", p.cwd()).rc, 0);
  EXPECT_EQ(run_cli("--fail-on info train.py", p.cwd()).rc, 1);
  // the findings are printed whatever the threshold
  EXPECT_TRUE(contains(run_cli("--fail-on error train.py", p.cwd()).out, "[TL101 gc-collect-per-step]"));
  auto bad = run_cli("--fail-on critical train.py", p.cwd());
  EXPECT_EQ(bad.rc, 2);
  EXPECT_TRUE(contains(bad.err, "--fail-on")) << bad.err;
}

TEST(CliExit, NonexistentPathIsExit2ButOtherPathsAreLinted) {
  Project p;
  auto r = run_cli("--select TL101 train.py nope.py missing_dir", p.cwd());
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(contains(r.err, "nope.py: error: cannot read: ")) << r.err;
  EXPECT_TRUE(contains(r.err, "missing_dir: error: cannot read: ")) << r.err;
  EXPECT_TRUE(starts_with(r.out, "train.py:19:13: warning: ")) << r.out;
  // findings below --fail-on do not hide the I/O error either
  EXPECT_EQ(run_cli("--fail-on error clean.py nope.py", p.cwd()).rc, 2);
}

TEST(CliExit, UsageErrors) {
  Project p;
  auto none = run_cli("", p.cwd());
  EXPECT_EQ(none.rc, 2);
  EXPECT_TRUE(contains(none.err, "no paths given")) << none.err;
  EXPECT_EQ(run_cli("--format xml train.py", p.cwd()).rc, 2);
  EXPECT_EQ(run_cli("--no-such-flag train.py", p.cwd()).rc, 2);
  EXPECT_EQ(run_cli("-j notanumber train.py", p.cwd()).rc, 2);
  auto help = run_cli("--help", p.cwd());
  EXPECT_EQ(help.rc, 0);
  EXPECT_TRUE(contains(help.out, "--select")) << help.out;
}

// ---- threads ------------------------------------------------------------------------------------

TEST(CliJobs, OneAndFourThreadsGiveIdenticalOutput) {
  // the annotated fixtures: many files, cross-file calls, every rule
  std::string dir = "tests/fixtures/python";
  for (const char* fmt : {"text", "json"}) {
    auto one = run_cli(std::string("--format ") + fmt + " -j 1 " + dir);
    auto four = run_cli(std::string("--format ") + fmt + " -j 4 " + dir);
    auto dflt = run_cli(std::string("--format ") + fmt + " " + dir);
    EXPECT_EQ(one.rc, 1) << one.err;
    EXPECT_FALSE(one.out.empty());
    EXPECT_EQ(one.out, four.out) << fmt;
    EXPECT_EQ(one.err, four.err) << fmt;
    EXPECT_EQ(one.rc, four.rc);
    EXPECT_EQ(one.out, dflt.out) << fmt;
  }
}

// ---- folder walking -----------------------------------------------------------------------------

TEST(CliWalk, RecursesAndSkipsVcsVenvsNodeModulesAndBuildTrees) {
  TempDir d;
  auto& r = d.path;
  write_file(r / "proj/train.py", kTrainGc);
  write_file(r / "proj/src/models/parallel/wrap.py", kMulti);  // nested three deep
  write_file(r / "proj/src/builders/data.py", kMulti);         // a package, not a build tree
  write_file(r / "proj/src/data/README.md", "DataLoader(ds)\n");
  write_file(r / "proj/src/data/notes.txt", "import gc\n");
  write_file(r / "proj/.git/hooks/pre-commit.py", kMulti);
  write_file(r / "proj/venv/lib/python3.11/site-packages/x/mod.py", kMulti);
  write_file(r / "proj/venv/pyvenv.cfg", "home = /usr/bin\n");
  write_file(r / "proj/myenv/lib/mod.py", kMulti);  // a virtualenv by its pyvenv.cfg, not its name
  write_file(r / "proj/myenv/pyvenv.cfg", "home = /usr/bin\n");
  write_file(r / "proj/.venv/lib/mod.py", kMulti);
  write_file(r / "proj/node_modules/pkg/gyp.py", kMulti);
  write_file(r / "proj/build/lib/proj/train.py", kTrainGc);
  write_file(r / "proj/build-release/gen.py", kMulti);
  write_file(r / "proj/out/CMakeCache.txt", "");
  write_file(r / "proj/out/gen.py", kMulti);
  write_file(r / "proj/src/__pycache__/x.py", kMulti);
  auto res = run_cli("--format json proj", r.string());
  EXPECT_EQ(res.rc, 1) << res.err;
  auto j = parse_json(res);
  std::set<std::string> files;
  for (auto& f : j["findings"]) files.insert(f["path"].get<std::string>());
  EXPECT_EQ(files, (std::set<std::string>{"proj/train.py", "proj/src/models/parallel/wrap.py",
                                          "proj/src/builders/data.py"}));
  EXPECT_EQ(j["summary"]["files"], 3);
  EXPECT_TRUE(j["messages"].empty()) << j["messages"].dump();
  // a skipped folder named explicitly is linted
  auto b = parse_json(run_cli("--format json proj/build", r.string()));
  EXPECT_EQ(b["summary"]["files"], 1);
  // "./proj" and "proj/" display the same paths
  auto dot = parse_json(run_cli("--format json ./proj/", r.string()));
  EXPECT_EQ(path_codes(dot), path_codes(j));
}

TEST(CliWalk, SameFileTwiceIsLintedOnce) {
  Project p;
  auto j = parse_json(run_cli("--format json train.py ./train.py .", p.cwd()));
  EXPECT_EQ(j["summary"]["files"], 4);
  int tl101 = 0;
  for (auto& f : j["findings"]) tl101 += f["code"] == "TL101";
  EXPECT_EQ(tl101, 1);
}

// ---- rules / explain ---------------------------------------------------------------------------

TEST(CliRules, ListsImplementedRules) {
  auto r = run_cli("rules");
  EXPECT_EQ(r.rc, 0);
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"((^|\n)TL101\s+gc-collect-per-step\s+warning)"))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"((^|\n)TL204\s+pil-decode\s+info)"))) << r.out;
  EXPECT_FALSE(contains(r.out, "not yet implemented"));
  auto all = run_cli("rules --all");
  EXPECT_EQ(all.rc, 0);
  EXPECT_TRUE(contains(all.out, "TL102")) << all.out;
}

TEST(CliRules, ExplainPrintsTheDoc) {
  auto r = run_cli("explain TL101");
  EXPECT_EQ(r.rc, 0);
  EXPECT_TRUE(starts_with(r.out, "TL101 gc-collect-per-step")) << r.out;
  EXPECT_TRUE(contains(r.out, "## Why is this bad?")) << r.out;
  EXPECT_TRUE(contains(r.out, "gc.collect()"));
  auto by_slug = run_cli("explain gc-collect-per-step");
  EXPECT_EQ(by_slug.rc, 0);
  EXPECT_EQ(by_slug.out, r.out);
}

TEST(CliRules, ExplainUnknownIsExit2) {
  auto r = run_cli("explain TL999");
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(contains(r.err, "unknown rule 'TL999'")) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(run_cli("explain").rc, 2);
}

// ---- bad input ------------------------------------------------------------------------------------

TEST(CliBadInput, SyntaxErrorReportsLocationAndLintsTheRest) {
  TempDir d;
  write_file(d.path / "syntax.py", kSyntaxError);
  auto r = run_cli("--select TL101 syntax.py", d.path.string());
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(^syntax\.py:9:\d+: warning: syntax error)"))) << r.err;
  EXPECT_TRUE(contains(r.err, "the rest of the file was analysed")) << r.err;
  EXPECT_TRUE(starts_with(r.out, "syntax.py:7:9: warning: ")) << r.out;
  EXPECT_TRUE(contains(r.out, "[TL101 gc-collect-per-step]"));
}

// A file that ends inside an f-string leaves the Python scanner's f-string flag set; the grammar as
// fetched kept it for the next file parsed on the same thread, whose lines after a block were then
// read as part of the block (a syntax error reported in a valid file, loops and calls misplaced).
TEST(CliBadInput, AFileEndingInsideAnFStringDoesNotChangeHowTheNextFileParses) {
  TempDir d;
  write_file(d.path / "a.py", "x = f\"{y");
  write_file(d.path / "b.py",
             "def train(model, loader, optimizer):\n    for batch in loader:\n        loss = model(batch)\n"
             "        loss.backward()\n        optimizer.step()\n    return loss\n");
  auto r = run_cli("--no-cache -j 1 a.py b.py", d.path.string());
  EXPECT_TRUE(contains(r.err, "a.py:1:1: warning: syntax error")) << r.err;
  EXPECT_FALSE(contains(r.err, "b.py")) << r.err;
  EXPECT_EQ(r.rc, 0) << r.err;
}

TEST(CliBadInput, InvalidUtf8IsSkippedWithPosition) {
  Project p;
  write_file(p.dir.path / "latin1.py", "import torch\nLABEL = \"caf\xe9\"\n");
  auto r = run_cli("latin1.py train.py", p.cwd());
  EXPECT_EQ(r.rc, 1);  // train.py's finding; the bad file is a warning, not an I/O error
  EXPECT_TRUE(starts_with(r.err, "latin1.py:2:13: warning: skipped: not valid UTF-8")) << r.err;
  EXPECT_TRUE(contains(r.out, "train.py:19:13: warning: ")) << r.out;
  EXPECT_EQ(run_cli("latin1.py", p.cwd()).rc, 0);
}

TEST(CliBadInput, BinaryFileIsSkipped) {
  Project p;
  std::string png("\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10", 20);
  write_file(p.dir.path / "weights.py", png);
  auto r = run_cli("weights.py train.py", p.cwd());
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(contains(r.err, "weights.py: warning: skipped: binary file")) << r.err;
  EXPECT_TRUE(contains(r.out, "[TL101 gc-collect-per-step]"));
  EXPECT_EQ(run_cli("weights.py", p.cwd()).rc, 0);
}

TEST(CliBadInput, EmptyFileIsQuietAndClean) {
  TempDir d;
  write_file(d.path / "__init__.py", "");
  auto r = run_cli("__init__.py", d.path.string());
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "no findings in 1 file\n");
  auto j = parse_json(run_cli("--format json __init__.py", d.path.string()));
  EXPECT_EQ(j["summary"]["files"], 1);
  EXPECT_TRUE(j["messages"].empty());
}

TEST(CliBadInput, TwentyMegabyteFileCompletes) {
  TempDir d;
  std::string text = "import gc\nimport torch\nimport torch.nn as nn\n\n";
  int i = 0;
  while (text.size() < (20u << 20)) {
    std::string n = std::to_string(i++);
    text += "\n\nclass Block" + n + "(nn.Module):\n    \"\"\"Residual block " + n +
            ".\"\"\"\n\n    def __init__(self, dim=128):\n        super().__init__()\n"
            "        self.fc1 = nn.Linear(dim, dim * 4)\n        self.fc2 = nn.Linear(dim * 4, dim)\n"
            "        self.norm = nn.LayerNorm(dim)\n\n    def forward(self, x):\n"
            "        return x + self.fc2(torch.relu(self.fc1(self.norm(x))))\n\n\n"
            "def train_" + n + "(model, optimizer, loader, epochs=2):\n    model.train()\n"
            "    for epoch in range(epochs):\n        for step, (x, y) in enumerate(loader):\n"
            "            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)\n"
            "            loss = nn.functional.mse_loss(model(x), y)\n"
            "            optimizer.zero_grad(set_to_none=True)\n            loss.backward()\n"
            "            optimizer.step()\n            if step % 100 == 0:\n"
            "                print(f\"epoch {epoch} step {step} loss {loss.item():.4f}\")\n";
  }
  write_file(d.path / "generated.py", text);
  ASSERT_GE(fs::file_size(d.path / "generated.py"), 20u << 20);
  auto r = run_cli("-q generated.py", d.path.string());
  EXPECT_TRUE(r.rc == 0 || r.rc == 1) << r.rc << " " << r.err;
  EXPECT_FALSE(contains(r.err, "internal error")) << r.err;
  EXPECT_FALSE(contains(r.err, "skipped")) << r.err;  // it is analysed, not dropped
}

TEST(CliBadInput, NonexistentPath) {
  Project p;
  auto r = run_cli("does/not/exist.py", p.cwd());
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(starts_with(r.err, "does/not/exist.py: error: cannot read: ")) << r.err;
}

TEST(CliBadInput, UnreadablePath) {
  Project p;
  // a path through a regular file (ENOTDIR) fails for root too
  auto r = run_cli("train.py/x.py multi.py", p.cwd());
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(starts_with(r.err, "train.py/x.py: error: cannot read: ")) << r.err;
  EXPECT_TRUE(contains(r.out, "[TL301 data-parallel]")) << r.out;
  // a FIFO named like a source file: a message, not a hang
  ASSERT_EQ(mkfifo((p.dir.path / "pipe.py").c_str(), 0644), 0);
  auto f = run_cli("pipe.py multi.py", p.cwd());
  EXPECT_EQ(f.rc, 2);
  EXPECT_EQ(f.err, "pipe.py: error: cannot read: not a regular file\n");
  EXPECT_TRUE(contains(f.out, "[TL301 data-parallel]")) << f.out;
  // ...and skipped silently in a walked folder
  auto w = run_cli("--format json .", p.cwd());
  EXPECT_EQ(w.rc, 1) << w.err;
  EXPECT_EQ(parse_json(w)["summary"]["files"], 4);
  if (geteuid() != 0) {
    ASSERT_EQ(chmod((p.dir.path / "pil.py").c_str(), 0), 0);
    auto c = run_cli("pil.py train.py", p.cwd());
    EXPECT_EQ(c.rc, 2);
    EXPECT_TRUE(starts_with(c.err, "pil.py: error: cannot read: ")) << c.err;
    EXPECT_TRUE(contains(c.out, "[TL101 gc-collect-per-step]")) << c.out;
    chmod((p.dir.path / "pil.py").c_str(), 0644);
  }
}

TEST(CliBadInput, SymlinkLoopGivenExplicitly) {
  Project p;
  fs::create_symlink("b.py", p.dir.path / "a.py");
  fs::create_symlink("a.py", p.dir.path / "b.py");
  auto r = run_cli("a.py b.py train.py", p.cwd());
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(contains(r.err, "a.py: error: cannot read: symlink loop\n")) << r.err;
  EXPECT_TRUE(contains(r.err, "b.py: error: cannot read: symlink loop\n")) << r.err;
  EXPECT_TRUE(contains(r.out, "train.py:19:13: warning: ")) << r.out;
}

TEST(CliBadInput, SymlinkLoopInAWalkedFolder) {
  TempDir d;
  write_file(d.path / "proj/train.py", kTrainGc);
  fs::create_directories(d.path / "proj/loops");
  fs::create_symlink("b.py", d.path / "proj/loops/a.py");
  fs::create_symlink("a.py", d.path / "proj/loops/b.py");
  fs::create_directory_symlink("..", d.path / "proj/loops/up");  // a folder loop: not followed
  auto r = run_cli("--select TL101 proj", d.path.string());
  EXPECT_EQ(r.rc, 1) << r.err;  // a warning; the findings decide the exit code
  EXPECT_TRUE(contains(r.err, "proj/loops/a.py: warning: skipped: symlink loop")) << r.err;
  EXPECT_TRUE(contains(r.err, "proj/loops/b.py: warning: skipped: symlink loop")) << r.err;
  EXPECT_TRUE(starts_with(r.out, "proj/train.py:19:13: warning: ")) << r.out;
  EXPECT_TRUE(contains(r.out, "in 1 file.")) << r.out;
}

// A lint run re-executes itself once with glibc's malloc tunables (analyzer/cli/malloc_tuning.cpp)
// and then gives the programs it starts the caller's environment: a `git` first on PATH, started
// by --diff-base, notes the GLIBC_TUNABLES it sees and the two variables the re-execution uses.
TEST(CliMalloc, ALintRunIsTunedAndTheProgramsItStartsSeeTheCallersEnvironment) {
  TempDir d;
  fs::path repo = d.path / "repo", bin = d.path / "bin", seen = d.path / "seen.txt";
  write_file(repo / "train.py", kTrainGc);
  ASSERT_EQ(std::system(("cd '" + repo.string() +
                         "' && git init -q && git add train.py && git -c user.name=t -c user.email=t@t.invalid "
                         "commit -qm first").c_str()),
            0);
  write_file(bin / "git", "#!/bin/sh\nprintf '%s|%s|%s\\n' \"${GLIBC_TUNABLES-unset}\" \"${TRAINLINT_MALLOC_TUNED-unset}\" "
                          "\"${TRAINLINT_CALLER_GLIBC_TUNABLES-unset}\" >> '" + seen.string() +
                          "'\nPATH=\"${PATH#" + bin.string() + ":}\" exec git \"$@\"\n");  // then the real git
  fs::permissions(bin / "git", fs::perms::owner_all);
  const std::string path = "PATH=\"" + bin.string() + ":$PATH\" ";
  struct Case {
    const char* env;       // shell assignments for the run
    const char* says;      // what TRAINLINT_TIMING shows about malloc
    const char* git_sees;  // GLIBC_TUNABLES in the program started (then the two markers: unset)
  } cases[] = {
      {"",
       "malloc: tuned (glibc.malloc.hugetlb=1:glibc.malloc.top_pad=67108864:glibc.malloc.arena_max=4); "
       "GLIBC_TUNABLES for the programs trainlint starts: unset",
       "unset"},
      {"GLIBC_TUNABLES=glibc.rtld.optional_static_tls=1024 ", "starts: 'glibc.rtld.optional_static_tls=1024'",
       "glibc.rtld.optional_static_tls=1024"},
      {"GLIBC_TUNABLES=glibc.malloc.arena_max=2 ", "malloc: the caller's GLIBC_TUNABLES, which tunes malloc, kept",
       "glibc.malloc.arena_max=2"},
      {"TRAINLINT_MALLOC=system ", "malloc: glibc's defaults (TRAINLINT_MALLOC=system)", "unset"},
  };
  std::string first_out;
  for (const Case& c : cases) {
    fs::remove(seen);
    CliResult r = run_cli("--select TL101 --diff-base HEAD --no-cache .", repo.string(), "/dev/null",
                          "env -u GLIBC_TUNABLES -u TRAINLINT_MALLOC " + std::string(c.env) + "TRAINLINT_TIMING=1 " + path);
    EXPECT_EQ(r.rc, 0) << c.env << r.err;  // nothing changed since HEAD: no finding reported
    EXPECT_TRUE(contains(r.err, c.says)) << c.env << r.err;
    std::string lines = tl::test::read_file(seen);
    ASSERT_FALSE(lines.empty()) << c.env << ": git was not started";
    std::string want = std::string(c.git_sees) + "|unset|unset\n";
    for (size_t at = 0; at < lines.size(); at = lines.find('\n', at) + 1)
      EXPECT_EQ(lines.substr(at, lines.find('\n', at) + 1 - at), want) << c.env;
    if (first_out.empty()) first_out = r.out;
    EXPECT_EQ(r.out, first_out) << c.env;
  }
#if !defined(__SANITIZE_ADDRESS__)  // ASan's shadow memory does not fit under a limit on address space
  // under a limit on address space: not re-executed, glibc's defaults with one heap (docs/hardening.md)
  fs::remove(seen);
  CliResult limited = run_cli("--select TL101 --diff-base HEAD --no-cache .", repo.string(), "/dev/null",
                              "ulimit -v 4000000 && env -u GLIBC_TUNABLES -u TRAINLINT_MALLOC TRAINLINT_TIMING=1 " + path);
  EXPECT_EQ(limited.rc, 0) << limited.err;
  EXPECT_TRUE(contains(limited.err, "malloc: glibc's defaults and one heap (a limit on address space is set)"))
      << limited.err;
  EXPECT_EQ(tl::test::read_file(seen).substr(0, 6), "unset|") << "git saw tunables";
  EXPECT_EQ(limited.out, first_out);
#endif
  // the other subcommands are not re-executed
  CliResult r = run_cli("rules", repo.string(), "/dev/null", "env -u GLIBC_TUNABLES TRAINLINT_TIMING=1 ");
  EXPECT_EQ(r.rc, 0);
  EXPECT_FALSE(contains(r.err, "malloc:")) << r.err;
}

}  // namespace
