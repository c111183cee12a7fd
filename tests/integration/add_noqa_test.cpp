// `trainlint --add-noqa` on the lines where a comment is hard to place: f-strings and strings that
// span lines, backslash continuations, `;`-separated statements, lines that already hold comments
// with several '#', CRLF files. After it, the file still parses, a second run has nothing left to
// report, and running it again changes nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "support/test_support.h"

namespace fs = std::filesystem;
using tl::test::CliResult;
using tl::test::read_file;
using tl::test::run_cli;
using tl::test::TempDir;
using tl::test::write_file;

namespace {

const char* kLoop = R"(import gc

import torch
from torch.utils.data import DataLoader


def train(model, optimizer, dataset, epochs):
    loader = DataLoader(dataset, batch_size=64, num_workers=4, pin_memory=True, persistent_workers=True)
    scaler = torch.amp.GradScaler("cuda")
    for epoch in range(epochs):
        for step, (x, y) in enumerate(loader):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            print(f"""epoch {epoch} step {step}: {
                loss.item():.4f}""")
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            print("step", \
                  loss.item())
            gc.collect(); torch.cuda.empty_cache()
            summary = """loss
was""" + str(loss.item())
            torch.save(model.state_dict(), "ckpt.pt")  # checkpoint # every step for now
)";

std::string crlf(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\n') out += '\r';
    out += c;
  }
  return out;
}

bool parses_with_python(const fs::path& file) {
  std::string cmd = "/usr/bin/python3 -c 'import ast,sys; ast.parse(open(sys.argv[1], \"rb\").read())' '" +
                    file.string() + "' 2>/dev/null";
  return std::system(cmd.c_str()) == 0;
}

void expect_add_noqa_settles(const std::string& text) {
  TempDir t;
  write_file(t.path / "train.py", text);
  CliResult before = run_cli("-q train.py", t.path.string());
  ASSERT_EQ(before.rc, 1) << before.out << before.err;
  CliResult add = run_cli("--add-noqa train.py", t.path.string());
  EXPECT_EQ(add.rc, 0) << add.err;
  std::string after = read_file(t.path / "train.py");
  EXPECT_NE(after, text);
  EXPECT_TRUE(parses_with_python(t.path / "train.py")) << after;
  CliResult again = run_cli("-q train.py", t.path.string());
  EXPECT_EQ(again.rc, 0) << again.out << after;
  EXPECT_EQ(again.out, "");
  CliResult twice = run_cli("--add-noqa train.py", t.path.string());
  EXPECT_EQ(twice.rc, 0) << twice.err;
  EXPECT_EQ(read_file(t.path / "train.py"), after) << "--add-noqa is idempotent";
  if (text.find("\r\n") != std::string::npos) {
    EXPECT_EQ(after.find('\n'), after.find("\r\n") + 1) << "line endings stay CRLF";
    size_t lf = 0, crlf_count = 0;
    for (size_t i = 0; i < after.size(); ++i)
      if (after[i] == '\n') {
        ++lf;
        if (i > 0 && after[i - 1] == '\r') ++crlf_count;
      }
    EXPECT_EQ(lf, crlf_count) << after;
  }
}

TEST(AddNoqa, TrickyLinesStillParseAndSettle) { expect_add_noqa_settles(kLoop); }

TEST(AddNoqa, CrlfFileKeepsItsLineEndings) { expect_add_noqa_settles(crlf(kLoop)); }

TEST(AddNoqa, PlacesEachCommentWhereItSuppresses) {
  TempDir t;
  write_file(t.path / "train.py", kLoop);
  ASSERT_EQ(run_cli("--add-noqa train.py", t.path.string()).rc, 0);
  std::string after = read_file(t.path / "train.py");
  // the f-string's first line ends inside the string: the comment goes on its last line
  EXPECT_NE(after.find("loss.item():.4f}\"\"\")  # trainlint: ignore[TL105, TL106]\n"), std::string::npos) << after;
  // a backslash continuation: on the last line
  EXPECT_NE(after.find("print(\"step\", \\\n                  loss.item())  # trainlint: ignore[TL105, TL106]\n"),
            std::string::npos)
      << after;
  EXPECT_NE(after.find("gc.collect(); torch.cuda.empty_cache()  # trainlint: ignore[TL101, TL102]\n"),
            std::string::npos)
      << after;
  EXPECT_NE(after.find("# checkpoint # every step for now  # trainlint: ignore[TL103]\n"), std::string::npos) << after;
}

// TL001 is reported after suppressions apply: `ignore[TL001]` would silence nothing and only add a
// code. --add-noqa leaves it to --fix and says so.
TEST(AddNoqa, UnusedSuppressionIsLeftToFix) {
  TempDir t;
  const std::string text =
      "import torch  # trainlint: ignore[TL101]\n\n\ndef build(model):\n    return torch.compile(model)\n";
  write_file(t.path / "model.py", text);
  CliResult add = run_cli("--extend-select TL001 --add-noqa model.py", t.path.string());
  EXPECT_EQ(add.rc, 0) << add.err;
  EXPECT_EQ(read_file(t.path / "model.py"), text);
  EXPECT_NE(add.err.find("TL001"), std::string::npos) << add.err;
  EXPECT_NE(add.err.find("--fix"), std::string::npos) << add.err;
  EXPECT_NE(add.err.find("nothing to suppress"), std::string::npos) << add.err;
}

}  // namespace
