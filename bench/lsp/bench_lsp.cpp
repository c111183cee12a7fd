// Edit-to-diagnostics latency of `trainlint lsp` (issue 10): a client sends a didChange and waits
// for the publishDiagnostics of that version; p50/p95/max over 200 edits, on a 2,000-line
// training file and on a 3-file program (the edit in the helper module, the finding depending on
// the training script). Each edit toggles a `gc.collect()` in the step loop (or in the helper the
// loop calls), so every edit changes the diagnostics and is published. The reference, in the same
// process: the engine alone (lint_paths with the same buffer as an overlay), median of 20 runs.
//
// Edits are spaced GAP_MS apart (after the previous publish), like keystrokes; with a gap shorter
// than debounceMs every edit counts as part of a burst and waits debounceMs.
//
//   trainlint_bench_lsp [EDITS] [DEBOUNCE_MS] [GAP_MS]   (defaults: 200 edits, the server's default
//                                                         debounce of 50 ms, 100 ms between edits)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "analyzer/engine/engine.h"
#include "analyzer/lsp/protocol.h"
#include "lsp/lsp_client.h"
#include "support/test_support.h"

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

// A 2,000-line training script: data helpers, a model, metrics, and the step loop at the end.
std::string big_training_file(size_t lines_wanted, size_t& toggle_line) {
  std::string s =
      "import argparse\nimport gc\nimport math\n\nimport torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader, Dataset\n\n\n";
  size_t i = 0;
  auto lines = [&] { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); };
  while (lines() < lines_wanted - 40) {
    std::string n = std::to_string(i++);
    s += "def augment_" + n + "(batch, scale=1.0):\n"
         "    \"\"\"Scale and shift one batch (variant " + n + ").\"\"\"\n"
         "    mean = batch.mean(dim=0, keepdim=True)\n"
         "    std = batch.std(dim=0, keepdim=True) + 1e-6\n"
         "    out = (batch - mean) / std\n"
         "    if scale != 1.0:\n"
         "        out = out * scale\n"
         "    return out\n\n\n"
         "class Block" + n + "(nn.Module):\n"
         "    def __init__(self, width):\n"
         "        super().__init__()\n"
         "        self.fc = nn.Linear(width, width)\n"
         "        self.act = nn.GELU()\n\n"
         "    def forward(self, x):\n"
         "        return x + self.act(self.fc(x))\n\n\n";
  }
  s += "def train(args):\n"
       "    model = nn.Sequential(*[Block0(args.width) for _ in range(args.depth)]).cuda()\n"
       "    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)\n"
       "    loader = DataLoader(args.dataset, batch_size=64, num_workers=8, pin_memory=True, persistent_workers=True)\n"
       "    for epoch in range(args.epochs):\n"
       "        for step, (x, y) in enumerate(loader):\n"
       "            x = augment_0(x.cuda(non_blocking=True))\n"
       "            y = y.cuda(non_blocking=True)\n"
       "            with torch.autocast(\"cuda\", dtype=torch.bfloat16):\n"
       "                loss = nn.functional.mse_loss(model(x), y)\n"
       "            optimizer.zero_grad(set_to_none=True)\n"
       "            loss.backward()\n"
       "            optimizer.step()\n";
  toggle_line = lines();
  s += "            pass\n";
  while (lines() < lines_wanted) s += "\n";
  return s;
}

struct Stats {
  double p50, p95, max;
};
Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[std::min(v.size() - 1, static_cast<size_t>(q * (v.size() - 1) + 0.5))]; };
  return {at(0.5), at(0.95), v.back()};
}

double engine_reference(const std::vector<std::string>& paths, const std::map<std::string, std::string>& overlays) {
  std::vector<double> t;
  tl::LintOptions o;
  o.overlays = overlays;
  o.threads = 2;  // as the server runs it
  for (int i = 0; i < 20; ++i) {
    auto t0 = Clock::now();
    auto r = tl::lint_paths(paths, o);
    t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  return stats(t).p50;
}

// Sends `edits` didChange notifications to `uri` alternating `on`/`off` at `line`, each waiting
// for the publish of that version at `watch_uri`.
std::vector<double> run_edits(tl::test::LspClient& c, const std::string& uri, const std::string& watch_uri, size_t line,
                              const std::string& on, const std::string& off, int edits, int64_t& version, int gap_ms) {
  std::vector<double> lat;
  bool state = false;  // the line holds `off`
  for (int i = 0; i < edits; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(gap_ms));
    const std::string& now = state ? on : off;
    const std::string& next = state ? off : on;
    state = !state;
    ++version;
    json change = {{"range", {{"start", {{"line", line}, {"character", 0}}},
                              {"end", {{"line", line}, {"character", now.size()}}}}},
                   {"text", next}};
    auto t0 = Clock::now();
    c.send({{"jsonrpc", "2.0"},
            {"method", "textDocument/didChange"},
            {"params", {{"textDocument", {{"uri", uri}, {"version", version}}}, {"contentChanges", json::array({change})}}}});
    int64_t want = version;
    bool same = uri == watch_uri;
    auto got = c.wait_for([&](const json& m) {
      return m.value("method", "") == "textDocument/publishDiagnostics" && m["params"]["uri"] == watch_uri &&
             (!same || m["params"]["version"] == want);
    });
    if (!got) {
      std::fprintf(stderr, "no diagnostics for edit %d\n", i);
      std::exit(1);
    }
    lat.push_back(std::chrono::duration<double, std::milli>(got->at - t0).count());
  }
  return lat;
}

json init_msg(const fs::path& root, int debounce) {
  return {{"jsonrpc", "2.0"}, {"id", 1}, {"method", "initialize"},
          {"params", {{"rootUri", tl::lsp::path_to_uri(root.string())}, {"capabilities", json::object()},
                      {"initializationOptions", {{"debounceMs", debounce}}}}}};
}
json open_msg(const std::string& uri, const std::string& text) {
  return {{"jsonrpc", "2.0"}, {"method", "textDocument/didOpen"},
          {"params", {{"textDocument", {{"uri", uri}, {"languageId", "python"}, {"version", 1}, {"text", text}}}}}};
}

}  // namespace

int main(int argc, char** argv) {
  int edits = argc > 1 ? std::atoi(argv[1]) : 200;
  int debounce = argc > 2 ? std::atoi(argv[2]) : 50;
  int gap = argc > 3 ? std::atoi(argv[3]) : 100;
  tl::test::TempDir ws;
  fs::path root = fs::canonical(ws.path);
  tl::test::write_file(root / "single" / "pyproject.toml", "[project]\nname = \"single\"\n");
  size_t toggle = 0;
  std::string big = big_training_file(2000, toggle);
  fs::path big_path = root / "single" / "train_big.py";
  tl::test::write_file(big_path, big);

  fs::path prog = root / "program";
  tl::test::write_file(prog / "pyproject.toml", "[project]\nname = \"program\"\n");
  tl::test::write_file(prog / "model.py",
                       "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def __init__(self, width):\n"
                       "        super().__init__()\n        self.body = nn.Sequential(nn.Linear(width, width), nn.GELU(), "
                       "nn.Linear(width, 10))\n\n    def forward(self, x):\n        return self.body(x)\n");
  std::string utils =
      "import gc\nimport time\n\n\ndef log_metrics(step, loss, history):\n    history.append(loss.detach())\n"
      "    pass\n    return time.time()\n";
  tl::test::write_file(prog / "utils.py", utils);
  tl::test::write_file(prog / "train.py",
                       "import torch\nfrom torch.utils.data import DataLoader\n\nfrom model import Net\nfrom utils import "
                       "log_metrics\n\n\ndef main(dataset, epochs=10):\n    model = Net(512).cuda()\n    optimizer = "
                       "torch.optim.AdamW(model.parameters(), lr=3e-4)\n    loader = DataLoader(dataset, batch_size=64, "
                       "num_workers=8, pin_memory=True, persistent_workers=True)\n    history = []\n    for epoch in "
                       "range(epochs):\n        for step, (x, y) in enumerate(loader):\n            x, y = "
                       "x.cuda(non_blocking=True), y.cuda(non_blocking=True)\n            with torch.autocast(\"cuda\", "
                       "dtype=torch.bfloat16):\n                loss = torch.nn.functional.cross_entropy(model(x), y)\n"
                       "            optimizer.zero_grad(set_to_none=True)\n            loss.backward()\n"
                       "            optimizer.step()\n            log_metrics(step, loss, history)\n");

  std::printf("trainlint lsp: edit-to-diagnostics latency, %d edits %d ms apart, debounceMs %d, %u cores\n", edits, gap,
              debounce, std::thread::hardware_concurrency());
  {
    tl::test::LspClient c(TRAINLINT_BINARY, (root / "single").string());
    c.send(init_msg(root / "single", debounce));
    c.wait_for([](const json& m) { return m.contains("id") && m["id"] == 1; });
    std::string uri = tl::lsp::path_to_uri(big_path.string());
    c.send(open_msg(uri, big));
    c.wait_for([](const json& m) { return m.value("method", "") == "textDocument/publishDiagnostics"; });
    int64_t version = 1;
    auto lat = run_edits(c, uri, uri, toggle, "            gc.collect()", "            pass", edits, version, gap);
    Stats s = stats(lat);
    std::string with_gc = big;
    with_gc.replace(with_gc.find("            pass\n"), 16, "            gc.collect()\n");
    double ref = engine_reference({big_path.string()}, {{big_path.string(), with_gc}});
    std::printf("single file (2,000 lines): p50 %.1f ms  p95 %.1f ms  max %.1f ms   engine alone %.1f ms (p50/engine %.2fx)\n",
                s.p50, s.p95, s.max, ref, s.p50 / ref);
  }
  {
    tl::test::LspClient c(TRAINLINT_BINARY, prog.string());
    c.send(init_msg(prog, debounce));
    c.wait_for([](const json& m) { return m.contains("id") && m["id"] == 1; });
    std::string turi = tl::lsp::path_to_uri((prog / "train.py").string());
    std::string uuri = tl::lsp::path_to_uri((prog / "utils.py").string());
    c.send(open_msg(turi, tl::test::read_file(prog / "train.py")));
    c.send(open_msg(uuri, utils));
    c.wait_for([&](const json& m) { return m.value("method", "") == "textDocument/publishDiagnostics" && m["params"]["uri"] == uuri; });
    c.drop_inbox();
    int64_t version = 1;
    auto lat = run_edits(c, uuri, uuri, 6, "    gc.collect()", "    pass", edits, version, gap);
    Stats s = stats(lat);
    std::string with_gc = utils;
    with_gc.replace(with_gc.find("    pass\n"), 9, "    gc.collect()\n");
    double ref = engine_reference({(prog / "train.py").string(), (prog / "utils.py").string()},
                                  {{(prog / "utils.py").string(), with_gc}});
    std::printf("3-file program (edit utils.py): p50 %.1f ms  p95 %.1f ms  max %.1f ms   engine alone %.1f ms (p50/engine %.2fx)\n",
                s.p50, s.p95, s.max, ref, s.p50 / ref);
  }
  return 0;
}
