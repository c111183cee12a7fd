// `trainlint run --html`: the page of a real run, opened in headless Chromium (Debian `chromium`).
// The DOM Chromium builds from it must hold the charts (one bar per step, the warm-up marked, the
// stacked bar of the mean step), the findings with their source lines, and nothing the program's
// source could inject; Chromium must log no console error. The screenshot is kept in the build
// folder (test-artifacts/run-report.png) for a person to look at.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>

#include "analyzer/runtime/boot_files.h"
#include "analyzer/runtime/html_report.h"
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

std::string chromium() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (fs::exists(p)) return p;
  return {};
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + what.size())) ++n;
  return n;
}

// A training loop with a gc.collect() every step (TL101) and a source comment that would break
// out of the page if it were not escaped.
const char* kProgram = R"(import gc

import torch
import torch.nn as nn


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    junk = [[i] * 50 for i in range(20000)]  # some objects for the collector to walk
    for step in range(1000):
        x, y = torch.randn(32, 64), torch.randn(32, 1)
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        gc.collect()  # </pre><script>console.error("injected")</script> & "quotes"
    print(len(junk))


if __name__ == "__main__":
    main()
)";

}  // namespace

TEST(RuntimeHtml, EscapesEveryMarkupCharacter) {
  EXPECT_EQ(tl::runtime::html_escape("<a href=\"x\">'&'</a>"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
}

TEST(RuntimeHtml, TheReportRendersInHeadlessChromium) {
  if (tl::runtime::boot_files().empty()) GTEST_SKIP() << "the bootstrap (shim/python) was not in the tree at build time";
  const std::string browser = chromium();
  if (browser.empty()) GTEST_SKIP() << "chromium is not installed (scripts/deps.sh --runtime-tests installs it)";
  TempDir d;
  write_file(d.path / "train.py", kProgram);
  const std::string cmd = "cd '" + d.path.string() + "' && '" + tl::test::binary() +
                          "' run --max-steps 8 --format json --output r.json --html 'report.html' -- /usr/bin/python3 "
                          "train.py >out.txt 2>err.txt";
  ASSERT_EQ(shell(cmd), 0) << read_file(d.path / "err.txt");
  const std::string html = read_file(d.path / "report.html");
  json doc = json::parse(read_file(d.path / "r.json"));
  ASSERT_EQ(doc["run"]["steps"], 8);

  // self-contained, nothing injected from the source
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_NE(html.find("&lt;/pre&gt;&lt;script&gt;console.error(&quot;injected&quot;)"), std::string::npos);

  // Chromium's DOM and console
  const fs::path artifacts = fs::path(tl::test::binary()).parent_path() / "test-artifacts";
  fs::create_directories(artifacts);
  const fs::path png = artifacts / "run-report.png";
  fs::remove(png);
  const std::string flags = " --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions"
                            " --user-data-dir='" + (d.path / "profile").string() + "'";
  const std::string url = "file://" + (d.path / "report.html").string();
  ASSERT_EQ(shell("'" + browser + "'" + flags + " --enable-logging=stderr --v=0 --dump-dom '" + url + "' >'" +
                  (d.path / "dom.html").string() + "' 2>'" + (d.path / "console.txt").string() + "'"),
            0)
      << read_file(d.path / "console.txt");
  const std::string dom = read_file(d.path / "dom.html");
  const std::string console = read_file(d.path / "console.txt");
  EXPECT_EQ(console.find("CONSOLE"), std::string::npos) << console;
  EXPECT_EQ(console.find("Uncaught"), std::string::npos) << console;
  EXPECT_EQ(console.find("Refused"), std::string::npos) << console;  // a blocked resource: not self-contained

  // the timeline: one bar per step, step 1 the warm-up
  std::smatch sm;
  ASSERT_TRUE(std::regex_search(dom, sm, std::regex("<svg id=\"timeline\"[^>]*data-steps=\"(\\d+)\"")));
  EXPECT_EQ(sm[1], "8");
  EXPECT_EQ(count(dom, "<rect class=\"step\""), 7u);
  EXPECT_EQ(count(dom, "<rect class=\"step warmup\""), 1u);
  EXPECT_NE(dom.find("median "), std::string::npos);
  // the stacked bar: gc.collect (confirmed) and the rest of the step at least, with a legend
  ASSERT_NE(dom.find("<svg id=\"breakdown\""), std::string::npos);
  EXPECT_GE(count(dom, "<rect class=\"seg\""), 2u);
  EXPECT_NE(dom.find("TL101 train.py:18"), std::string::npos);
  EXPECT_NE(dom.find("the rest of the step"), std::string::npos);
  // the findings: one row each, the flagged source line, the fix, the estimate
  EXPECT_EQ(count(dom, "<tr class=\"finding\""), doc["findings"].size() - [&] {
    size_t rt = 0;
    for (auto& f : doc["findings"]) rt += f["runtime"].value("runtime_only", false);
    return rt;
  }());
  EXPECT_NE(dom.find("<span class=\"hit\"><span class=\"ln\">   18  </span>        gc.collect()"), std::string::npos);
  EXPECT_NE(dom.find("Use instead:"), std::string::npos);
  EXPECT_NE(dom.find("estimated step if the"), std::string::npos);
  if (!doc["run"]["gpu"]["measured"].get<bool>()) {  // one short line, not the CUPTI error
    size_t at = dom.find("GPU: not measured \u2014 ");
    ASSERT_NE(at, std::string::npos);
    EXPECT_LT(dom.find("</p>", at) - at, 90u) << dom.substr(at, 300);
  }

  // the screenshot, for a person to look at
  ASSERT_EQ(shell("'" + browser + "'" + flags + " --hide-scrollbars --window-size=1100,1500 --screenshot='" +
                  png.string() + "' '" + url + "' >/dev/null 2>&1"),
            0);
  ASSERT_TRUE(fs::exists(png));
  EXPECT_GT(fs::file_size(png), 20000u);  // a blank page is a few KiB
}
