// The on-disk cache (analyzer/engine/cache.h, docs/cache.md) as a user meets it: a second run of an
// unchanged project answered from the cache with the same output; a changed helper module re-parsed
// alone while the finding in the script that depends on it changes; damaged entries, concurrent
// runs, --no-cache, --cache-dir and the `cache-dir` key; and the tree codec and the size bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "analyzer/engine/cache.h"
#include "analyzer/python/ast.h"
#include "support/test_support.h"
#include "support/tree_diff.h"

namespace fs = std::filesystem;
using tl::test::CliResult;
using tl::test::read_file;
using tl::test::run_cli;
using tl::test::TempDir;
using tl::test::write_file;

namespace {

bool contains(const std::string& s, const std::string& p) { return s.find(p) != std::string::npos; }

// The loop in train.py is a training step loop only because helpers.step() steps the optimizer:
// the gc.collect() in it is TL101 while it does, and nothing once it does not.
const char* const kTrain = R"(import gc

import torch

import helpers


def main():
    model = torch.nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for i in range(100):
        helpers.step(model, opt, torch.randn(8, 4))
        gc.collect()


if __name__ == "__main__":
    main()
)";

const char* const kHelperSteps = R"(def step(model, opt, x):
    opt.zero_grad()
    loss = model(x).sum()
    loss.backward()
    opt.step()
)";

const char* const kHelperIdle = R"(def step(model, opt, x):
    return model(x)
)";

const char* const kOther = R"(import json


def load(path):
    with open(path) as f:
        return json.load(f)
)";

struct Project {
  TempDir t;
  fs::path root, cache;
  Project() : root(t.path / "proj"), cache(t.path / "cache") {
    write_file(root / "pyproject.toml", "[project]\nname = \"p\"\n");
    write_file(root / "train.py", kTrain);
    write_file(root / "helpers.py", kHelperSteps);
    write_file(root / "other.py", kOther);
  }
  CliResult lint(const std::string& extra = "") const {
    return run_cli("--format json --select TL101 --cache-dir '" + cache.string() + "' " + extra + " .", root.string());
  }
};

// The "trainlint: cache: N trees loaded, M parsed" line TRAINLINT_TIMING prints after a run the
// whole-run entry did not answer; {-1, -1} when there is none (a whole-run hit).
std::pair<int, int> tree_counts(const std::string& err) {
  auto at = err.find("trainlint: cache: ");
  if (at == std::string::npos) return {-1, -1};
  int loaded = -1, parsed = -1;
  std::sscanf(err.c_str() + at, "trainlint: cache: %d trees loaded, %d parsed", &loaded, &parsed);
  return {loaded, parsed};
}

// A lint run with TRAINLINT_TIMING set (the engine's phase timings and cache counts on stderr).
CliResult timed(const Project& p, const std::string& extra = "") {
  setenv("TRAINLINT_TIMING", "1", 1);
  CliResult r = p.lint(extra);
  unsetenv("TRAINLINT_TIMING");
  return r;
}

TEST(Cache, ASecondRunIsAnsweredFromTheCacheWithTheSameOutput) {
  Project p;
  CliResult cold = timed(p);
  ASSERT_EQ(cold.rc, 1) << cold.err;
  EXPECT_TRUE(contains(cold.out, "\"TL101\"")) << cold.out;
  EXPECT_EQ(tree_counts(cold.err), std::make_pair(0, 3)) << cold.err;
  EXPECT_TRUE(fs::exists(p.cache / "CACHEDIR.TAG"));
  EXPECT_TRUE(contains(read_file(p.cache / ".gitignore"), "*"));
  CliResult warm = timed(p);
  EXPECT_EQ(warm.rc, cold.rc);
  EXPECT_EQ(warm.out, cold.out);
  EXPECT_TRUE(contains(warm.err, "cache (a whole-run hit)")) << warm.err;
  // the text report shows source excerpts from the files the cached run read
  CliResult text1 = run_cli("--no-cache --select TL101 .", p.root.string());
  CliResult text2 = run_cli("--select TL101 --cache-dir '" + p.cache.string() + "' .", p.root.string());
  CliResult text3 = run_cli("--select TL101 --cache-dir '" + p.cache.string() + "' .", p.root.string());
  EXPECT_EQ(text2.out, text1.out);
  EXPECT_EQ(text3.out, text1.out);
  EXPECT_TRUE(contains(text3.out, "gc.collect()")) << text3.out;
}

TEST(Cache, AChangedHelperIsReparsedAloneAndTheScriptsFindingFollowsIt) {
  Project p;
  CliResult cold = timed(p);
  ASSERT_EQ(cold.rc, 1) << cold.err;
  ASSERT_TRUE(contains(cold.out, "train.py")) << cold.out;
  write_file(p.root / "helpers.py", kHelperIdle);
  CliResult after = timed(p);
  EXPECT_EQ(after.rc, 0) << after.out << after.err;
  EXPECT_FALSE(contains(after.out, "\"TL101\"")) << after.out;
  EXPECT_EQ(tree_counts(after.err), std::make_pair(2, 1)) << after.err;  // only helpers.py parsed
  // and back: the first entry answers again, the same findings as the cold run
  write_file(p.root / "helpers.py", kHelperSteps);
  CliResult back = timed(p);
  EXPECT_EQ(back.out, cold.out);
  EXPECT_TRUE(contains(back.err, "cache (a whole-run hit)")) << back.err;
  // a cold run of the changed project agrees with the cached one
  write_file(p.root / "helpers.py", kHelperIdle);
  EXPECT_EQ(run_cli("--format json --select TL101 --no-cache .", p.root.string()).out, after.out);
}

// The C++ half of a run is kept apart: a Python edit takes it from the cache, a C++ edit
// analyses it again, and the output is a cold run's every time.
TEST(Cache, ThePythonAndCppHalvesAreKeptApart) {
  Project p;
  const std::string cpp_loop = R"(#include <torch/torch.h>
void train(torch::nn::Linear& model, torch::optim::SGD& opt) {
  for (int64_t step = 0; step < 100; ++step) {
    opt.zero_grad();
    auto loss = model->forward(torch::randn({8, 4})).sum();
    loss.backward();
    opt.step();
    torch::save(model, "model.pt");
  }
}
)";
  write_file(p.root / "native" / "train.cpp", cpp_loop);
  auto lint = [&](const std::string& extra) {
    setenv("TRAINLINT_TIMING", "1", 1);
    CliResult r = run_cli("--format json --select TL101,TL103 " + extra + " .", p.root.string());
    unsetenv("TRAINLINT_TIMING");
    return r;
  };
  const std::string cached = "--cache-dir '" + p.cache.string() + "'";
  CliResult cold = lint(cached);
  ASSERT_EQ(cold.rc, 1) << cold.err;
  ASSERT_TRUE(contains(cold.out, "train.cpp")) << cold.out;
  ASSERT_TRUE(contains(cold.out, "train.py")) << cold.out;
  EXPECT_FALSE(contains(cold.err, "C++ (from the cache)")) << cold.err;
  // a Python edit: the C++ half comes from the cache, the Python finding follows the helper
  write_file(p.root / "helpers.py", kHelperIdle);
  CliResult py_edit = lint(cached);
  EXPECT_TRUE(contains(py_edit.err, "C++ (from the cache)")) << py_edit.err;
  EXPECT_EQ(py_edit.out, lint("--no-cache").out);
  EXPECT_TRUE(contains(py_edit.out, "train.cpp")) << py_edit.out;
  EXPECT_FALSE(contains(py_edit.out, "train.py")) << py_edit.out;
  // a C++ edit: analysed again, and its finding goes
  std::string fixed = cpp_loop;
  fixed.replace(fixed.find("    torch::save(model, \"model.pt\");\n"), std::string("    torch::save(model, \"model.pt\");\n").size(), "");
  write_file(p.root / "native" / "train.cpp", fixed);
  CliResult cpp_edit = lint(cached);
  EXPECT_FALSE(contains(cpp_edit.err, "C++ (from the cache)")) << cpp_edit.err;
  EXPECT_EQ(cpp_edit.out, lint("--no-cache").out);
  EXPECT_FALSE(contains(cpp_edit.out, "train.cpp")) << cpp_edit.out;
}

TEST(Cache, TheRuleSelectionAndTheConfigurationArePartOfTheKey) {
  Project p;
  CliResult a = p.lint();
  CliResult b = run_cli("--format json --select TL1 --ignore TL101 --cache-dir '" + p.cache.string() + "' .",
                        p.root.string());
  EXPECT_EQ(a.rc, 1);
  EXPECT_FALSE(contains(b.out, "\"TL101\"")) << b.out;
  // the configuration's text: the same command line, another answer
  std::string all = "--format json --cache-dir '" + p.cache.string() + "' .";
  EXPECT_TRUE(contains(run_cli(all, p.root.string()).out, "\"TL101\""));
  write_file(p.root / "pyproject.toml", "[project]\nname = \"p\"\n[tool.trainlint]\nignore = [\"TL101\"]\n");
  CliResult c = run_cli(all, p.root.string());
  EXPECT_FALSE(contains(c.out, "\"TL101\"")) << c.out;
}

// The typed C++ path is its own file (trainlint-clang.so): which one a run would load is part of
// "this build", so a run entry made with one module is not answered for another.
TEST(Cache, TheTypedPathModuleIsPartOfTheKey) {
  Project p;
  setenv("TRAINLINT_CLANG_MODULE", (p.t.path / "a" / "trainlint-clang.so").c_str(), 1);
  CliResult a = timed(p);
  CliResult a2 = timed(p);
  setenv("TRAINLINT_CLANG_MODULE", (p.t.path / "b" / "trainlint-clang.so").c_str(), 1);
  CliResult b = timed(p);
  unsetenv("TRAINLINT_CLANG_MODULE");
  EXPECT_TRUE(contains(a2.err, "cache (a whole-run hit)")) << a2.err;
  EXPECT_FALSE(contains(b.err, "cache (a whole-run hit)")) << b.err;
  EXPECT_EQ(b.out, a.out);
}

TEST(Cache, DamagedEntriesAreIgnored) {
  Project p;
  CliResult cold = p.lint("--no-cache");
  ASSERT_EQ(p.lint().out, cold.out);
  std::mt19937 rng(7);
  size_t damaged = 0;
  for (auto& e : fs::recursive_directory_iterator(p.cache)) {
    if (!e.is_regular_file() || e.path().filename() == "CACHEDIR.TAG" || e.path().filename() == ".gitignore") continue;
    std::string bytes = read_file(e.path());
    switch (damaged++ % 3) {
      case 0: bytes.resize(bytes.size() / 2); break;                                // truncated
      case 1: bytes[bytes.size() - 1 - rng() % std::min<size_t>(bytes.size(), 64)] ^= 0x5A; break;  // a flipped byte
      default: bytes = "not a cache entry"; break;
    }
    write_file(e.path(), bytes);
  }
  ASSERT_GE(damaged, 4u);  // three trees and at least one run
  CliResult again = p.lint();
  EXPECT_EQ(again.rc, cold.rc);
  EXPECT_EQ(again.out, cold.out);
  EXPECT_EQ(again.err, cold.err);
}

TEST(Cache, NoCacheWritesNothingAndTheConfigurationNamesTheFolder) {
  Project p;
  CliResult r = p.lint("--no-cache");
  EXPECT_EQ(r.rc, 1);
  EXPECT_FALSE(fs::exists(p.cache));
  EXPECT_FALSE(fs::exists(p.root / ".trainlint_cache"));
  // by default the cache sits beside the configuration
  r = run_cli("--select TL101 --format json .", p.root.string());
  EXPECT_TRUE(fs::exists(p.root / ".trainlint_cache" / "CACHEDIR.TAG"));
  write_file(p.root / "pyproject.toml", "[project]\nname = \"p\"\n[tool.trainlint]\ncache-dir = \"build/lint-cache\"\n");
  r = run_cli("--select TL101 --format json .", p.root.string());
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_TRUE(fs::exists(p.root / "build/lint-cache" / "CACHEDIR.TAG"));
  write_file(p.root / "pyproject.toml", "[project]\nname = \"p\"\n[tool.trainlint]\ncache-dir = 3\n");
  r = run_cli("--select TL101 .", p.root.string());
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(contains(r.err, "cache-dir")) << r.err;
}

TEST(Cache, AFolderThatCannotBeCreatedIsAWarningNotAFailure) {
  Project p;
  write_file(p.t.path / "file", "x");
  CliResult r = run_cli("--format json --select TL101 --cache-dir '" + (p.t.path / "file" / "sub").string() + "' .",
                        p.root.string());
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_TRUE(contains(r.out, "\"TL101\"")) << r.out;
  EXPECT_TRUE(contains(r.out, "cannot create the cache folder")) << r.out;  // a file message of the report
  EXPECT_TRUE(contains(r.out, "linted without the cache")) << r.out;
  r = run_cli("--select TL101 --cache-dir '" + (p.t.path / "file" / "sub").string() + "' .", p.root.string());
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "sub: warning: cannot create the cache folder: Not a directory; linted without the cache"))
      << r.err;
}

TEST(Cache, ConcurrentRunsAgree) {
  Project p;
  CliResult cold = p.lint("--no-cache");
  std::vector<CliResult> rs(6);
  std::vector<std::thread> th;
  for (size_t i = 0; i < rs.size(); ++i) th.emplace_back([&, i] { rs[i] = p.lint(); });
  for (auto& t : th) t.join();
  for (auto& r : rs) {
    EXPECT_EQ(r.rc, cold.rc) << r.err;
    EXPECT_EQ(r.out, cold.out);
  }
  for (auto& e : fs::recursive_directory_iterator(p.cache))
    EXPECT_EQ(e.path().string().find(".tmp"), std::string::npos) << e.path();  // no temporary left
}

// Every fixture's tree survives encode/decode exactly; damaged bytes are refused, never a crash.
TEST(CacheCodec, TreesRoundTripAndDamagedBytesAreRefused) {
  std::vector<fs::path> files;
  for (auto& e : fs::recursive_directory_iterator(fs::path(tl::test::source_dir()) / "tests/fixtures"))
    if (e.is_regular_file() && e.path().extension() == ".py") files.push_back(e.path());
  files.push_back(fs::path(tl::test::source_dir()) / "examples/train_bad.py");
  ASSERT_GT(files.size(), 20u);
  std::mt19937 rng(11);
  for (auto& f : files) {
    tl::SourceFile src(f.string(), read_file(f));
    tl::py::Tree t = tl::py::Tree::parse(src);
    std::string bytes = t.encode();
    auto back = tl::py::Tree::decode(src, bytes);
    ASSERT_TRUE(back) << f;
    EXPECT_EQ(tl::test::tree_difference(t, *back), "") << f;
    for (int k = 0; k < 20; ++k) {
      std::string bad = bytes;
      if (k % 2) bad.resize(rng() % bad.size());
      else bad[rng() % bad.size()] ^= static_cast<char>(1 + rng() % 255);
      auto d = tl::py::Tree::decode(src, bad);  // may decode (a flipped symbol is still a tree): must not crash
      if (d) {
        std::vector<tl::py::NodeId> open;  // the ancestors of node n, with a stack
        for (tl::py::NodeId n = 0; n < d->size(); ++n) {
          while (!open.empty() && (*d)[open.back()].subtree_end <= n) open.pop_back();
          ASSERT_EQ((*d)[n].parent, open.empty() ? tl::py::kNone : open.back()) << "the nearest ancestor";
          open.push_back(n);
          ASSERT_LE((*d)[n].end, src.text().size());
          ASSERT_GT((*d)[n].subtree_end, n);
          ASSERT_LE((*d)[n].subtree_end, d->size());
          if (n == 0) {
            ASSERT_EQ((*d)[n].parent, tl::py::kNone);
            continue;
          }
          tl::py::NodeId p = (*d)[n].parent;
          ASSERT_LT(p, n);
          ASSERT_LE((*d)[n].subtree_end, (*d)[p].subtree_end);
        }
      }
    }
    tl::SourceFile shorter(f.string(), src.text().substr(0, src.text().size() / 2));
    if (t.size() > 1) EXPECT_FALSE(tl::py::Tree::decode(shorter, bytes)) << f;  // not this text's tree
  }
}

TEST(CacheStore, PruningKeepsTheCacheWithinItsBound) {
  TempDir t;
  std::string err;
  auto c = tl::cache::DiskCache::open(t.path / "c", 64 * 1024, &err);
  ASSERT_TRUE(c) << err;
  for (int i = 0; i < 200; ++i) {
    std::string text;
    for (int k = 0; k < 100; ++k) text += "x" + std::to_string(k) + " = " + std::to_string(i) + "\n";
    tl::SourceFile src("f" + std::to_string(i) + ".py", text);
    c->save(src, tl::py::Tree::parse(src));
  }
  // the entry used last survives: written after the others by more than a file system's
  // timestamp granularity (coarse clocks tick every few milliseconds, and 200 writes share ticks)
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::string text;
  for (int k = 0; k < 100; ++k) text += "y" + std::to_string(k) + " = 1\n";
  tl::SourceFile src("newest.py", text);
  c->save(src, tl::py::Tree::parse(src));
  c->prune();
  uintmax_t total = 0;
  for (auto& e : fs::recursive_directory_iterator(t.path / "c"))
    if (e.is_regular_file()) total += e.file_size();
  EXPECT_LE(total, 64u * 1024 + 1024);
  EXPECT_TRUE(c->load(src));
}

TEST(CacheStore, PruningCountsPrecompiledHeadersAndKeepsTheNewest) {
  TempDir t;
  std::string err;
  auto c = tl::cache::DiskCache::open(t.path / "c", 64 * 1024, &err);
  ASSERT_TRUE(c) << err;
  const auto clang = t.path / "c" / "clang";
  const auto now = fs::file_time_type::clock::now();
  // three headers of 40 KB (each with its source), used an hour ago, a minute ago and now
  int age_minutes[] = {60, 1, 0};
  for (int i = 0; i < 3; ++i) {
    auto pch = clang / ("torch-" + std::to_string(i) + ".pch");
    write_file(pch, std::string(40 * 1024, 'p'));
    write_file(clang / ("torch-" + std::to_string(i) + ".pch.hpp"), "#include <torch/torch.h>\n");
    fs::last_write_time(pch, now - std::chrono::minutes(age_minutes[i]));
  }
  c->prune();
  // over the bound: the oldest two go with their sources; the newest stays though it alone is
  // most of the bound
  EXPECT_FALSE(fs::exists(clang / "torch-0.pch"));
  EXPECT_FALSE(fs::exists(clang / "torch-0.pch.hpp"));
  EXPECT_FALSE(fs::exists(clang / "torch-1.pch"));
  EXPECT_TRUE(fs::exists(clang / "torch-2.pch"));
  EXPECT_TRUE(fs::exists(clang / "torch-2.pch.hpp"));
  // a bound smaller than one header still keeps the newest
  auto tiny = tl::cache::DiskCache::open(t.path / "c", 1024, &err);
  ASSERT_TRUE(tiny) << err;
  tiny->prune();
  EXPECT_TRUE(fs::exists(clang / "torch-2.pch"));
}

}  // namespace

// The keys' hash: every bit of the input counts, wherever it falls (either word of a 16-byte block,
// a last 8-byte word, the tail), and so do the length and where one add() ends.
TEST(Cache, TheHashSeesEveryBitAndTheLength) {
  using tl::cache::Hash;
  using tl::cache::Hasher;
  std::mt19937_64 rng(7);
  std::string base(203, '\0');  // 25 words of 8, a tail of 3
  for (auto& c : base) c = static_cast<char>(rng());
  const Hash h0 = Hasher().add(base).finish();
  EXPECT_EQ(Hasher().add(base).finish(), h0);
  std::vector<std::pair<uint64_t, uint64_t>> seen{{h0.a, h0.b}};
  for (size_t i = 0; i < base.size(); ++i)
    for (int bit = 0; bit < 8; ++bit) {
      std::string s = base;
      s[i] = static_cast<char>(s[i] ^ (1 << bit));
      Hash h = Hasher().add(s).finish();
      seen.emplace_back(h.a, h.b);
    }
  for (size_t n = 0; n < 200; ++n) {  // runs of zero bytes: only the length tells them apart
    Hash h = Hasher().add(std::string(n, '\0')).finish();
    seen.emplace_back(h.a, h.b);
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(std::adjacent_find(seen.begin(), seen.end()), seen.end()) << "two inputs share a hash";
  // each lane on its own tells the flipped inputs apart too (the words go to the lanes in turn,
  // and the lanes are mixed into each other at the end)
  for (int lane = 0; lane < 2; ++lane) {
    std::vector<uint64_t> one;
    for (auto& [a, b] : seen) one.push_back(lane == 0 ? a : b);
    std::sort(one.begin(), one.end());
    EXPECT_EQ(std::adjacent_find(one.begin(), one.end()), one.end()) << "lane " << lane;
  }
  EXPECT_NE(Hasher().add(base.substr(0, 100)).add(base.substr(100)).finish(), h0);
  EXPECT_NE(Hasher().add(base.substr(0, 64)).add(base.substr(64)).finish(),
            Hasher().add(base.substr(0, 96)).add(base.substr(96)).finish());
}
