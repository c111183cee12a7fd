// Fixes: the before/after fixture pairs of tests/fixtures/fixes/<CODE>-<case>/, and the fix
// library itself (analyzer/core/fix.h): overlapping fixes, safety, the syntax check and its
// refusals, the lint -> fix loop, the unified diff (applied with `git apply` and `patch`), CRLF and
// non-ASCII text.
#include <gtest/gtest.h>

#include <algorithm>

#include "analyzer/core/fix.h"
#include "analyzer/python/model.h"
#include "analyzer/python/syntax.h"
#include "rules/python/fix_edits.h"
#include "rules/registry.h"
#include "support/test_support.h"

namespace fs = std::filesystem;
using namespace tl;
using namespace tl::test;

namespace {

// Lints in-memory files with the given rules, as `--fix` would, and checks on the way that every
// fix's edits carry line/column positions that match their byte offsets.
LintFn lint_with(std::vector<std::string> select) {
  return [select](const std::vector<SourceText>& files) {
    std::vector<std::pair<std::string, std::string>> in;
    for (auto& f : files) in.emplace_back(f.path, f.text);
    LintResult r = lint_texts(in, select);
    for (auto& f : r.findings) {
      if (!f.fix) continue;
      const std::string* text = nullptr;
      for (auto& x : files)
        if (x.path == f.path) text = &x.text;
      if (!text) continue;
      SourceFile src(f.path, *text);
      for (auto& e : f.fix->edits) {
        EXPECT_EQ(e.range.start.line, src.line_col(e.range.begin).line) << f.code << " " << f.fix->title;
        EXPECT_EQ(e.range.start.col, src.line_col(e.range.begin).col) << f.code << " " << f.fix->title;
        EXPECT_EQ(e.range.stop.line, src.line_col(e.range.end).line) << f.code << " " << f.fix->title;
        EXPECT_EQ(e.range.stop.col, src.line_col(e.range.end).col) << f.code << " " << f.fix->title;
      }
    }
    return r.findings;
  };
}

FixOptions python_options(bool unsafe) {
  FixOptions o;
  o.unsafe = unsafe;
  o.syntax_errors = py::count_syntax_errors;
  return o;
}

// ---- the fixture pairs ----------------------------------------------------------------------

struct FixCase {
  std::string name;  // TL202-multi-line
  std::string code;  // TL202
  fs::path dir;
};

void PrintTo(const FixCase& c, std::ostream* os) { *os << c.name; }

std::vector<FixCase> discover_fix_cases() {
  std::vector<FixCase> out;
  fs::path root = fs::path(source_dir()) / "tests/fixtures/fixes";
  for (auto& e : fs::directory_iterator(root))
    if (e.is_directory()) {
      std::string name = e.path().filename().string();
      out.push_back({name, name.substr(0, 5), e.path()});
    }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.name < b.name; });
  return out;
}

class FixPair : public ::testing::TestWithParam<FixCase> {};

TEST_P(FixPair, BeforeBecomesAfterAndStaysThere) {
  const FixCase& fc = GetParam();
  ASSERT_NE(find_rule(fc.code), nullptr) << "fix fixture for an unknown rule: " << fc.name;
  ASSERT_TRUE(fs::exists(fc.dir / "before.py") && fs::exists(fc.dir / "after.py")) << fc.name;
  std::string rel = fs::relative(fc.dir / "before.py", source_dir()).generic_string();
  std::string before = read_file(fc.dir / "before.py"), after = read_file(fc.dir / "after.py");
  ASSERT_NE(before, after) << fc.name << ": a fix fixture must show a fix";
  EXPECT_EQ(py::count_syntax_errors(before), 0u);
  EXPECT_EQ(py::count_syntax_errors(after), 0u) << "after.py does not parse";

  FixRunResult r = fix_until_stable({{rel, before}}, lint_with({fc.code}), python_options(true));
  ASSERT_EQ(r.files.size(), 1u);
  EXPECT_TRUE(r.refusals.empty()) << r.refusals.front().code << ": " << r.refusals.front().reason;
  EXPECT_TRUE(r.converged);
  EXPECT_EQ(r.files[0].text, after) << "the fixed text differs from after.py:\n"
                                    << unified_diff(rel, after, r.files[0].text);
  EXPECT_GT(r.files[0].applied, 0u);
  for (auto& [code, n] : r.files[0].by_code) EXPECT_EQ(code, fc.code);
  // Whatever the rule still finds has no fix left to apply.
  for (auto& f : r.remaining) EXPECT_FALSE(f.fix) << f.code << " at line " << f.range.start.line << " kept a fix";

  // Applying again changes nothing.
  FixRunResult again = fix_until_stable({{rel, after}}, lint_with({fc.code}), python_options(true));
  EXPECT_EQ(again.applied(), 0u);
  EXPECT_EQ(again.rounds, 0u);
  EXPECT_EQ(again.files[0].text, after);
  EXPECT_TRUE(again.refusals.empty());
}

INSTANTIATE_TEST_SUITE_P(Python, FixPair, ::testing::ValuesIn(discover_fix_cases()),
                         [](const ::testing::TestParamInfo<FixCase>& info) {
                           std::string n = info.param.name;
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

// The fixture pairs cover every rule that offers a fix, and only those.
TEST(FixPairs, EveryRuleWithAFixHasAPair) {
  std::set<std::string> with_pairs;
  for (auto& c : discover_fix_cases()) with_pairs.insert(c.code);
  EXPECT_EQ(with_pairs, (std::set<std::string>{"TL202", "TL305", "TL401", "TL402", "TL404", "TL503"}));
}

// ---- the library, with hand-made fixes -------------------------------------------------------

Finding finding_with_fix(std::string code, std::string path, std::string_view text, uint32_t begin, uint32_t end,
                         std::string replacement, Applicability a = Applicability::Safe) {
  SourceFile src(path, std::string(text));
  Finding f;
  f.code = std::move(code);
  f.path = std::move(path);
  f.range.begin = begin;
  f.range.end = end;
  f.range.start = src.line_col(begin);
  f.range.stop = src.line_col(end);
  Fix fix;
  fix.title = "replace `" + std::string(text.substr(begin, end - begin)) + "`";
  fix.applicability = a;
  fix.edits.push_back({f.range, std::move(replacement)});
  f.fix = std::move(fix);
  return f;
}

TEST(ApplyFixes, OverlappingFixWaitsForTheNextRound) {
  std::string text = "hello world\n";
  std::vector<Finding> fs{finding_with_fix("TL900", "a.txt", text, 0, 5, "HELLO"),
                          finding_with_fix("TL901", "a.txt", text, 4, 6, "o_")};
  FileFixResult r = apply_fixes("a.txt", text, fs, {});
  EXPECT_EQ(r.text, "HELLO world\n");
  EXPECT_EQ(r.applied, 1u);
  EXPECT_EQ(r.deferred, 1u);
  EXPECT_EQ(r.by_code, (std::map<std::string, size_t>{{"TL900", 1}}));

  // The loop re-lints and applies the deferred fix, recomputed on the new text.
  LintFn lint = [](const std::vector<SourceText>& files) {
    std::vector<Finding> out;
    const std::string& t = files[0].text;
    if (t.rfind("hello", 0) == 0) out.push_back(finding_with_fix("TL900", "a.txt", t, 0, 5, "HELLO"));
    if (auto sp = t.find(' '); sp != std::string::npos)
      out.push_back(finding_with_fix("TL901", "a.txt", t, static_cast<uint32_t>(sp - 1), static_cast<uint32_t>(sp + 1),
                                     std::string(1, t[sp - 1]) + "_"));
    return out;
  };
  FixRunResult run = fix_until_stable({{"a.txt", text}}, lint, {});
  EXPECT_EQ(run.files[0].text, "HELLO_world\n");
  EXPECT_EQ(run.rounds, 2u);
  EXPECT_EQ(run.files[0].by_code, (std::map<std::string, size_t>{{"TL900", 1}, {"TL901", 1}}));
  EXPECT_TRUE(run.remaining.empty());
}

TEST(ApplyFixes, FixesTouchingAtOneOffsetAreNotBothApplied) {
  std::string text = "f(x)\n";
  std::vector<Finding> fs{finding_with_fix("TL900", "a.py", text, 3, 3, ", a=1"),
                          finding_with_fix("TL901", "a.py", text, 3, 3, ", b=2")};
  FileFixResult r = apply_fixes("a.py", text, fs, {});
  EXPECT_EQ(r.text, "f(x, a=1)\n");
  EXPECT_EQ(r.deferred, 1u);
}

TEST(ApplyFixes, TheSameFixOfTwoFindingsIsAppliedOnce) {
  std::string text = "f(x)\n";
  std::vector<Finding> fs{finding_with_fix("TL900", "a.py", text, 3, 3, ", a=1"),
                          finding_with_fix("TL900", "a.py", text, 3, 3, ", a=1")};
  FileFixResult r = apply_fixes("a.py", text, fs, {});
  EXPECT_EQ(r.text, "f(x, a=1)\n");
  EXPECT_EQ(r.applied, 2u);
  EXPECT_EQ(r.deferred, 0u);
}

TEST(ApplyFixes, UnsafeFixesNeedPermission) {
  std::string text = "torch.load(path)\n";
  std::vector<Finding> fs{
      finding_with_fix("TL402", "a.py", text, 15, 15, ", map_location=\"cpu\"", Applicability::Unsafe)};
  FileFixResult safe_only = apply_fixes("a.py", text, fs, python_options(false));
  EXPECT_EQ(safe_only.text, text);
  EXPECT_EQ(safe_only.applied, 0u);
  EXPECT_EQ(safe_only.unsafe_skipped, 1u);
  FileFixResult unsafe = apply_fixes("a.py", text, fs, python_options(true));
  EXPECT_EQ(unsafe.text, "torch.load(path, map_location=\"cpu\")\n");
  EXPECT_EQ(unsafe.applied, 1u);
}

TEST(ApplyFixes, FindingsOfOtherFilesAndMalformedEditsAreLeftAlone) {
  std::string text = "x = 1\n";
  std::vector<Finding> fs{finding_with_fix("TL900", "other.py", text, 0, 1, "y"),
                          finding_with_fix("TL901", "a.py", text, 0, 1, "z")};
  fs[1].fix->edits[0].range.end = 99;  // past the end of the file
  FileFixResult r = apply_fixes("a.py", text, fs, {});
  EXPECT_EQ(r.text, text);
  ASSERT_EQ(r.refusals.size(), 1u);
  EXPECT_EQ(r.refusals[0].code, "TL901");
}

TEST(ApplyFixes, AFixThatBreaksTheSyntaxIsRefusedAndTheOthersApplied) {
  std::string text =
      "import torch\n"
      "\n"
      "def train(model, loader, optimizer):\n"
      "    for x, y in loader:\n"
      "        loss = model(x).sub(y).pow(2).mean()\n"
      "        optimizer.zero_grad(set_to_none=False)\n"
      "        loss.backward()\n"
      "        optimizer.step()\n"
      "    return torch.load(\"last.pt\")\n";
  uint32_t zg = static_cast<uint32_t>(text.find("set_to_none=False"));
  uint32_t paren = static_cast<uint32_t>(text.find(".mean()") + 6);  // the `)` of mean()
  uint32_t load = static_cast<uint32_t>(text.find("\"last.pt\"") + 9);
  std::vector<Finding> fs{
      finding_with_fix("TL503", "train.py", text, zg, zg + 17, ""),
      finding_with_fix("TL999", "train.py", text, paren, paren + 1, ""),  // drops a `)`: does not parse
      finding_with_fix("TL402", "train.py", text, load, load, ", map_location=\"cpu\"", Applicability::Unsafe)};
  ASSERT_EQ(py::count_syntax_errors(text), 0u);

  FileFixResult r = apply_fixes("train.py", text, fs, python_options(true));
  ASSERT_EQ(r.refusals.size(), 1u);
  EXPECT_EQ(r.refusals[0].code, "TL999");
  EXPECT_EQ(r.refusals[0].path, "train.py");
  EXPECT_EQ(r.refusals[0].where.line, 5u);
  EXPECT_NE(r.refusals[0].reason.find("syntax error"), std::string::npos) << r.refusals[0].reason;
  EXPECT_EQ(r.applied, 2u);
  EXPECT_EQ(r.by_code, (std::map<std::string, size_t>{{"TL402", 1}, {"TL503", 1}}));
  EXPECT_NE(r.text.find("optimizer.zero_grad()\n"), std::string::npos);
  EXPECT_NE(r.text.find("torch.load(\"last.pt\", map_location=\"cpu\")"), std::string::npos);
  EXPECT_NE(r.text.find(".mean()\n"), std::string::npos);
  EXPECT_EQ(py::count_syntax_errors(r.text), 0u);

  // Without a syntax check the broken text would be produced: the check is what refuses it.
  FileFixResult unchecked = apply_fixes("train.py", text, fs, FixOptions{true, {}});
  EXPECT_GT(py::count_syntax_errors(unchecked.text), 0u);

  // In the loop, a fix refused every round is reported once and the good fixes still land.
  LintFn lint = [&](const std::vector<SourceText>& files) {
    std::vector<Finding> out;
    const std::string& t = files[0].text;
    uint32_t p = static_cast<uint32_t>(t.find(".mean()") + 6);
    out.push_back(finding_with_fix("TL999", "train.py", t, p, p + 1, ""));
    if (auto z = t.find("set_to_none=False"); z != std::string::npos)
      out.push_back(finding_with_fix("TL503", "train.py", t, static_cast<uint32_t>(z), static_cast<uint32_t>(z + 17), ""));
    return out;
  };
  FixRunResult run = fix_until_stable({{"train.py", text}}, lint, python_options(false));
  ASSERT_EQ(run.refusals.size(), 1u);
  EXPECT_EQ(run.refusals[0].code, "TL999");
  EXPECT_EQ(run.files[0].by_code, (std::map<std::string, size_t>{{"TL503", 1}}));
  EXPECT_EQ(py::count_syntax_errors(run.files[0].text), 0u);
}

TEST(ApplyFixes, AFileWithSyntaxErrorsMayBeFixedAsLongAsNoErrorIsAdded) {
  std::string text = "def broken(:\n    pass\n\nopt.zero_grad(set_to_none=False)\n";
  size_t errors = py::count_syntax_errors(text);
  ASSERT_GT(errors, 0u);
  uint32_t zg = static_cast<uint32_t>(text.find("set_to_none=False"));
  std::vector<Finding> fs{finding_with_fix("TL503", "a.py", text, zg, zg + 17, "")};
  FileFixResult r = apply_fixes("a.py", text, fs, python_options(false));
  EXPECT_TRUE(r.refusals.empty());
  EXPECT_EQ(r.text, "def broken(:\n    pass\n\nopt.zero_grad()\n");
}

TEST(ApplyFixes, TheLoopStopsAtTheRoundLimit) {
  // A lint that always finds something to fix: the loop must end.
  LintFn lint = [](const std::vector<SourceText>& files) {
    const std::string& t = files[0].text;
    uint32_t n = static_cast<uint32_t>(t.size());
    return std::vector<Finding>{finding_with_fix("TL900", "a.txt", t, n, n, "x")};
  };
  FixRunResult run = fix_until_stable({{"a.txt", ""}}, lint, {}, 10);
  EXPECT_EQ(run.files[0].text, std::string(10, 'x'));
  EXPECT_EQ(run.rounds, 10u);
  EXPECT_FALSE(run.converged);
  EXPECT_EQ(run.remaining.size(), 1u);
}

TEST(PythonSyntax, CountsErrors) {
  EXPECT_EQ(py::count_syntax_errors("import torch\nx = torch.zeros(3)\n"), 0u);
  EXPECT_GT(py::count_syntax_errors("x = torch.zeros(3\n"), 0u);
  EXPECT_GT(py::count_syntax_errors("def f(:\n    pass\n"), 0u);
}

// ---- rules' fixes on CRLF and non-ASCII text -------------------------------------------------

TEST(RuleFixes, CrlfLinesAndNonAsciiTextKeepTheirBytes) {
  std::string text =
      "import torch\r\n"
      "from torch.utils.data import DataLoader, TensorDataset\r\n"
      "\r\n"
      "# Entraînement « rapide » sur GPU\r\n"
      "def entraîner(modèle, données, époques=3):\r\n"
      "    device = torch.device(\"cuda\")\r\n"
      "    modèle = modèle.to(device)\r\n"
      "    chargeur = DataLoader(\r\n"
      "        données,\r\n"
      "        batch_size=64,  # lot de 64 éléments\r\n"
      "    )\r\n"
      "    opt = torch.optim.SGD(modèle.parameters(), lr=0.1)\r\n"
      "    for époque in range(époques):\r\n"
      "        for x, y in chargeur:\r\n"
      "            é = 1; opt.zero_grad(set_to_none=False)  # réinitialiser\r\n"
      "            perte = (modèle(x.to(device)) - y.to(device)).pow(2).mean()\r\n"
      "            perte.backward()\r\n"
      "            opt.step()\r\n";
  std::string expected =
      "import torch\r\n"
      "from torch.utils.data import DataLoader, TensorDataset\r\n"
      "\r\n"
      "# Entraînement « rapide » sur GPU\r\n"
      "def entraîner(modèle, données, époques=3):\r\n"
      "    device = torch.device(\"cuda\")\r\n"
      "    modèle = modèle.to(device)\r\n"
      "    chargeur = DataLoader(\r\n"
      "        données,\r\n"
      "        batch_size=64,  # lot de 64 éléments\r\n"
      "        pin_memory=True,\r\n"
      "    )\r\n"
      "    opt = torch.optim.SGD(modèle.parameters(), lr=0.1)\r\n"
      "    for époque in range(époques):\r\n"
      "        for x, y in chargeur:\r\n"
      "            é = 1; opt.zero_grad()  # réinitialiser\r\n"
      "            perte = (modèle(x.to(device)) - y.to(device)).pow(2).mean()\r\n"
      "            perte.backward()\r\n"
      "            opt.step()\r\n";
  // Columns count code points: `set_to_none` starts at column 34 of line 15, after 33 code
  // points and 34 bytes (`é` takes two).
  auto findings = lint_with({"TL503"})({{"train.py", text}});
  ASSERT_EQ(findings.size(), 1u);
  ASSERT_TRUE(findings[0].fix);
  const Range& at = findings[0].fix->edits[0].range;
  EXPECT_EQ(at.start.line, 15u);
  EXPECT_EQ(at.start.col, 34u);
  EXPECT_EQ(at.begin - SourceFile("train.py", text).line_start(15), 34u);
  EXPECT_EQ(text.substr(at.begin, at.end - at.begin), "set_to_none=False");

  FixRunResult r = fix_until_stable({{"train.py", text}}, lint_with({"TL202", "TL503"}), python_options(false));
  EXPECT_EQ(r.files[0].text, expected);
  EXPECT_EQ(r.files[0].by_code, (std::map<std::string, size_t>{{"TL202", 1}, {"TL503", 1}}));
}

TEST(RuleFixes, NoFixWhereTheFormIsNotExact) {
  std::string text =
      "import torch\n"
      "from torch.utils.data import DataLoader\n"
      "\n"
      "def main(dataset):\n"
      "    device = torch.device(\"cuda\")\n"
      "    opts = {\"num_workers\": 4}\n"
      "    a = DataLoader(dataset, batch_size=8, **opts)\n"
      "    b = DataLoader(dataset, batch_size=8, pin_memory=0)\n"
      "    for x in DataLoader(dataset, batch_size=8):\n"
      "        torch.nn.functional.relu(x.to(device)).sum().backward()\n"
      "    return a, b\n";
  auto findings = lint_with({"TL202"})({{"main.py", text}});
  std::map<uint32_t, bool> fix_by_line;
  for (auto& f : findings) fix_by_line[f.range.start.line] = f.fix.has_value();
  // The options come through `**opts`; `0` is not the literal the fix replaces; the plain call is
  // fixed.
  EXPECT_EQ(fix_by_line, (std::map<uint32_t, bool>{{7, false}, {8, false}, {9, true}}));
}

// ---- the argument edits the rules' fixes are made of ------------------------------------------

// Builds a one-file model of `text` and returns the call whose text starts with `prefix`.
struct OneFile {
  py::ProgramModel pm;
  const py::Module& mod() const { return *pm.modules().front(); }
  const py::Call& call(const std::string& prefix) const {
    for (auto& c : mod().calls)
      if (mod().tree.text(c.node).substr(0, prefix.size()) == prefix) return c;
    throw std::runtime_error("no call " + prefix);
  }
  // The i-th argument of the call (comments left out).
  py::NodeId arg(const std::string& prefix, size_t i) const {
    const py::Tree& t = mod().tree;
    size_t k = 0;
    for (py::NodeId a : t.named_children(t.field(call(prefix).node, py::F::Arguments)))
      if (!t.is(a, py::K::Comment) && k++ == i) return a;
    throw std::runtime_error("no argument");
  }
};

OneFile model_of(const std::string& text) {
  std::vector<std::unique_ptr<SourceFile>> srcs;
  srcs.push_back(std::make_unique<SourceFile>("m.py", text));
  return OneFile{py::ProgramModel::build(std::move(srcs), 1)};
}

// The text with `edits` applied as one fix ("" when there are none).
std::string applied(const std::string& text, std::vector<Edit> edits) {
  if (edits.empty()) return "";
  Finding f;
  f.code = "TL900";
  f.path = "m.py";
  f.fix = Fix{"edit", std::move(edits), Applicability::Safe};
  FileFixResult r = apply_fixes("m.py", text, {f}, python_options(false));
  EXPECT_TRUE(r.refusals.empty()) << r.refusals.front().reason << "\n" << text;
  return r.text;
}

std::string with_added(const std::string& text, const std::string& prefix) {
  OneFile m = model_of(text);
  return applied(text, rules::add_argument(m.mod(), m.call(prefix).node, "x=1"));
}

std::string with_removed(const std::string& text, const std::string& prefix, size_t i) {
  OneFile m = model_of(text);
  return applied(text, rules::remove_argument(m.mod(), m.arg(prefix, i)));
}

TEST(ArgumentEdits, AddOnOneLine) {
  EXPECT_EQ(with_added("f(a)\n", "f("), "f(a, x=1)\n");
  EXPECT_EQ(with_added("f()\n", "f("), "f(x=1)\n");
  EXPECT_EQ(with_added("f(a, b,)\n", "f("), "f(a, b, x=1,)\n");
  EXPECT_EQ(with_added("f(a, *rest)\n", "f("), "f(a, *rest, x=1)\n");
  EXPECT_EQ(with_added("f(g(a), b=[1, 2])\n", "f("), "f(g(a), b=[1, 2], x=1)\n");
  // A generator expression as the only argument cannot take another one.
  EXPECT_EQ(with_added("f(a for a in b)\n", "f("), "");
}

TEST(ArgumentEdits, AddOneArgumentPerLine) {
  EXPECT_EQ(with_added("y = f(\n    a,\n    b,\n)\n", "f("), "y = f(\n    a,\n    b,\n    x=1,\n)\n");
  EXPECT_EQ(with_added("y = f(\n    a,\n    b\n)\n", "f("), "y = f(\n    a,\n    b,\n    x=1\n)\n");
  EXPECT_EQ(with_added("y = f(\n    a,\n    b,  # the b\n)\n", "f("),
            "y = f(\n    a,\n    b,  # the b\n    x=1,\n)\n");
  EXPECT_EQ(with_added("y = f(\n    a,\n    b  # the b\n)\n", "f("), "y = f(\n    a,\n    b,  # the b\n    x=1\n)\n");
  EXPECT_EQ(with_added("y = f(\n    a,\n    b,\n    # more later\n)\n", "f("),
            "y = f(\n    a,\n    b,\n    x=1,\n    # more later\n)\n");
  // hanging indent, or the parenthesis closing on the last argument's line: stay on that line
  EXPECT_EQ(with_added("y = f(a,\n      b)\n", "f("), "y = f(a,\n      b, x=1)\n");
  EXPECT_EQ(with_added("y = f(\n    a,\n    b)\n", "f("), "y = f(\n    a,\n    b, x=1)\n");
  // the last argument shares its line with another: stay on that line
  EXPECT_EQ(with_added("y = f(\n    a, b,\n)\n", "f("), "y = f(\n    a, b, x=1,\n)\n");
  // a tab-indented CRLF file keeps both
  EXPECT_EQ(with_added("y = f(\r\n\ta,\r\n\tb,\r\n)\r\n", "f("), "y = f(\r\n\ta,\r\n\tb,\r\n\tx=1,\r\n)\r\n");
}

TEST(ArgumentEdits, RemoveOnOneLine) {
  EXPECT_EQ(with_removed("f(b=False)\n", "f(", 0), "f()\n");
  EXPECT_EQ(with_removed("f( b=False, )\n", "f(", 0), "f()\n");
  EXPECT_EQ(with_removed("f(a, b=False)\n", "f(", 1), "f(a)\n");
  EXPECT_EQ(with_removed("f(b=False, c=1)\n", "f(", 0), "f(c=1)\n");
  EXPECT_EQ(with_removed("f(a, b=False, c=1)\n", "f(", 1), "f(a, c=1)\n");
  EXPECT_EQ(with_removed("f(a, b=False,)\n", "f(", 1), "f(a,)\n");
}

TEST(ArgumentEdits, RemoveOneArgumentPerLine) {
  EXPECT_EQ(with_removed("f(\n    a,\n    b=False,  # old\n    c=1,\n)\n", "f(", 1), "f(\n    a,\n    c=1,\n)\n");
  EXPECT_EQ(with_removed("f(\n    a,\n    b=False\n)\n", "f(", 1), "f(\n    a,\n)\n");
  EXPECT_EQ(with_removed("f(\n    b=False,  # old\n)\n", "f(", 0), "f()\n");
  // a comment on a line of its own is kept
  EXPECT_EQ(with_removed("f(\n    # note\n    b=False,\n)\n", "f(", 0), "f(\n    # note\n)\n");
  // a comment between the argument and the next one is kept
  EXPECT_EQ(with_removed("f(b=False,  # old\n  c=1)\n", "f(", 0), "f(# old\n  c=1)\n");
  EXPECT_EQ(with_removed("f(a,  # keep\n  b=False)\n", "f(", 1), "f(a  # keep\n  )\n");
  EXPECT_EQ(with_removed("f(\r\n    a,\r\n    b=False,\r\n    c=1,\r\n)\r\n", "f(", 1), "f(\r\n    a,\r\n    c=1,\r\n)\r\n");
}

// ---- the unified diff -----------------------------------------------------------------------

struct Patched {
  bool ok = false;
  std::string text, log;
};

// Writes `old_text` to <tmp>/<path>, applies `diff` with `tool` ("git apply" or "patch -p1")
// from <tmp>, and returns the file's new text.
Patched apply_with(const std::string& tool, const std::string& path, const std::string& old_text,
                   const std::string& diff) {
  TempDir t;
  write_file(t.path / path, old_text);
  write_file(t.path / "fix.diff", diff);
  std::string cmd = "cd '" + t.path.string() + "' && " + tool + " < fix.diff > log 2>&1";
  Patched p;
  p.ok = std::system(cmd.c_str()) == 0;
  p.text = read_file(t.path / path);
  p.log = read_file(t.path / "log");
  return p;
}

void expect_applies(const std::string& path, const std::string& a, const std::string& b) {
  std::string d = unified_diff(path, a, b);
  ASSERT_FALSE(d.empty());
  for (const char* tool : {"git apply --whitespace=nowarn -", "patch -p1 --batch --quiet"}) {
    Patched p = apply_with(tool, path, a, d);
    EXPECT_TRUE(p.ok) << tool << " rejected the diff:\n" << d << "\n" << p.log;
    EXPECT_EQ(p.text, b) << tool << " produced another text from:\n" << d;
  }
}

std::string numbered_lines(int n, const char* eol = "\n") {
  std::string s;
  for (int i = 1; i <= n; ++i) s += "line_" + std::to_string(i) + " = " + std::to_string(i) + eol;
  return s;
}

TEST(UnifiedDiff, ExactFormat) {
  std::string a = numbered_lines(10);
  std::string b = a;
  b.replace(b.find("line_5 = 5"), 10, "line_5 = 50");
  EXPECT_EQ(unified_diff("src/train.py", a, b),
            "--- a/src/train.py\n"
            "+++ b/src/train.py\n"
            "@@ -2,7 +2,7 @@\n"
            " line_2 = 2\n"
            " line_3 = 3\n"
            " line_4 = 4\n"
            "-line_5 = 5\n"
            "+line_5 = 50\n"
            " line_6 = 6\n"
            " line_7 = 7\n"
            " line_8 = 8\n");
  EXPECT_EQ(unified_diff("src/train.py", a, a), "");
}

TEST(UnifiedDiff, CloseChangesShareAHunkAndDistantOnesDoNot) {
  std::string a = numbered_lines(40);
  std::string close = a, far = a;
  // 6 unchanged lines between changes: one hunk; 7: two hunks.
  close.replace(close.find("line_10 = 10"), 12, "line_10 = 0");
  close.replace(close.find("line_17 = 17"), 12, "line_17 = 0");
  far.replace(far.find("line_10 = 10"), 12, "line_10 = 0");
  far.replace(far.find("line_18 = 18"), 12, "line_18 = 0");
  auto hunks = [](const std::string& d) {
    size_t n = 0;
    for (size_t at = d.find("\n@@ "); at != std::string::npos; at = d.find("\n@@ ", at + 1)) ++n;
    return n;
  };
  std::string dc = unified_diff("t.py", a, close), df = unified_diff("t.py", a, far);
  EXPECT_EQ(hunks(dc), 1u) << dc;
  EXPECT_NE(dc.find("@@ -7,14 +7,14 @@\n"), std::string::npos) << dc;
  EXPECT_EQ(hunks(df), 2u) << df;
  expect_applies("t.py", a, close);
  expect_applies("t.py", a, far);
}

TEST(UnifiedDiff, InsertionsDeletionsAndFileEdges) {
  std::string a = numbered_lines(12);
  std::string b = a;
  b.insert(0, "import torch\n");                                    // at the start
  b.insert(b.find("line_6"), "extra = 0\nmore = 1\n");              // in the middle
  b.erase(b.find("line_12"));                                       // the last line goes
  expect_applies("pkg/mod.py", a, b);
  expect_applies("pkg/mod.py", b, a);
  expect_applies("pkg/mod.py", "", "x = 1\n");
  expect_applies("pkg/mod.py", "x = 1\n", "");
}

TEST(UnifiedDiff, NoNewlineAtEndOfFile) {
  std::string a = numbered_lines(5) + "last = 6";  // no newline at the end
  std::string b = numbered_lines(5) + "last = 7";
  std::string d = unified_diff("t.py", a, b);
  EXPECT_NE(d.find("-last = 6\n\\ No newline at end of file\n+last = 7\n\\ No newline at end of file\n"),
            std::string::npos)
      << d;
  expect_applies("t.py", a, b);
  // the newline added, or taken away
  expect_applies("t.py", a, a + "\n");
  expect_applies("t.py", a + "\n", a);
  // the last line unchanged, as context
  std::string c = a;
  c.replace(c.find("line_4 = 4"), 10, "line_4 = 40");
  std::string dc = unified_diff("t.py", a, c);
  EXPECT_NE(dc.find(" last = 6\n\\ No newline at end of file\n"), std::string::npos) << dc;
  expect_applies("t.py", a, c);
}

TEST(UnifiedDiff, CrlfAndNonAsciiBytesSurvive) {
  std::string a = "# Entraînement\r\n" + numbered_lines(8, "\r\n") + "modèle.zero_grad(set_to_none=False)\r\n";
  std::string b = "# Entraînement\r\n" + numbered_lines(8, "\r\n") + "modèle.zero_grad()\r\n";
  std::string d = unified_diff("t.py", a, b);
  EXPECT_NE(d.find("-modèle.zero_grad(set_to_none=False)\r\n+modèle.zero_grad()\r\n"), std::string::npos) << d;
  expect_applies("t.py", a, b);
}

TEST(UnifiedDiff, TheFixesOfAFixturePairApply) {
  for (auto& c : discover_fix_cases()) {
    std::string before = read_file(c.dir / "before.py"), after = read_file(c.dir / "after.py");
    SCOPED_TRACE(c.name);
    expect_applies("src/" + c.name + ".py", before, after);
  }
}

}  // namespace
