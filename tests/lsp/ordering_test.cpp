// Rapid edits with no debounce: analyses overlap the edits, yet the versions published only go
// up and the last publish describes the last text (a stale analysis never replaces a newer one).
#include <gtest/gtest.h>

#include <filesystem>

#include "analyzer/lsp/protocol.h"
#include "lsp/lsp_client.h"
#include "support/test_support.h"

namespace fs = std::filesystem;
using nlohmann::json;

TEST(LspOrdering, NoStaleResultAfterRapidEdits) {
  tl::test::TempDir ws;
  fs::path root = fs::canonical(ws.path);
  tl::test::write_file(root / "pyproject.toml", "[project]\nname = \"rapid\"\n");
  std::string text =
      "import gc\n\nimport torch\n\n\ndef train(model, loader, optimizer):\n    model = model.cuda()\n"
      "    for step, (x, y) in enumerate(loader):\n        with torch.autocast(\"cuda\", dtype=torch.bfloat16):\n"
      "            loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())\n"
      "        optimizer.zero_grad(set_to_none=True)\n        loss.backward()\n        optimizer.step()\n"
      "        pass\n";
  tl::test::write_file(root / "train.py", text);
  std::string uri = tl::lsp::path_to_uri((root / "train.py").string());
  tl::test::LspClient c(tl::test::binary(), root.string());
  c.send({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "initialize"},
          {"params", {{"rootUri", tl::lsp::path_to_uri(root.string())}, {"capabilities", json::object()},
                      {"initializationOptions", {{"debounceMs", 0}}}}}});
  ASSERT_TRUE(c.wait_for([](const json& m) { return m.contains("id") && m["id"] == 1; }));
  c.send({{"jsonrpc", "2.0"}, {"method", "textDocument/didOpen"},
          {"params", {{"textDocument", {{"uri", uri}, {"languageId", "python"}, {"version", 1}, {"text", text}}}}}});
  // 61 edits toggling line 13 between `pass` and `gc.collect()`: even versions hold gc.collect()
  const int kLast = 62;
  bool gc_on = false;
  for (int v = 2; v <= kLast; ++v) {
    std::string now = gc_on ? "        gc.collect()" : "        pass";
    std::string next = gc_on ? "        pass" : "        gc.collect()";
    gc_on = !gc_on;
    json change = {{"range", {{"start", {{"line", 13}, {"character", 0}}}, {"end", {{"line", 13}, {"character", now.size()}}}}},
                   {"text", next}};
    c.send({{"jsonrpc", "2.0"}, {"method", "textDocument/didChange"},
            {"params", {{"textDocument", {{"uri", uri}, {"version", v}}}, {"contentChanges", json::array({change})}}}});
  }
  // Collect every publish until the server has been quiet for a second. A version whose
  // diagnostics equal the last published ones is not republished, so the last publish may carry an
  // earlier version than 62; it must still describe the final text (gc.collect() on).
  std::vector<json> pubs;
  while (auto p = c.wait_for([](const json& m) { return m.value("method", "") == "textDocument/publishDiagnostics"; },
                             std::chrono::milliseconds(pubs.empty() ? 20000 : 1000)))
    pubs.push_back(p->msg["params"]);
  ASSERT_FALSE(pubs.empty());
  int64_t prev = 0;
  for (auto& p : pubs) {
    int64_t v = p["version"];
    EXPECT_LT(prev, v) << "versions go up: a stale analysis was published after a newer one";
    prev = v;
    bool on = v % 2 == 0;  // even versions hold gc.collect()
    EXPECT_EQ(p["diagnostics"].size(), on ? 1u : 0u) << "version " << v << ": " << p.dump();
  }
  EXPECT_EQ(pubs.back()["diagnostics"].size(), 1u) << "the last publish describes the final text";
  EXPECT_EQ(pubs.back()["diagnostics"][0]["code"], "TL101");
  c.send({{"jsonrpc", "2.0"}, {"id", 2}, {"method", "shutdown"}});
  ASSERT_TRUE(c.wait_for([](const json& m) { return m.contains("id") && m["id"] == 2; }));
  c.send({{"jsonrpc", "2.0"}, {"method", "exit"}});
  EXPECT_EQ(c.wait_exit(), 0);
}
