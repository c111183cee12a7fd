// The measured cost in the editor: a `trainlint run --format json` report in the workspace
// (.trainlint/run.json) annotates the diagnostics whose fingerprint it measured.
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "analyzer/lsp/protocol.h"
#include "lsp/lsp_client.h"
#include "support/test_support.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const char* kTrain = R"(import gc

import torch
from torch.utils.data import DataLoader


def train(model, dataset, optimizer, epochs):
    model = model.cuda()
    loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=8, persistent_workers=True)
    for epoch in range(epochs):
        for step, (images, labels) in enumerate(loader):
            images = images.cuda(non_blocking=True)
            labels = labels.cuda(non_blocking=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = torch.nn.functional.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            gc.collect()
)";

// The lint JSON of the workspace, with the runtime rows `trainlint run --format json` adds.
json make_report(const fs::path& root, const std::string& gc_verdict) {
  auto r = tl::test::run_cli("--format json --exit-zero train.py", root.string());
  json doc = json::parse(r.out);
  for (auto& f : doc["findings"]) {
    if (f["code"] == "TL101")
      f["runtime"] = {{"verdict", gc_verdict}, {"calls", 40},       {"total_ms", 4800.0}, {"ms_per_step", 120.0},
                      {"share", 0.38},         {"gpu_idle_ms", nullptr}, {"gpu_idle_reason", "no-driver"}};
    else
      f["runtime"] = {{"verdict", "negligible"}, {"calls", 1}, {"total_ms", 0.4}, {"ms_per_step", 0.01}, {"share", 0.0001}};
  }
  doc["run"] = {{"command", {"/usr/bin/python3", "train.py"}}, {"steps", 40}};
  return doc;
}

json diag_with(const json& diags, const std::string& code) {
  for (auto& d : diags)
    if (d.value("code", "") == code) return d;
  return nullptr;
}

TEST(LspMeasured, ReportAnnotatesMessageSeverityAndHover) {
  tl::test::TempDir ws;
  fs::path root = fs::canonical(ws.path);
  tl::test::write_file(root / "pyproject.toml", "[project]\nname = \"measured\"\n");
  tl::test::write_file(root / "train.py", kTrain);
  json report = make_report(root, "confirmed");
  ASSERT_EQ(report["findings"].size(), 2u) << report.dump();
  // the report is written after the file: it is current
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  tl::test::write_file(root / ".trainlint" / "run.json", report.dump());

  tl::test::LspClient c(tl::test::binary(), root.string());
  std::string uri = tl::lsp::path_to_uri((root / "train.py").string());
  c.send({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "initialize"},
          {"params", {{"workspaceFolders", {{{"uri", tl::lsp::path_to_uri(root.string())}, {"name", "w"}}}},
                      {"capabilities", json::object()}}}});
  ASSERT_TRUE(c.wait_for([](const json& m) { return m.contains("id") && m["id"] == 1; }));
  c.send({{"jsonrpc", "2.0"}, {"method", "initialized"}, {"params", json::object()}});
  c.send({{"jsonrpc", "2.0"}, {"method", "textDocument/didOpen"},
          {"params", {{"textDocument", {{"uri", uri}, {"languageId", "python"}, {"version", 1}, {"text", kTrain}}}}}});
  auto is_publish = [&](int version) {
    return [&, version](const json& m) {
      return m.value("method", "") == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri &&
             m["params"]["version"] == version;
    };
  };
  auto p = c.wait_for(is_publish(1));
  ASSERT_TRUE(p);
  json gc = diag_with(p->msg["params"]["diagnostics"], "TL101");
  json pin = diag_with(p->msg["params"]["diagnostics"], "TL202");
  ASSERT_FALSE(gc.is_null()) << p->msg.dump();
  ASSERT_FALSE(pin.is_null()) << p->msg.dump();
  std::string msg = gc["message"];
  EXPECT_NE(msg.find("measured: 38% of step time, 120 ms/step (confirmed, run of "), std::string::npos) << msg;
  EXPECT_EQ(msg.find("older than"), std::string::npos) << msg;
  EXPECT_EQ(gc["severity"], 1) << "confirmed raises warning to error";
  EXPECT_EQ(pin["severity"], 4) << "negligible lowers to hint";
  EXPECT_NE(pin["message"].get<std::string>().find("(negligible, run of "), std::string::npos);

  // hover: the full runtime row
  c.send({{"jsonrpc", "2.0"}, {"id", 2}, {"method", "textDocument/hover"},
          {"params", {{"textDocument", {{"uri", uri}}}, {"position", {{"line", 18}, {"character", 16}}}}}});
  auto h = c.wait_for([](const json& m) { return m.contains("id") && m["id"] == 2; });
  ASSERT_TRUE(h);
  std::string md = h->msg["result"]["contents"]["value"];
  EXPECT_NE(md.find("Measured by `trainlint run`"), std::string::npos) << md;
  EXPECT_NE(md.find("| 40 | 4800.0 | 120.00 | 38.0% | n/a: no-driver | confirmed |"), std::string::npos) << md;

  // an unsaved edit makes the report older than the file
  json change = {{"range", {{"start", {{"line", 1}, {"character", 0}}}, {"end", {{"line", 1}, {"character", 0}}}}},
                 {"text", "import os\n"}};
  c.send({{"jsonrpc", "2.0"},
          {"method", "textDocument/didChange"},
          {"params", {{"textDocument", {{"uri", uri}, {"version", 2}}}, {"contentChanges", json::array({change})}}}});
  p = c.wait_for(is_publish(2));
  ASSERT_TRUE(p);
  gc = diag_with(p->msg["params"]["diagnostics"], "TL101");
  EXPECT_NE(gc["message"].get<std::string>().find("the report is older than this file's last change"), std::string::npos)
      << gc.dump();

  // a new report (the fix measured negligible) is picked up when it changes
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  tl::test::write_file(root / ".trainlint" / "run.json", make_report(root, "negligible").dump());
  json watched = {{"uri", tl::lsp::path_to_uri((root / ".trainlint" / "run.json").string())}, {"type", 2}};
  c.send({{"jsonrpc", "2.0"},
          {"method", "workspace/didChangeWatchedFiles"},
          {"params", {{"changes", json::array({watched})}}}});
  p = c.wait_for(is_publish(2));
  ASSERT_TRUE(p);
  gc = diag_with(p->msg["params"]["diagnostics"], "TL101");
  EXPECT_EQ(gc["severity"], 4) << gc.dump();

  c.send({{"jsonrpc", "2.0"}, {"id", 3}, {"method", "shutdown"}});
  ASSERT_TRUE(c.wait_for([](const json& m) { return m.contains("id") && m["id"] == 3; }));
  c.send({{"jsonrpc", "2.0"}, {"method", "exit"}});
  EXPECT_EQ(c.wait_exit(), 0);
}

// End to end with a real report: `trainlint run --format json --output .trainlint/run.json` on
// examples/train_bad.py with Debian's PyTorch; the editor shows the cost of its gc.collect().
TEST(LspMeasured, RealRunReportMatchesByFingerprint) {
  if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0) GTEST_SKIP() << "no torch in /usr/bin/python3";
  tl::test::TempDir ws;
  fs::path root = fs::canonical(ws.path);
  tl::test::write_file(root / "pyproject.toml", "[project]\nname = \"examples\"\n");
  std::string text = tl::test::read_file(fs::path(tl::test::source_dir()) / "examples" / "train_bad.py");
  tl::test::write_file(root / "train_bad.py", text);
  auto run = tl::test::run_cli("run --max-steps 5 --format json --output .trainlint/run.json -- /usr/bin/python3 train_bad.py",
                               root.string());
  ASSERT_EQ(run.rc, 0) << run.err;
  json report = json::parse(tl::test::read_file(root / ".trainlint" / "run.json"));
  std::string gc_fp;
  for (auto& f : report["findings"])
    if (f["code"] == "TL101") gc_fp = f["fingerprint"];
  ASSERT_FALSE(gc_fp.empty());

  tl::test::LspClient c(tl::test::binary(), root.string());
  std::string uri = tl::lsp::path_to_uri((root / "train_bad.py").string());
  c.send({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "initialize"},
          {"params", {{"rootUri", tl::lsp::path_to_uri(root.string())}, {"capabilities", json::object()}}}});
  ASSERT_TRUE(c.wait_for([](const json& m) { return m.contains("id") && m["id"] == 1; }));
  c.send({{"jsonrpc", "2.0"}, {"method", "textDocument/didOpen"},
          {"params", {{"textDocument", {{"uri", uri}, {"languageId", "python"}, {"version", 1}, {"text", text}}}}}});
  auto p = c.wait_for([&](const json& m) {
    return m.value("method", "") == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri;
  });
  ASSERT_TRUE(p);
  json gc;
  for (auto& d : p->msg["params"]["diagnostics"])
    if (d["code"] == "TL101") gc = d;
  ASSERT_FALSE(gc.is_null()) << p->msg.dump();
  EXPECT_EQ(gc["data"]["fingerprint"], gc_fp) << "the editor and `trainlint run` name the finding alike";
  std::string msg = gc["message"];
  EXPECT_NE(msg.find("measured: "), std::string::npos) << msg;
  EXPECT_NE(msg.find("% of step time"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(confirmed, run of "), std::string::npos) << msg;
  EXPECT_EQ(gc["severity"], 1) << "a confirmed warning is raised to an error";
  c.send({{"jsonrpc", "2.0"}, {"id", 2}, {"method", "shutdown"}});
  ASSERT_TRUE(c.wait_for([](const json& m) { return m.contains("id") && m["id"] == 2; }));
  c.send({{"jsonrpc", "2.0"}, {"method", "exit"}});
  EXPECT_EQ(c.wait_exit(), 0);
}

}  // namespace

// The report's path from the workspace configuration ([tool.trainlint.run] report), which wins
// over the default .trainlint/run.json, and is followed when the configuration changes.
TEST(LspMeasured, ReportPathFromTheWorkspaceConfiguration) {
  tl::test::TempDir ws;
  fs::path root = fs::canonical(ws.path);
  tl::test::write_file(root / "pyproject.toml", "[project]\nname = \"measured\"\n");
  tl::test::write_file(root / "train.py", kTrain);
  json confirmed = make_report(root, "confirmed"), negligible = make_report(root, "negligible");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  tl::test::write_file(root / "reports" / "last-run.json", confirmed.dump());
  tl::test::write_file(root / ".trainlint" / "run.json", negligible.dump());
  tl::test::write_file(root / "pyproject.toml",
                       "[project]\nname = \"measured\"\n\n[tool.trainlint.run]\nreport = \"reports/last-run.json\"\n");

  tl::test::LspClient c(tl::test::binary(), root.string());
  std::string uri = tl::lsp::path_to_uri((root / "train.py").string());
  c.send({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "initialize"},
          {"params", {{"rootUri", tl::lsp::path_to_uri(root.string())}, {"capabilities", json::object()}}}});
  ASSERT_TRUE(c.wait_for([](const json& m) { return m.contains("id") && m["id"] == 1; }));
  c.send({{"jsonrpc", "2.0"}, {"method", "initialized"}, {"params", json::object()}});
  c.send({{"jsonrpc", "2.0"}, {"method", "textDocument/didOpen"},
          {"params", {{"textDocument", {{"uri", uri}, {"languageId", "python"}, {"version", 1}, {"text", kTrain}}}}}});
  auto gc_severity = [&](int expected) {
    return [&, expected](const json& m) {
      if (m.value("method", "") != "textDocument/publishDiagnostics" || m["params"]["uri"] != uri) return false;
      json gc = diag_with(m["params"]["diagnostics"], "TL101");
      return !gc.is_null() && gc["severity"] == expected;
    };
  };
  auto p = c.wait_for(gc_severity(1));
  ASSERT_TRUE(p) << "the configured report (confirmed) was not used";
  EXPECT_NE(diag_with(p->msg["params"]["diagnostics"], "TL101")["message"].get<std::string>().find("(confirmed, run of "),
            std::string::npos);

  // the configuration now names the other report: diagnostics follow it
  tl::test::write_file(root / "pyproject.toml",
                       "[project]\nname = \"measured\"\n\n[tool.trainlint.run]\nreport = \".trainlint/run.json\"\n");
  json watched = {{"uri", tl::lsp::path_to_uri((root / "pyproject.toml").string())}, {"type", 2}};
  c.send({{"jsonrpc", "2.0"},
          {"method", "workspace/didChangeWatchedFiles"},
          {"params", {{"changes", json::array({watched})}}}});
  ASSERT_TRUE(c.wait_for(gc_severity(4))) << "the report named by the changed configuration was not read";

  c.send({{"jsonrpc", "2.0"}, {"id", 3}, {"method", "shutdown"}});
  ASSERT_TRUE(c.wait_for([](const json& m) { return m.contains("id") && m["id"] == 3; }));
  c.send({{"jsonrpc", "2.0"}, {"method", "exit"}});
  EXPECT_EQ(c.wait_exit(), 0);
}
