// Suppression comments and their TL001 fixes on input found by review: CRLF files, comments
// holding several '#', other tools' codes.
#include <gtest/gtest.h>

#include <string>

#include "analyzer/core/fix.h"
#include "support/test_support.h"

namespace {

std::string crlf(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '\n') out += '\r';
    out += c;
  }
  return out;
}

// Applies every fix of the result's findings to `text` in one round.
std::string fixed(const std::string& path, const std::string& text, const tl::LintResult& r) {
  tl::FixOptions o;
  o.unsafe = true;
  return tl::apply_fixes(path, text, r.findings, o).text;
}

const char* kEvalLoop = R"(import torch  # noqa: TL101
from torch.utils.data import DataLoader


# trainlint: ignore[TL202]
def evaluate(model, dataset):
    loader = DataLoader(dataset, batch_size=256, num_workers=4, persistent_workers=True, pin_memory=True)
    model.eval()
    total = 0.0  # trainlint: ignore[TL105, TL106]  # noqa: E501
    with torch.no_grad():
        for x, y in loader:
            total += torch.nn.functional.cross_entropy(model(x), y, reduction="sum")
    return total / len(dataset)
)";

const char* kEvalLoopFixed = R"(import torch
from torch.utils.data import DataLoader


def evaluate(model, dataset):
    loader = DataLoader(dataset, batch_size=256, num_workers=4, persistent_workers=True, pin_memory=True)
    model.eval()
    total = 0.0  # noqa: E501
    with torch.no_grad():
        for x, y in loader:
            total += torch.nn.functional.cross_entropy(model(x), y, reduction="sum")
    return total / len(dataset)
)";

TEST(UnusedSuppressionFix, LfFileLosesTheDirectivesAndKeepsOtherToolsComments) {
  auto r = tl::test::lint_texts({{"eval.py", kEvalLoop}}, {"ALL"});
  ASSERT_EQ(r.findings.size(), 3u);
  EXPECT_EQ(fixed("eval.py", kEvalLoop, r), kEvalLoopFixed);
}

// In a CRLF file tree-sitter's comment token ends with the '\r': the fix used to keep an empty
// "# " comment, and a comment alone on its line left a line holding "# ".
TEST(UnusedSuppressionFix, CrlfFileLosesTheDirectivesToo) {
  std::string text = crlf(kEvalLoop);
  auto r = tl::test::lint_texts({{"eval.py", text}}, {"ALL"});
  ASSERT_EQ(r.findings.size(), 3u);
  EXPECT_EQ(fixed("eval.py", text, r), crlf(kEvalLoopFixed));
}

}  // namespace
