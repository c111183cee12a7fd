// The SARIF, GitHub, GitLab and statistics reporters on results built in memory: notebooks
// (cell + cell line), fixes, escaping, paths relative to the root, unique GitLab fingerprints.
// Every SARIF log here is also validated against the official schema.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/report/report.h"
#include "rules/registry.h"
#include "support/sarif_validate.h"
#include "support/test_support.h"

namespace fs = std::filesystem;
using nlohmann::json;
using tl::test::TempDir;

namespace {

// A notebook as the engine sees it: its code cells joined, each line mapped back to its cell
// (cells counted as a reader scrolls, markdown included: cell 1 here is a markdown title).
struct NotebookCell {
  uint32_t index;
  std::string code;
};

std::unique_ptr<tl::SourceFile> notebook(const std::string& path, const std::vector<NotebookCell>& cells) {
  std::string text;
  std::vector<tl::CellLine> map;
  for (auto& c : cells) {
    std::stringstream ss(c.code);
    std::string line;
    uint32_t n = 0;
    while (std::getline(ss, line)) {
      text += line + "\n";
      map.push_back({c.index, ++n});
    }
  }
  auto src = std::make_unique<tl::SourceFile>(path, text);
  src->set_cell_lines(std::move(map));
  return src;
}

const std::vector<NotebookCell> kNotebookCells = {
    {2, "import gc\n\nimport torch\nfrom torch.utils.data import DataLoader, TensorDataset\n"},
    {3,
     "model = torch.nn.Linear(16, 2).cuda()\n"
     "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
     "ds = TensorDataset(torch.randn(256, 16), torch.randint(0, 2, (256,)))\n"
     "loader = DataLoader(ds, batch_size=32, num_workers=2, pin_memory=True, persistent_workers=True)\n"},
    {5,
     "for epoch in range(3):\n"
     "    for x, y in loader:\n"
     "        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)\n"
     "        loss = torch.nn.functional.cross_entropy(model(x), y)\n"
     "        optimizer.zero_grad()\n"
     "        loss.backward()\n"
     "        optimizer.step()\n"
     "        gc.collect()\n"},
};

struct NotebookRun {
  TempDir root;
  std::string path;
  tl::LintResult res;
  NotebookRun() {
    path = (root.path / "notebooks" / "analysis run.ipynb").string();
    std::vector<std::unique_ptr<tl::SourceFile>> files;
    files.push_back(notebook(path, kNotebookCells));
    tl::LintOptions o;
    o.select = {"TL101"};
    o.threads = 1;
    res = tl::lint_sources(std::move(files), o);
  }
  tl::report::ReportOptions opts() const {
    tl::report::ReportOptions ro;
    ro.root = root.path;
    return ro;
  }
};

// A plain file with a TL401 finding and the fix the rule describes (assign the result back).
struct FixRun {
  TempDir root;
  tl::LintResult res;
  FixRun() {
    std::string text =
        "import torch\n"
        "\n"
        "\n"
        "def evaluate(model, loader, device):\n"
        "    model.eval()\n"
        "    correct = 0\n"
        "    with torch.no_grad():\n"
        "        for images, labels in loader:\n"
        "            images = images.to(device)\n"
        "            labels.to(device)\n"
        "            correct += (model(images).argmax(1) == labels).sum().item()\n"
        "    return correct\n";
    std::vector<std::unique_ptr<tl::SourceFile>> files;
    files.push_back(std::make_unique<tl::SourceFile>((root.path / "eval.py").string(), text));
    tl::LintOptions o;
    o.select = {"TL401"};
    o.threads = 1;
    res = tl::lint_sources(std::move(files), o);
    if (res.findings.size() == 1) {
      tl::Finding& f = res.findings[0];
      tl::Fix fix;
      fix.title = "Assign the result back to `labels`";
      tl::Edit e;
      e.range = f.range;
      e.range.end = e.range.begin;  // an insertion before `labels.to(device)`
      e.range.stop = e.range.start;
      e.replacement = "labels = ";
      fix.edits.push_back(e);
      fix.applicability = tl::Applicability::Safe;
      f.fix = fix;
    }
  }
};

tl::Finding finding(std::string code, std::string path, uint32_t line, uint32_t col, uint32_t end_col,
                    std::string message, std::string fingerprint) {
  tl::Finding f;
  f.code = code;
  const tl::RuleInfo* r = tl::find_rule(code);
  f.slug = r ? std::string(r->slug) : "unknown";
  f.severity = r ? r->severity : tl::Severity::Warning;
  f.path = std::move(path);
  f.range.start = {line, col};
  f.range.stop = {line, end_col};
  f.message = std::move(message);
  f.fingerprint = std::move(fingerprint);
  return f;
}

// ---- SARIF ------------------------------------------------------------------------------------

TEST(SarifReport, NotebookRegionsUseCellLinesAndCarryTheCell) {
  NotebookRun nb;
  ASSERT_EQ(nb.res.findings.size(), 1u);
  json log = tl::report::to_sarif(nb.res, nb.opts());
  auto v = tl::test::validate_sarif(log);
  EXPECT_EQ(v.rc, 0) << v.output;

  auto& result = log["runs"][0]["results"][0];
  EXPECT_EQ(result["ruleId"], "TL101");
  auto& loc = result["locations"][0];
  EXPECT_EQ(loc["physicalLocation"]["artifactLocation"]["uri"], "notebooks/analysis%20run.ipynb");
  EXPECT_EQ(loc["physicalLocation"]["artifactLocation"]["uriBaseId"], "%SRCROOT%");
  // `gc.collect()` is line 8 of cell 5 (line 16 of the joined code), column 9
  EXPECT_EQ(loc["physicalLocation"]["region"]["startLine"], 8);
  EXPECT_EQ(loc["physicalLocation"]["region"]["startColumn"], 9);
  EXPECT_EQ(loc["physicalLocation"]["region"]["endLine"], 8);
  EXPECT_EQ(loc["physicalLocation"]["region"]["endColumn"], 21);
  EXPECT_EQ(loc["properties"]["cell"], 5);
  EXPECT_EQ(result["properties"]["cell"], 5);
  // the step loop `for x, y in loader:` is line 2 of the same cell
  auto& related = result["relatedLocations"][0];
  EXPECT_EQ(related["physicalLocation"]["region"]["startLine"], 2);
  EXPECT_EQ(related["properties"]["cell"], 5);
}

TEST(SarifReport, FixesBecomeArtifactChanges) {
  FixRun run;
  ASSERT_EQ(run.res.findings.size(), 1u) << "TL401 should flag `labels.to(device)`";
  tl::report::ReportOptions ro;
  ro.root = run.root.path;
  json log = tl::report::to_sarif(run.res, ro);
  auto v = tl::test::validate_sarif(log);
  EXPECT_EQ(v.rc, 0) << v.output;

  auto& fixes = log["runs"][0]["results"][0]["fixes"];
  ASSERT_EQ(fixes.size(), 1u);
  EXPECT_EQ(fixes[0]["description"]["text"], "Assign the result back to `labels`");
  EXPECT_EQ(fixes[0]["properties"]["applicability"], "safe");
  auto& change = fixes[0]["artifactChanges"][0];
  EXPECT_EQ(change["artifactLocation"]["uri"], "eval.py");
  auto& rep = change["replacements"][0];
  // an insertion at 10:13: an empty region, in lines/columns and in bytes
  EXPECT_EQ(rep["deletedRegion"]["startLine"], 10);
  EXPECT_EQ(rep["deletedRegion"]["startColumn"], 13);
  EXPECT_EQ(rep["deletedRegion"]["endLine"], 10);
  EXPECT_EQ(rep["deletedRegion"]["endColumn"], 13);
  EXPECT_EQ(rep["deletedRegion"]["byteLength"], 0);
  EXPECT_EQ(rep["insertedContent"]["text"], "labels = ");
  // applying the replacement at its byte offset gives the fixed line
  const tl::SourceFile* file = run.res.model->modules()[0]->src.get();
  std::string fixed = file->text();
  fixed.insert(rep["deletedRegion"]["byteOffset"].get<size_t>(), "labels = ");
  EXPECT_NE(fixed.find("            labels = labels.to(device)\n"), std::string::npos) << fixed;
}

TEST(SarifReport, NotebookFixKeepsCellCoordinates) {
  NotebookRun nb;
  ASSERT_EQ(nb.res.findings.size(), 1u);
  tl::Finding& f = nb.res.findings[0];
  tl::Fix fix;
  fix.title = "Remove the per-step `gc.collect()`";
  fix.applicability = tl::Applicability::Unsafe;
  fix.edits.push_back({f.range, ""});
  f.fix = fix;
  json log = tl::report::to_sarif(nb.res, nb.opts());
  auto v = tl::test::validate_sarif(log);
  EXPECT_EQ(v.rc, 0) << v.output;
  auto& rep = log["runs"][0]["results"][0]["fixes"][0]["artifactChanges"][0]["replacements"][0];
  EXPECT_EQ(rep["deletedRegion"]["startLine"], 8);
  EXPECT_FALSE(rep["deletedRegion"].contains("byteOffset"));  // bytes of the joined code mean nothing in the .ipynb
  EXPECT_EQ(rep["properties"]["cell"], 5);
  EXPECT_EQ(log["runs"][0]["results"][0]["fixes"][0]["properties"]["applicability"], "unsafe");
}

TEST(SarifReport, EveryRuleOfTheRegistryWithItsDoc) {
  tl::LintResult empty;
  tl::report::ReportOptions ro;
  ro.root = "/srv/checkout";
  ro.help_uri_base = "https://docs.example.org/trainlint rules/";
  json log = tl::report::to_sarif(empty, ro);
  auto v = tl::test::validate_sarif(log);
  EXPECT_EQ(v.rc, 0) << v.output;

  auto& run = log["runs"][0];
  EXPECT_EQ(run["originalUriBaseIds"]["%SRCROOT%"]["uri"], "file:///srv/checkout/");
  EXPECT_EQ(run["columnKind"], "unicodeCodePoints");
  EXPECT_EQ(run["results"].size(), 0u);
  auto& rules = run["tool"]["driver"]["rules"];
  ASSERT_EQ(rules.size(), tl::registry().size());
  for (size_t i = 0; i < rules.size(); ++i) {
    const tl::RuleInfo& r = tl::registry()[i];
    EXPECT_EQ(rules[i]["id"], std::string(r.code));
    EXPECT_EQ(rules[i]["name"], std::string(r.slug));
    EXPECT_EQ(rules[i]["shortDescription"]["text"], std::string(r.summary));
    std::string level = r.severity == tl::Severity::Error ? "error" : r.severity == tl::Severity::Warning ? "warning" : "note";
    EXPECT_EQ(rules[i]["defaultConfiguration"]["level"], level) << r.code;
    if (!tl::rule_doc(r.code).empty()) {
      EXPECT_EQ(rules[i]["help"]["markdown"], std::string(tl::rule_doc(r.code)));
      EXPECT_TRUE(rules[i]["helpUri"].get<std::string>().starts_with("https://docs.example.org/trainlint%20rules/" +
                                                                        std::string(r.code) + "-" + std::string(r.slug)))
          << rules[i]["helpUri"];
    }
  }
  // fullDescription is the doc's "What it does", unwrapped; tags name the family
  json tl101;
  for (auto& rr : rules)
    if (rr["id"] == "TL101") tl101 = rr;
  ASSERT_FALSE(tl101.is_null());
  json tl001 = rules[0];
  EXPECT_EQ(tl001["id"], "TL001");
  EXPECT_EQ(tl001["properties"]["tags"], json::array({"maintainability", "suppressions"}));
  EXPECT_TRUE(tl101["fullDescription"]["text"].get<std::string>().starts_with(
      "Flags a call to `gc.collect()` that runs every training or evaluation step: directly in a step loop,"))
      << tl101["fullDescription"];
  EXPECT_EQ(tl101["properties"]["tags"], json::array({"performance", "per-step-work"}));
  EXPECT_EQ(tl101["helpUri"], "https://docs.example.org/trainlint%20rules/TL101-gc-collect-per-step.md");
}

TEST(SarifReport, DefaultHelpUriIsTheInstalledDocs) {
  tl::LintResult empty;
  json log = tl::report::to_sarif(empty, {});
  std::string uri;
  for (auto& rr : log["runs"][0]["tool"]["driver"]["rules"])
    if (rr["id"] == "TL101") uri = rr["helpUri"];
  EXPECT_TRUE(uri.starts_with("file:///")) << uri;
  EXPECT_TRUE(uri.ends_with("/rules/TL101-gc-collect-per-step.md")) << uri;
  EXPECT_EQ(uri, std::string(tl::report::default_help_uri_base()) + "TL101-gc-collect-per-step.md");
}

TEST(SarifReport, FilesOutsideTheRootGetAbsoluteUris) {
  tl::LintResult res;
  res.findings.push_back(finding("TL101", "/opt/shared code/trainé.py", 3, 5, 17, "`gc.collect()` runs every step", "aa"));
  res.findings.push_back(finding("TL101", "/srv/checkout/src/train.py", 3, 5, 17, "`gc.collect()` runs every step", "bb"));
  tl::report::ReportOptions ro;
  ro.root = "/srv/checkout/";
  json log = tl::report::to_sarif(res, ro);
  auto v = tl::test::validate_sarif(log);
  EXPECT_EQ(v.rc, 0) << v.output;
  auto& a = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"];
  EXPECT_EQ(a["uri"], "file:///opt/shared%20code/train%C3%A9.py");
  EXPECT_FALSE(a.contains("uriBaseId"));
  auto& b = log["runs"][0]["results"][1]["locations"][0]["physicalLocation"]["artifactLocation"];
  EXPECT_EQ(b["uri"], "src/train.py");
  EXPECT_EQ(b["uriBaseId"], "%SRCROOT%");
  EXPECT_EQ(log["runs"][0]["results"][1]["partialFingerprints"]["trainlintFingerprint/v1"], "bb");
}

TEST(SarifReport, BracketsInAMessageWithLinksAreEscaped) {
  tl::LintResult res;
  auto f = finding("TL105", "/p/train.py", 12, 9, 30, "`losses[-1].item()` blocks the host", "cc");
  f.notes.push_back({"/p/train.py", {0, 0, {8, 5}, {14, 1}}, "runs every iteration of this training step loop"});
  res.findings.push_back(f);
  tl::report::ReportOptions ro;
  ro.root = "/p";
  json log = tl::report::to_sarif(res, ro);
  auto v = tl::test::validate_sarif(log);
  EXPECT_EQ(v.rc, 0) << v.output;
  EXPECT_EQ(log["runs"][0]["results"][0]["message"]["text"],
            "`losses\\[-1\\].item()` blocks the host ([runs every iteration of this training step loop](1))");
  EXPECT_EQ(log["runs"][0]["results"][0]["relatedLocations"][0]["id"], 1);
}

// The validator must be able to say no: a log that breaks the schema, or points a result at
// the wrong rule, or links to a related location that is not there, is rejected.
TEST(SarifReport, ValidatorRejectsBrokenLogs) {
  NotebookRun nb;
  json good = tl::report::to_sarif(nb.res, nb.opts());
  ASSERT_EQ(tl::test::validate_sarif(good).rc, 0);

  json bad_level = good;
  bad_level["runs"][0]["results"][0]["level"] = "fatal";
  auto v1 = tl::test::validate_sarif(bad_level);
  EXPECT_EQ(v1.rc, 1) << v1.output;
  EXPECT_NE(v1.output.find("'fatal' is not one of"), std::string::npos) << v1.output;

  json bad_uri = good;
  bad_uri["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] =
      "notebooks/analysis run.ipynb";  // an unencoded space is not a URI
  EXPECT_EQ(tl::test::validate_sarif(bad_uri).rc, 1);

  json bad_index = good;
  bad_index["runs"][0]["results"][0]["ruleIndex"] = 3;
  auto v3 = tl::test::validate_sarif(bad_index);
  EXPECT_EQ(v3.rc, 1);
  EXPECT_NE(v3.output.find("does not point at rule 'TL101'"), std::string::npos) << v3.output;

  json bad_link = good;
  bad_link["runs"][0]["results"][0]["relatedLocations"][0]["id"] = 7;
  EXPECT_EQ(tl::test::validate_sarif(bad_link).rc, 1);
}

// ---- GitHub -----------------------------------------------------------------------------------

TEST(GithubReport, EscapesDataAndProperties) {
  EXPECT_EQ(tl::report::github_escape_data("100% of steps\r\nnote: a:b, c"), "100%25 of steps%0D%0Anote: a:b, c");
  EXPECT_EQ(tl::report::github_escape_property("dir,with:odd%name\n"), "dir%2Cwith%3Aodd%25name%0A");
}

TEST(GithubReport, OneCommandPerFindingWithSeverityAndEscapedFields) {
  tl::LintResult res;
  auto a = finding("TL401", "/repo/eval, v2/run:1.py", 10, 13, 30, "`labels.to(...)` drops 100% of its result", "1");
  auto b = finding("TL101", "/repo/train.py", 19, 13, 25, "`gc.collect()` runs every step", "2");
  b.notes.push_back({"/repo/train.py", {0, 0, {13, 9}, {19, 25}}, "runs every iteration of this training step loop"});
  auto c = finding("TL105", "/repo/train.py", 21, 9, 0, "`.item()` syncs every step", "3");
  c.range.stop = {23, 5};  // spans lines: no columns
  res.findings = {a, b, c};
  tl::report::ReportOptions ro;
  ro.root = "/repo";
  std::ostringstream out;
  tl::report::write_github(out, res, ro);
  std::vector<std::string> lines;
  std::stringstream ss(out.str());
  for (std::string l; std::getline(ss, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 3u) << out.str();
  EXPECT_EQ(lines[0],
            "::error file=eval%2C v2/run%3A1.py,line=10,col=13,endLine=10,endColumn=30,"
            "title=TL401 tensor-to-discarded::`labels.to(...)` drops 100%25 of its result");
  EXPECT_EQ(lines[1],
            "::warning file=train.py,line=19,col=13,endLine=19,endColumn=25,title=TL101 gc-collect-per-step::"
            "`gc.collect()` runs every step%0Anote: train.py:13:9: runs every iteration of this training step loop");
  EXPECT_EQ(lines[2], "::notice file=train.py,line=21,endLine=23,title=TL105 host-sync-per-step::`.item()` syncs every step");
}

TEST(GithubReport, NotebookFindingsNameTheCell) {
  NotebookRun nb;
  std::ostringstream out;
  tl::report::write_github(out, nb.res, nb.opts());
  EXPECT_EQ(out.str().substr(0, out.str().find("::cell")),
            "::warning file=notebooks/analysis run.ipynb,title=TL101 gc-collect-per-step (cell 5%3A8%3A9)");
  EXPECT_NE(out.str().find("::cell 5:8:9: `gc.collect()`"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("%0Anote: notebooks/analysis run.ipynb:cell 5:2:5: "), std::string::npos) << out.str();
}

// ---- GitLab -----------------------------------------------------------------------------------

TEST(GitlabReport, IssuesHaveTheRequiredFieldsAndSeverities) {
  tl::LintResult res;
  res.findings = {finding("TL401", "/repo/src/eval.py", 10, 13, 30, "`labels.to(...)` result dropped", "f1"),
                  finding("TL101", "/repo/src/train.py", 19, 13, 25, "`gc.collect()` runs every step", "f2"),
                  finding("TL105", "/repo/src/train.py", 21, 9, 20, "`.item()` syncs every step", "f3"),
                  finding("TL101", "/elsewhere/train.py", 4, 1, 13, "`gc.collect()` runs every step", "f4")};
  res.messages.push_back({tl::FileMessage::Kind::Warning, "/repo/broken.py", "syntax error; the rest of the file was analysed",
                          tl::LineCol{9, 12}});
  tl::report::ReportOptions ro;
  ro.root = "/repo";
  json issues = tl::report::to_gitlab(res, ro);
  ASSERT_TRUE(issues.is_array());
  ASSERT_EQ(issues.size(), 5u);
  for (auto& i : issues) {
    for (const char* k : {"description", "check_name", "fingerprint", "severity"}) EXPECT_TRUE(i[k].is_string()) << i;
    EXPECT_TRUE(i["location"]["path"].is_string()) << i;
    EXPECT_TRUE(i["location"]["lines"]["begin"].is_number_integer()) << i;
  }
  EXPECT_EQ(issues[0]["severity"], "critical");
  EXPECT_EQ(issues[0]["check_name"], "TL401");
  EXPECT_EQ(issues[0]["categories"], json::array({"Bug Risk"}));
  EXPECT_EQ(issues[0]["location"]["path"], "src/eval.py");
  EXPECT_EQ(issues[0]["location"]["lines"]["begin"], 10);
  EXPECT_EQ(issues[0]["description"], "`labels.to(...)` result dropped [TL401 tensor-to-discarded]");
  EXPECT_EQ(issues[1]["severity"], "major");
  EXPECT_EQ(issues[1]["categories"], json::array({"Performance"}));
  EXPECT_EQ(issues[2]["severity"], "minor");
  EXPECT_EQ(issues[3]["location"]["path"], "/elsewhere/train.py");
  EXPECT_EQ(issues[4]["check_name"], "file-message");
  EXPECT_EQ(issues[4]["location"]["path"], "broken.py");
  EXPECT_EQ(issues[4]["location"]["lines"]["begin"], 9);
}

TEST(GitlabReport, FingerprintsAreUniqueEvenWhenFindingsShareOne) {
  tl::LintResult res;
  res.findings = {finding("TL101", "/repo/a.py", 5, 9, 21, "`gc.collect()` runs every step", "0123456789abcdef"),
                  finding("TL101", "/repo/a.py", 9, 9, 21, "`gc.collect()` runs every step", "0123456789abcdef"),
                  finding("TL101", "/repo/a.py", 12, 9, 21, "`gc.collect()` runs every step", "0123456789abcdef"),
                  finding("TL102", "/repo/a.py", 14, 9, 33, "`empty_cache()` runs every step", ""),
                  finding("TL102", "/repo/a.py", 15, 9, 33, "`empty_cache()` runs every step", "")};
  tl::report::ReportOptions ro;
  ro.root = "/repo";
  json issues = tl::report::to_gitlab(res, ro);
  std::set<std::string> fps;
  for (auto& i : issues) fps.insert(i["fingerprint"].get<std::string>());
  EXPECT_EQ(fps.size(), issues.size()) << issues.dump(2);
  EXPECT_EQ(issues[0]["fingerprint"], "0123456789abcdef");  // the first keeps trainlint's fingerprint
  // and the report is the same on every run, so GitLab can compare two pipelines
  EXPECT_EQ(tl::report::to_gitlab(res, ro), issues);
}

TEST(GitlabReport, NotebookIssuesPointAtTheFileAndNameTheCell) {
  NotebookRun nb;
  json issues = tl::report::to_gitlab(nb.res, nb.opts());
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0]["location"]["path"], "notebooks/analysis run.ipynb");
  EXPECT_EQ(issues[0]["location"]["lines"]["begin"], 1);
  EXPECT_TRUE(issues[0]["description"].get<std::string>().starts_with("cell 5:8:9: `gc.collect()`")) << issues[0];
}

// ---- statistics -------------------------------------------------------------------------------

TEST(Statistics, CountsPerRuleMostFrequentFirstWithFixMarkers) {
  tl::LintResult res;
  auto fixed = [](tl::Finding f, tl::Applicability a) {
    f.fix = tl::Fix{"fix it", {{f.range, "x = "}}, a};
    return f;
  };
  res.findings = {finding("TL101", "/r/a.py", 1, 1, 5, "m", "1"),
                  fixed(finding("TL401", "/r/a.py", 2, 1, 5, "m", "2"), tl::Applicability::Safe),
                  finding("TL401", "/r/a.py", 3, 1, 5, "m", "3"),
                  fixed(finding("TL102", "/r/a.py", 4, 1, 5, "m", "4"), tl::Applicability::Unsafe),
                  finding("TL101", "/r/b.py", 1, 1, 5, "m", "5"),
                  finding("TL101", "/r/c.py", 1, 1, 5, "m", "6")};
  std::ostringstream out;
  tl::report::write_statistics_text(out, res);
  EXPECT_EQ(out.str(),
            "3\tTL101\t[ ] gc-collect-per-step\n"
            "2\tTL401\t[*] tensor-to-discarded\n"
            "1\tTL102\t[-] empty-cache-per-step\n");
  json j = tl::report::statistics_to_json(res);
  ASSERT_EQ(j.size(), 3u);
  EXPECT_EQ(j[1], json({{"code", "TL401"}, {"slug", "tensor-to-discarded"}, {"severity", "error"}, {"count", 2},
                        {"fixable", 1}, {"unsafe_fixable", 0}}));
  EXPECT_EQ(j[2]["unsafe_fixable"], 1);
}

TEST(Statistics, NoFixColumnWhenNothingIsFixable) {
  tl::LintResult res;
  for (uint32_t i = 1; i <= 12; ++i) res.findings.push_back(finding("TL106", "/r/a.py", i, 1, 5, "m", std::to_string(i)));
  res.findings.push_back(finding("TL101", "/r/a.py", 20, 1, 5, "m", "x"));
  std::ostringstream out;
  tl::report::write_statistics_text(out, res);
  EXPECT_EQ(out.str(), "12\tTL106\tlog-per-step\n 1\tTL101\tgc-collect-per-step\n");
}

TEST(ReportFormats, NamesRoundTrip) {
  for (auto& n : tl::report::format_names()) EXPECT_TRUE(tl::report::parse_format(n).has_value()) << n;
  EXPECT_FALSE(tl::report::parse_format("xml").has_value());
}

}  // namespace
