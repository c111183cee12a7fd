// ParseCache (analyzer/python/ast.h): a re-parse through the cache, incremental after an edit or a
// copy when the text is unchanged, must give exactly the Tree a fresh parse of the same text gives.
// Random edits (deterministic seed) of every Python fixture: typing, deleting, pasting lines,
// breaking and repairing the syntax, multi-byte characters.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "analyzer/python/ast.h"
#include "tests/support/test_support.h"
#include "tests/support/tree_diff.h"

namespace fs = std::filesystem;
using namespace tl;
using namespace tl::py;

namespace {

std::string read(const fs::path& p) { return tl::test::read_file(p); }

std::string difference(const Tree& a, const Tree& b) { return tl::test::tree_difference(a, b); }

std::string edit(std::string text, std::mt19937& rng) {
  static const char* const pastes[] = {
      "        gc.collect()\n", "    torch.save(model.state_dict(), 'ckpt.pt')\n", "if step % 100 == 0:\n",
      "# 中文注释: 每一步都保存 🚀\n", "def helper(x):\n    return x.item()\n", "(", ")", ":", "\"\"\"", "'", "\t", "é",
      "for i in range(3):\n    pass\n", "\n\n", "x = [\n"};
  std::uniform_int_distribution<size_t> pick(0, std::size(pastes) - 1);
  size_t at = text.empty() ? 0 : std::uniform_int_distribution<size_t>(0, text.size())(rng);
  // keep UTF-8 sequences whole
  while (at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) ++at;
  switch (rng() % 4) {
    case 0:  // paste
      text.insert(at, pastes[pick(rng)]);
      break;
    case 1: {  // delete a run (to a character boundary)
      size_t end = std::min(text.size(), at + rng() % 40);
      while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) ++end;
      text.erase(at, end - at);
      break;
    }
    case 2: {  // replace a whole line
      size_t b = text.rfind('\n', at == 0 ? 0 : at - 1);
      b = b == std::string::npos ? 0 : b + 1;
      size_t e = text.find('\n', at);
      e = e == std::string::npos ? text.size() : e;
      if (b <= e) text.replace(b, e - b, "    loss.backward()  # typed again");
      break;
    }
    default:  // type one character
      text.insert(at, 1, "abc_ .()=:\n"[rng() % 11]);
  }
  return text;
}

std::vector<fs::path> python_fixtures() {
  std::vector<fs::path> out;
  for (auto& e : fs::recursive_directory_iterator(fs::path(tl::test::source_dir()) / "tests/fixtures/python"))
    if (e.is_regular_file() && e.path().extension() == ".py") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST(ParseCache, RandomEditsParseExactlyAsAFreshParse) {
  auto files = python_fixtures();
  ASSERT_GT(files.size(), 20u);
  ParseCache cache;
  std::mt19937 rng(20261123);
  size_t checked = 0;
  for (auto& f : files) {
    std::string text = read(f);
    for (int round = 0; round < 8; ++round) {
      SourceFile src(f.string(), text);
      src.set_origin(f.string(), f.filename().string());
      Tree cached = cache.parse(src);
      Tree fresh = Tree::parse(src);
      ASSERT_EQ(difference(cached, fresh), "") << f << " after " << round << " edits:\n" << text;
      EXPECT_EQ(&cached.source(), &src);
      ++checked;
      text = edit(std::move(text), rng);
    }
  }
  auto st = cache.stats();
  EXPECT_EQ(st.full, files.size());  // the first parse of each file
  EXPECT_GT(st.incremental, checked / 2);
  EXPECT_EQ(st.full + st.incremental + st.copies, checked);
}

TEST(ParseCache, AnUnchangedTextIsACopyAndAnotherFileIsNotConfused) {
  ParseCache cache;
  std::string a = "import gc\nfor step in range(10):\n    gc.collect()\n", b = "x = 1\n";
  SourceFile s1("a.py", a), s2("b.py", b), s3("a.py", a);
  for (auto* s : {&s1, &s2, &s3}) s->set_origin("/p/" + s->path(), s->path());
  Tree t1 = cache.parse(s1), t2 = cache.parse(s2), t3 = cache.parse(s3);
  EXPECT_EQ(difference(t3, Tree::parse(s3)), "");
  EXPECT_EQ(difference(t2, Tree::parse(s2)), "");
  EXPECT_EQ(&t3.source(), &s3);  // the copy points at the caller's source, not the first one
  auto st = cache.stats();
  EXPECT_EQ(st.full, 2u);
  EXPECT_EQ(st.copies, 1u);
}

TEST(ParseCache, StaysWithinItsBoundAndStillParsesRight) {
  ParseCache cache(4096);  // bytes of text
  std::string body;
  for (int i = 0; i < 60; ++i) body += "def f" + std::to_string(i) + "(x):\n    return x * 2\n\n";
  ASSERT_GT(body.size(), 1500u);
  for (int i = 0; i < 8; ++i) {
    SourceFile s("m" + std::to_string(i) + ".py", body);
    s.set_origin("/p/m" + std::to_string(i) + ".py", s.path());
    EXPECT_EQ(difference(cache.parse(s), Tree::parse(s)), "");
  }
  // the oldest files were evicted: parsing the first again is a full parse, not a copy
  SourceFile again("m0.py", body);
  again.set_origin("/p/m0.py", "m0.py");
  cache.parse(again);
  EXPECT_EQ(cache.stats().copies, 0u);
  EXPECT_EQ(cache.stats().full, 9u);
}
