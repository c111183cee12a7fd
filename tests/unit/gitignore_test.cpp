// GitIgnore against git itself: the same .gitignore files, the same tree, and every path asked of
// both `git check-ignore` and tl::GitIgnore. Hand-written patterns cover the documented rules
// (anchoring, `**`, classes, negation, escapes, trailing spaces, folder-only patterns, nested
// .gitignore files and .git/info/exclude); random ones look for the cases nobody wrote down.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "analyzer/core/gitignore.h"
#include "analyzer/core/glob.h"
#include "support/test_support.h"

namespace fs = std::filesystem;
using tl::test::read_file;
using tl::test::TempDir;
using tl::test::write_file;

namespace {

bool git_available() { return std::system("git --version >/dev/null 2>&1") == 0; }

// The tree every case is checked on: folders and files with names that patterns can confuse.
const std::vector<std::string> kFiles = {
    "train.py",         "train.pyc",           "a/train.py",          "a/b/train.py",       "a/b/c/deep.py",
    "b/a/x.py",         "data/raw/img.py",     "data/x.py",           "logs/run.py",        "src/logs/run.py",
    "src/pkg/mod.py",   "src/pkg/sub/mod.py",  "build/gen.py",        "src/build/gen.py",   "x/build.py",
    "ab.py",            "abc.py",              "b.py",                "[ab].py",            "star*.py",
    "sp ace.py",        "trail .py",           "#hash.py",            "!bang.py",           "dir.d/f.py",
    "a/ab/f.py",        "nested/a/b/c/d/e.py", "foo/bar/baz.py",      "foo/baz.py",         "doc/frotz/a.py",
    "a/doc/frotz/b.py", "back\\slash.py",      "v/abc/ab/abc/x.py",   "caf\xc3\xa9.py",     "UPPER.PY",
};

std::set<std::string> all_paths() {
  std::set<std::string> out;
  for (auto& f : kFiles) {
    out.insert(f);
    for (size_t i = f.find('/'); i != std::string::npos; i = f.find('/', i + 1)) out.insert(f.substr(0, i));
  }
  return out;
}

struct Repo {
  TempDir dir;
  fs::path root;
  Repo() : root(dir.path / "repo") {
    fs::create_directories(root);
    EXPECT_EQ(std::system(("git init -q '" + root.string() + "'").c_str()), 0);
    for (auto& f : kFiles) write_file(root / f, "x = 1\n");
  }
  // What git says: the paths that `git check-ignore` reports (none is tracked: nothing is added).
  std::set<std::string> git_ignored() {
    std::string list;
    for (auto& p : all_paths()) list += p + '\0';
    write_file(dir.path / "paths", list);
    std::string cmd = "cd '" + root.string() + "' && git check-ignore -z --stdin <'" + (dir.path / "paths").string() +
                      "' >'" + (dir.path / "out").string() + "' 2>'" + (dir.path / "err").string() + "'";
    int status = std::system(cmd.c_str());
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    EXPECT_TRUE(rc == 0 || rc == 1) << read_file(dir.path / "err");
    std::set<std::string> out;
    std::string s = read_file(dir.path / "out");
    for (size_t b = 0; b < s.size();) {
      size_t e = s.find('\0', b);
      if (e == std::string::npos) e = s.size();
      if (e > b) out.insert(s.substr(b, e - b));
      b = e + 1;
    }
    return out;
  }
  std::set<std::string> ours_ignored() {
    tl::GitIgnore gi;
    std::set<std::string> out;
    for (auto& p : all_paths()) {
      fs::path abs = (root / p).lexically_normal();
      if (gi.ignored_or_inside_ignored(abs, fs::is_directory(abs))) out.insert(p);
    }
    return out;
  }
};

std::string diff(const std::set<std::string>& git, const std::set<std::string>& ours) {
  std::string out;
  for (auto& p : git)
    if (!ours.count(p)) out += "  ignored by git only: " + p + "\n";
  for (auto& p : ours)
    if (!git.count(p)) out += "  ignored by trainlint only: " + p + "\n";
  return out;
}

struct Case {
  std::string root_patterns;
  std::string sub_dir;       // a second .gitignore in this folder ("" for none)
  std::string sub_patterns;
  std::string info_exclude;  // .git/info/exclude
};

void expect_same_as_git(const Case& c) {
  Repo r;
  write_file(r.root / ".gitignore", c.root_patterns);
  if (!c.sub_dir.empty()) write_file(r.root / c.sub_dir / ".gitignore", c.sub_patterns);
  if (!c.info_exclude.empty()) write_file(r.root / ".git" / "info" / "exclude", c.info_exclude);
  auto git = r.git_ignored();
  auto ours = r.ours_ignored();
  EXPECT_EQ(ours, git) << "root .gitignore:\n"
                       << c.root_patterns << (c.sub_dir.empty() ? "" : "\n" + c.sub_dir + "/.gitignore:\n")
                       << c.sub_patterns << "\n.git/info/exclude:\n"
                       << c.info_exclude << "\n"
                       << diff(git, ours);
}

TEST(GitIgnoreVsGit, HandWrittenPatterns) {
  if (!git_available()) GTEST_SKIP() << "git is not installed";
  const std::vector<Case> cases = {
      {"*.pyc\n"},
      {"build\n"},
      {"build/\n"},
      {"/build\n"},
      {"logs/\n!src/logs/\n"},
      {"data/*\n!data/raw/\n"},
      {"data/\n!data/raw/\n"},  // a folder's contents cannot be re-included once the folder is out
      {"a/**/train.py\n"},
      {"**/train.py\n"},
      {"a/**\n"},
      {"a/**/\n"},
      {"**/b\n"},
      {"**\n!*/\n!*.py\n"},
      {"*\n!*/\n!train.py\n"},
      {"src/*/mod.py\n"},
      {"src/**/mod.py\n"},
      {"doc/frotz/\n"},
      {"frotz/\n"},
      {"/doc/frotz\n"},
      {"foo/*\n"},
      {"foo/**/baz.py\n"},
      {"[ab].py\n"},
      {"[!a]*.py\n"},
      {"[^a]*.py\n"},
      {"\\[ab\\].py\n"},
      {"star\\*.py\n"},
      {"\\#hash.py\n"},
      {"#hash.py\n"},
      {"\\!bang.py\n"},
      {"sp ace.py\n"},
      {"trail\\ .py\n"},
      {"train.py   \n"},
      {"train.py\\ \n"},
      {"*.py\r\n!b.py\r\n"},
      {"ab?.py\n"},
      {"?.py\n"},
      {"a?c.py\n"},
      {"dir.d/\n"},
      {"*.d\n"},
      {"ab*\n"},
      {"v/**/abc/\n"},
      {"v/**/ab/**/x.py\n"},
      {"nested/**/e.py\n"},
      {"nested/*/b\n"},
      {"caf\xc3\xa9.py\n"},
      {"*.PY\n"},
      {"back\\\\slash.py\n"},
      {"[a-c].py\n"},
      {"[a-].py\n"},
      {"[]ab].py\n"},
      {"[!]]*.py\n"},
      {"[[:alpha:]].py\n"},
      {"[[:digit:]]*\n"},
      {"[abc\n"},
      {"train.py\\\n"},
      {"/\n"},
      {"!\n"},
      {"a/b/\n!a/b/c/\n"},
      {"*.py\n", "a", "!train.py\n"},
      {"", "a", "b/\n"},
      {"", "a", "/b\n"},
      {"", "a", "**/deep.py\n"},
      {"", "src", "pkg/sub\n"},
      {"*.py\n", "src/pkg", "!mod.py\n"},
      {"logs\n", "", "", "!logs\n"},
      {"", "", "", "*.pyc\ndata/\n"},
      {"\xef\xbb\xbftrain.py\n"},  // a byte-order mark, as Windows editors write it
      {"", "a", "\xef\xbb\xbf" "b/\n", "\xef\xbb\xbf*.pyc\n"},
  };
  for (auto& c : cases) {
    SCOPED_TRACE(c.root_patterns + "|" + c.sub_dir + "|" + c.sub_patterns + "|" + c.info_exclude);
    expect_same_as_git(c);
  }
}

// Random patterns from the pieces above; a fixed seed keeps failures reproducible.
TEST(GitIgnoreVsGit, RandomPatterns) {
  if (!git_available()) GTEST_SKIP() << "git is not installed";
  std::mt19937 rng(20240611);
  const std::vector<std::string> parts = {"a",   "b",   "ab",   "*",     "**", "?",     "*.py", "train.py", "[ab]",
                                          "[!a]", "x.*", "*b*", "data", "src", "logs", "build", "c",  "a?", "*.d",
                                          "pkg", "mod.py", "[[:alpha:]]*", "[a-c]*", "\\*.py", "**/b", "[!ab]?"};
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  auto pattern = [&] {
    std::string p;
    if (pick(5) == 0) p += "!";
    if (pick(4) == 0) p += "/";
    size_t n = 1 + pick(3);
    for (size_t i = 0; i < n; ++i) p += (i ? "/" : "") + parts[pick(parts.size())];
    if (pick(4) == 0) p += "/";
    return p;
  };
  for (int round = 0; round < 60; ++round) {
    Case c;
    size_t n = 1 + pick(4);
    for (size_t i = 0; i < n; ++i) c.root_patterns += pattern() + "\n";
    if (pick(3) == 0) {
      c.sub_dir = std::vector<std::string>{"a", "src", "a/b", "data"}[pick(4)];
      c.sub_patterns = pattern() + "\n" + pattern() + "\n";
    }
    SCOPED_TRACE(c.root_patterns + "|" + c.sub_dir + "|" + c.sub_patterns);
    expect_same_as_git(c);
  }
}

// A .gitignore or an `exclude` glob with many stars must not make a walk hang: git's wildmatch
// gives up as soon as the text runs out; so must ours. (A backtracking matcher takes minutes on
// this one.)
TEST(Wildmatch, ManyStarsAgainstALongNameFinishAtOnce) {
  std::string name(80, 'a');
  name += ".py";
  auto done = std::make_shared<std::atomic<int>>(-1);
  std::thread([done, name] {
    bool a = tl::wildmatch("*a*a*a*a*a*a*a*a*a*a*a*a*b", name);
    bool b = tl::wildmatch("**/*a*a*a*a*a*a*a*a*a*a*a*/b", "x/" + name + "/y/" + name);
    *done = (a ? 1 : 0) + (b ? 2 : 0);
  }).detach();
  for (int i = 0; i < 500 && *done < 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_GE(done->load(), 0) << "wildmatch is still running after 5 s";
  EXPECT_EQ(done->load(), 0);
  EXPECT_TRUE(tl::wildmatch("*a*a*a*a*a*a*a*a*a*a*a*a*", name));
}

TEST(Wildmatch, PosixClassesAndMalformedSets) {
  EXPECT_TRUE(tl::wildmatch("[[:digit:]]*.py", "2nd_stage.py"));
  EXPECT_FALSE(tl::wildmatch("[[:digit:]]*.py", "stage2.py"));
  EXPECT_TRUE(tl::wildmatch("[[:upper:]][[:lower:]]*", "Train"));
  EXPECT_TRUE(tl::wildmatch("[![:space:]]", "x"));
  EXPECT_FALSE(tl::wildmatch("[![:space:]]", " "));
  // git: an unknown class or a set without ']' makes the pattern match nothing
  EXPECT_FALSE(tl::wildmatch("[[:nope:]]", "a"));
  EXPECT_FALSE(tl::wildmatch("[abc", "[abc"));
  // a '[' in a set is a member when no ":]" follows
  EXPECT_TRUE(tl::wildmatch("[[a]", "["));
  EXPECT_TRUE(tl::wildmatch("[]a]", "]"));
  EXPECT_TRUE(tl::wildmatch("[a-]", "-"));
  // bytes above 0x7f compare unsigned in ranges, as in git
  EXPECT_TRUE(tl::wildmatch("caf[a-\xff][\x80-\xbf].py", "caf\xc3\xa9.py"));
  EXPECT_FALSE(tl::wildmatch("*.py\\", "a.py\\"));  // a trailing backslash matches nothing
}

}  // namespace
