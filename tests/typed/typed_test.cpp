// The typed C++ path (Clang libTooling, analyzer/cpp_clang): the C++ fixtures and examples with
// exact types, its agreement with the fast path, its bad input, its discovery of a compile
// database, and its precompiled header kept across runs. Its own test program (label `clang`):
// CTest builds the shared precompiled header first (tests/CMakeLists.txt, CppTyped.Pch).
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <tuple>

#include "support/cpp_generated_source.h"
#include "support/fixtures.h"
#include "support/test_support.h"

namespace fs = std::filesystem;
using namespace tl;
using namespace tl::test;

namespace {

using Key = std::tuple<std::string, uint32_t, std::string>;  // path, line, code

std::set<Key> keys(const LintResult& r) {
  std::set<Key> s;
  for (auto& f : r.findings) s.insert({f.path, f.range.start.line, f.code});
  return s;
}

bool needs_cuda_headers(const LoadedFixture& lf) {
  for (auto& [p, text] : lf.files)
    if (text.find("#include <c10/cuda/") != std::string::npos || text.find("#include <torch/nn/parallel/") != std::string::npos)
      return true;
  return false;
}

class TypedFixture : public ::testing::TestWithParam<FixtureCase> {};

// Every C++ fixture holds on the typed path too (its `typed-expect` lines demanded), and the typed
// path finds everything the fast path finds there: it may find more, never less.
TEST_P(TypedFixture, FindsTheAnnotatedCasesAndAllTheFastPathFinds) {
  if (!typed_cpp_available()) GTEST_SKIP() << "no typed C++ path in this build, or no LibTorch headers";
  const FixtureCase& fc = GetParam();
  LoadedFixture lf = load_fixture(fc);
  if (needs_cuda_headers(lf) && !fs::exists("/usr/local/cuda/include/cuda.h"))
    GTEST_SKIP() << fc.name << " includes LibTorch's CUDA headers, which need the CUDA toolkit's cuda.h";
  std::vector<std::string> select = {fc.code == "TL001" ? std::string("ALL") : fc.code};
  LintResult fast = lint_texts(lf.files, select);
  LintResult typed = lint_texts_with(lf.files, typed_cpp_options(select));
  std::set<Key> typed_keys = keys(typed);
  for (auto& k : keys(fast))
    EXPECT_TRUE(typed_keys.count(k)) << "the fast path finds " << std::get<2>(k) << " at " << std::get<0>(k) << ":"
                                     << std::get<1>(k) << " and the typed path does not";
  expect_annotated(fc, lf.annotations, typed, true);
}

INSTANTIATE_TEST_SUITE_P(Cpp, TypedFixture, ::testing::ValuesIn(discover(true)), case_name);

std::set<std::pair<uint32_t, std::string>> expected_lines(const std::string& text) {
  std::set<std::pair<uint32_t, std::string>> out;
  for (auto& a : parse_annotations("x.cpp", text))
    if (a.expect) out.insert({a.line, a.code});
  return out;
}

// examples/cpp: exactly the intended findings on both paths, and the same on each.
TEST(CppTyped, ExamplesHaveExactlyTheExpectedFindingsOnBothPaths) {
  if (!typed_cpp_available()) GTEST_SKIP() << "no typed C++ path in this build, or no LibTorch headers";
  fs::path dir = fs::path(source_dir()) / "examples/cpp";
  for (const char* name : {"train_bad.cpp", "train_good.cpp"}) {
    auto want = expected_lines(read_file(dir / name));
    LintResult fast = lint_paths({(dir / name).string()}, LintOptions{});
    LintResult typed = lint_paths({(dir / name).string()}, typed_cpp_options());
    EXPECT_EQ(lines_codes(fast), want) << name << " (fast path)";
    EXPECT_EQ(lines_codes(typed), want) << name << " (typed path)";
    for (auto& m : typed.messages) ADD_FAILURE() << name << ": " << m.path << ": " << m.message;
  }
}

// A program whose types only Clang can tell: `x` comes from std::get of a project function's
// tuple, so `x.to(device);` (TL401) is certain only with its type.
const char* const kTupleProgram = R"(#include <torch/torch.h>

#include <tuple>

std::tuple<torch::Tensor, torch::Tensor> make_batch() { return {torch::randn({8, 4}), torch::randn({8, 1})}; }

int main() {
  torch::Device device(torch::kCUDA);
  torch::nn::Linear net(4, 1);
  net->to(device);
  torch::optim::SGD opt(net->parameters(), 0.1);
  for (int step = 0; step < 100; ++step) {
    auto batch = make_batch();
    auto x = std::get<0>(batch);
    x.to(device);
    auto loss = torch::mse_loss(net->forward(x.to(device)), std::get<1>(batch).to(device));
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
}
)";

TEST(CppTyped, FindsWhatOnlyExactTypesShow) {
  if (!typed_cpp_available()) GTEST_SKIP() << "no typed C++ path in this build, or no LibTorch headers";
  TempDir d;
  write_file(d.path / "train.cpp", kTupleProgram);
  std::string file = (d.path / "train.cpp").string();
  LintResult fast = lint_paths({file}, LintOptions{});
  LintResult typed = lint_paths({file}, typed_cpp_options({"TL401"}));
  EXPECT_EQ(lines_codes(typed), (std::set<std::pair<uint32_t, std::string>>{{15, "TL401"}}));
  for (auto& f : fast.findings) EXPECT_NE(f.code, "TL401") << "the fast path cannot know x's type";
  for (auto& m : typed.messages) ADD_FAILURE() << m.path << ": " << m.message;
}

// A compile_commands.json above the file turns the typed path on by itself; --no-clang keeps the
// fast path. A database whose entry names a folder that is not there, and one that is not JSON:
// a message each, and the run goes on with the default command.
TEST(CppTyped, CompileDatabasesFoundGivenAndBroken) {
  if (!typed_cpp_available()) GTEST_SKIP() << "no typed C++ path in this build, or no LibTorch headers";
  TempDir d;
  write_file(d.path / "src/train.cpp", kTupleProgram);
  std::string file = (d.path / "src/train.cpp").string();
  auto entry = [&](const std::string& dir) {
    return "[{\"directory\": \"" + dir + "\", \"file\": \"" + file +
           "\", \"arguments\": [\"c++\", \"-std=c++17\", \"-I/usr/include/torch/csrc/api/include\", \"-c\", \"" + file +
           "\", \"-o\", \"train.o\"]}]\n";
  };
  write_file(d.path / "compile_commands.json", entry(d.path.string()));
  LintOptions found = LintOptions{};
  found.select = {"TL401"};
  found.clang_pch_dir = typed_cpp_options().clang_pch_dir;
  LintResult r = lint_paths({file}, found);
  EXPECT_EQ(lines_codes(r), (std::set<std::pair<uint32_t, std::string>>{{15, "TL401"}})) << "found database not used";
  for (auto& m : r.messages) ADD_FAILURE() << m.path << ": " << m.message;
  found.cpp_fast_only = true;
  EXPECT_TRUE(lint_paths({file}, found).findings.empty()) << "--no-clang still ran the typed path";

  write_file(d.path / "compile_commands.json", entry((d.path / "gone").string()));
  LintOptions given = typed_cpp_options({"TL401"});
  given.compile_db = d.path.string();
  r = lint_paths({file}, given);
  EXPECT_EQ(lines_codes(r), (std::set<std::pair<uint32_t, std::string>>{{15, "TL401"}}));
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_NE(r.messages[0].message.find("does not exist; using the default command"), std::string::npos) << r.messages[0].message;

  write_file(d.path / "compile_commands.json", "{ not json");
  r = lint_paths({file}, given);
  EXPECT_EQ(lines_codes(r), (std::set<std::pair<uint32_t, std::string>>{{15, "TL401"}}));
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_NE(r.messages[0].message.find("cannot read the compile database"), std::string::npos) << r.messages[0].message;
}

// Code Clang rejects: a type error (typed facts from the rest of the file are kept), a missing
// header (the fast path's types alone), and a generated 5 MB source that is not valid C++ to
// Clang (dependent `item<float>()` without `template`): a message each, the findings of the fast
// path still there.
TEST(CppTyped, CodeClangRejectsGetsAMessageAndTheRunGoesOn) {
  if (!typed_cpp_available()) GTEST_SKIP() << "no typed C++ path in this build, or no LibTorch headers";
  TempDir d;
  std::string broken = kTupleProgram;
  broken.insert(broken.find("int main()"), "int oops = \"not an int\";\n\n");  // one line down: TL401 on 17
  write_file(d.path / "error.cpp", broken);
  LintResult r = lint_paths({(d.path / "error.cpp").string()}, typed_cpp_options({"TL401"}));
  EXPECT_EQ(lines_codes(r), (std::set<std::pair<uint32_t, std::string>>{{17, "TL401"}}));
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_NE(r.messages[0].message.find("clang: 1 error (first: error.cpp:7:"), std::string::npos) << r.messages[0].message;

  std::string missing = kTupleProgram;
  missing.insert(0, "#include <no/such_header.h>\n");
  write_file(d.path / "missing.cpp", missing);
  r = lint_paths({(d.path / "missing.cpp").string()}, typed_cpp_options());
  LintResult fast = lint_paths({(d.path / "missing.cpp").string()}, LintOptions{});
  EXPECT_EQ(keys(r), keys(fast));
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_NE(r.messages[0].message.find("'no/such_header.h' file not found"), std::string::npos) << r.messages[0].message;
  EXPECT_NE(r.messages[0].message.find("this file's types come from the fast path"), std::string::npos);

  GeneratedCpp g = generated_libtorch_source(5u << 20);
  write_file(d.path / "big.cpp", g.text);
  r = lint_paths({(d.path / "big.cpp").string()}, typed_cpp_options({"TL105"}));
  EXPECT_EQ(r.findings.size(), g.blocks);
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_NE(r.messages[0].message.find("this file's types come from the fast path"), std::string::npos) << r.messages[0].message;
}

// The precompiled header of <torch/torch.h> is built once and reused by the next run.
TEST(CppTyped, PrecompiledHeaderIsKeptAcrossRuns) {
  if (!typed_cpp_available()) GTEST_SKIP() << "no typed C++ path in this build, or no LibTorch headers";
  TempDir d;
  std::string args = "--clang --isolated --cache-dir '" + (d.path / "cache").string() + "' examples/cpp/";
  // the second run lints another file: the same one would be a whole-run cache hit, with no Clang at all
  auto run = [&](const char* file) {
    std::string cmd = "cd '" + source_dir() + "' && TRAINLINT_TIMING=1 '" + binary() + "' " + args + file + " 2>&1 >/dev/null";
    std::string out;
    if (FILE* p = popen(cmd.c_str(), "r")) {
      char buf[4096];
      while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
      pclose(p);
    }
    return out;
  };
  std::string a = run("train_good.cpp"), b = run("train_bad.cpp");
  EXPECT_NE(a.find("PCH built in"), std::string::npos) << a;
  EXPECT_NE(b.find("PCH reused"), std::string::npos) << b;
  fs::path pch;
  for (auto& e : fs::directory_iterator(d.path / "cache" / "clang"))
    if (e.path().extension() == ".pch") pch = e.path();
  ASSERT_FALSE(pch.empty());
  // The header's source is never rewritten: Clang checks its time against every header built
  // from it, so a run that rewrote it while a concurrent run's build finished last would leave a
  // header no run can use (seen in CI with the tests in parallel). Rebuild with the source kept
  // from long ago: it stays as it was, and the rebuilt header is used without complaint.
  fs::path src = pch;
  src += ".hpp";
  ASSERT_TRUE(fs::exists(src));
  const auto old_time = fs::file_time_type::clock::now() - std::chrono::hours(24 * 365);
  fs::last_write_time(src, old_time);
  fs::remove(pch);
  fs::remove_all(d.path / "cache" / "runs");  // whole-run results: Clang runs again
  std::string c = run("train_good.cpp");
  fs::remove_all(d.path / "cache" / "runs");
  std::string e = run("train_bad.cpp");
  EXPECT_EQ(fs::last_write_time(src), old_time);
  EXPECT_NE(c.find("PCH built in"), std::string::npos) << c;
  EXPECT_EQ(e.find("modified"), std::string::npos) << e;
  EXPECT_NE(e.find("PCH reused"), std::string::npos) << e;
}

}  // namespace
