// Shared helpers for trainlint's tests.
#pragma once
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "analyzer/engine/engine.h"

namespace tl::test {

inline std::string source_dir() { return TRAINLINT_SOURCE_DIR; }
inline std::string binary() { return TRAINLINT_BINARY; }

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_file(const std::filesystem::path& p, const std::string& s) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out << s;
}

// The files under `root` whose extension is one of `extensions` ("" for none), sorted. None when
// `root` is not a folder.
inline std::vector<std::filesystem::path> files_with_extensions(const std::filesystem::path& root,
                                                                const std::vector<std::string>& extensions) {
  namespace fs = std::filesystem;
  std::vector<fs::path> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file() &&
        std::find(extensions.begin(), extensions.end(), it->path().extension().string()) != extensions.end())
      out.push_back(it->path());
  std::sort(out.begin(), out.end());
  return out;
}

// The files under the source folder's `dirs` whose extension is one of `extensions`, sorted.
inline std::vector<std::filesystem::path> source_files_under(const std::vector<std::string>& dirs,
                                                             const std::vector<std::string>& extensions) {
  std::vector<std::filesystem::path> out;
  for (const auto& d : dirs)
    for (auto& p : files_with_extensions(std::filesystem::path(source_dir()) / d, extensions)) out.push_back(p);
  std::sort(out.begin(), out.end());
  return out;
}

// The .py files under `root`, sorted; when there are more than `most`, an even sample of `most`
// of them, the same every run. None when `root` is not a folder.
inline std::vector<std::filesystem::path> python_files(const std::filesystem::path& root, size_t most) {
  namespace fs = std::filesystem;
  std::vector<fs::path> out = files_with_extensions(root, {".py"});
  if (out.size() > most) {
    std::vector<fs::path> sample;
    for (size_t i = 0; i < most; ++i) sample.push_back(out[i * out.size() / most]);
    out = sample;
  }
  return out;
}

// A fresh temporary folder, removed at the end of the test.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    char tmpl[] = "/tmp/trainlint-test-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

struct CliResult {
  int rc = -1;
  std::string out, err;
};

// Runs the trainlint binary with `args` (already shell-quoted where needed), standard input read
// from the file `stdin_path`; `env`: variable assignments for the shell to put before the command
// ("NAME='value' ").
inline CliResult run_cli(const std::string& args, const std::string& cwd = source_dir(),
                         const std::string& stdin_path = "/dev/null", const std::string& env = "") {
  TempDir t;
  std::string outp = (t.path / "out").string(), errp = (t.path / "err").string();
  std::string cmd =
      "cd '" + cwd + "' && " + env + "'" + binary() + "' " + args + " >'" + outp + "' 2>'" + errp + "' <'" + stdin_path + "'";
  int status = std::system(cmd.c_str());
  CliResult r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(outp);
  r.err = read_file(errp);
  return r;
}

// run_cli with standard input read from the file `input`.
inline CliResult run_cli_stdin(const std::string& args, const std::filesystem::path& cwd,
                               const std::filesystem::path& input) {
  return run_cli(args, cwd.string(), input.string());
}

// A training step loop that calls gc.collect() every step: TL101 at 19:13, the step loop at 13:9.
// Under the full catalog also TL203 at 10:14 (workers not persistent, iterated per epoch) and
// TL502 at 17:13 (no mixed precision); tests about TL101 pass `--select TL101`.
inline const char* const kTrainGc = R"(import gc

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def train(model, optimizer, epochs=3):
    ds = TensorDataset(torch.randn(512, 16), torch.randint(0, 2, (512,)))
    loader = DataLoader(ds, batch_size=32, num_workers=4, pin_memory=True)
    model = model.cuda()
    for epoch in range(epochs):
        for x, y in loader:
            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            gc.collect()
)";

// Lints in-memory sources {path, text}.
inline LintResult lint_texts(const std::vector<std::pair<std::string, std::string>>& files,
                             std::vector<std::string> select = {}) {
  std::vector<std::unique_ptr<SourceFile>> srcs;
  for (auto& [p, t] : files) srcs.push_back(std::make_unique<SourceFile>(p, t));
  LintOptions o;
  o.select = std::move(select);
  o.threads = 1;
  return lint_sources(std::move(srcs), o);
}

// Lints in-memory sources {path, text} with the given options.
inline LintResult lint_texts_with(const std::vector<std::pair<std::string, std::string>>& files, LintOptions o) {
  std::vector<std::unique_ptr<SourceFile>> srcs;
  for (auto& [p, t] : files) srcs.push_back(std::make_unique<SourceFile>(p, t));
  return lint_sources(std::move(srcs), std::move(o));
}
// Options for the typed C++ path in tests: its precompiled headers kept in the build folder, so
// that the tests of one build share them (built once, about 15 s).
inline LintOptions typed_cpp_options(std::vector<std::string> select = {}) {
  LintOptions o;
  o.select = std::move(select);
  o.threads = 1;
  o.cpp_typed = true;
  o.clang_pch_dir = (std::filesystem::path(binary()).parent_path() / "clang-cache" / "clang").string();
  return o;
}
// Is the typed C++ path built in (libclang-cpp14-dev), and are LibTorch's headers there?
inline bool typed_cpp_available() {
#ifdef TRAINLINT_HAVE_CLANG
  return std::filesystem::exists("/usr/include/torch/csrc/api/include/torch/torch.h");
#else
  return false;
#endif
}

// (line, code) pairs of a result, for compact assertions.
inline std::set<std::pair<uint32_t, std::string>> lines_codes(const LintResult& r) {
  std::set<std::pair<uint32_t, std::string>> s;
  for (auto& f : r.findings) s.insert({f.range.start.line, f.code});
  return s;
}

}  // namespace tl::test
