// Throughput of `trainlint` against a bare tree-sitter parse of the same files, side by side in
// one process (Google Benchmark, real time, several repetitions). The corpus defaults to
// Debian's torch Python tree; set TRAINLINT_BENCH_DIR to use another folder.
//
// What is compared: "bare parse" = ts_parser_parse_string on every file, tree deleted;
// "lint" = the whole engine (parse, compact tree, model, linking, all rules, sorting,
// fingerprints) from in-memory sources. Both at 1 thread and at all cores. The ratio lines
// printed at the end are lint / bare parse at the same thread count.
#include <benchmark/benchmark.h>
#include <tree_sitter/api.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "analyzer/engine/engine.h"
#include "bench/corpus.h"
#include "bench/median_reporter.h"

extern "C" const TSLanguage* tree_sitter_python(void);
extern "C" const TSLanguage* tree_sitter_python_upstream(void);  // the grammar as fetched (cmake/Grammars.cmake)

namespace {

using tl::bench::corpus;

unsigned all_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

void bare_parse(unsigned threads) {
  const auto& c = corpus();
  std::atomic<size_t> next{0};
  auto work = [&] {
    TSParser* p = ts_parser_new();
    ts_parser_set_language(p, tree_sitter_python());
    for (size_t i; (i = next.fetch_add(1)) < c.files.size();) {
      const std::string& s = c.files[i].second;
      TSTree* t = ts_parser_parse_string(p, nullptr, s.data(), static_cast<uint32_t>(s.size()));
      benchmark::DoNotOptimize(t);
      ts_tree_delete(t);
    }
    ts_parser_delete(p);
  };
  if (threads <= 1) return work();
  std::vector<std::thread> pool;
  for (unsigned i = 0; i < threads; ++i) pool.emplace_back(work);
  for (auto& t : pool) t.join();
}

void lint(unsigned threads) {
  const auto& c = corpus();
  tl::LintOptions o;
  o.threads = threads;
  auto r = tl::lint_sources(c.sources(), o);
  benchmark::DoNotOptimize(r.findings.data());
}

void BM_BareParse(benchmark::State& st) {
  unsigned th = st.range(0) ? static_cast<unsigned>(st.range(0)) : all_threads();
  for (auto _ : st) bare_parse(th);
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * static_cast<int64_t>(corpus().bytes));
  st.counters["threads"] = th;
}

void BM_Lint(benchmark::State& st) {
  unsigned th = st.range(0) ? static_cast<unsigned>(st.range(0)) : all_threads();
  for (auto _ : st) lint(th);
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * static_cast<int64_t>(corpus().bytes));
  st.counters["threads"] = th;
}

// A block of `lines` comment lines between two methods of a class, indented `indent` spaces (4: at
// the class body's depth; 0: code commented out at column 0), parsed by the grammar as fetched
// (arg 0) and by the one trainlint compiles, whose scanner stops reading ahead over comments as
// soon as the answer is known (arg 1; cmake/Grammars.cmake). Only the parse, one thread.
//   trainlint_bench --benchmark_filter=CommentBlock
void BM_CommentBlock(benchmark::State& st) {
  const TSLanguage* lang = st.range(0) ? tree_sitter_python() : tree_sitter_python_upstream();
  const auto lines = static_cast<size_t>(st.range(1));
  const std::string pad(static_cast<size_t>(st.range(2)), ' ');
  std::string text = "class C:\n    def f(self):\n        return 1\n";
  for (size_t i = 0; i < lines; ++i) text += pad + "# note " + std::to_string(i) + ": why the code below does what it does\n";
  text += "    def g(self):\n        return 2\n";
  TSParser* p = ts_parser_new();
  ts_parser_set_language(p, lang);
  for (auto _ : st) {
    TSTree* t = ts_parser_parse_string(p, nullptr, text.data(), static_cast<uint32_t>(text.size()));
    benchmark::DoNotOptimize(t);
    ts_tree_delete(t);
  }
  ts_parser_delete(p);
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_CommentBlock)
    ->ArgNames({"trainlint", "lines", "indent"})
    ->ArgsProduct({{0, 1}, {1000, 2000, 4000}, {4, 0}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Interleave so that machine noise hits both sides alike.
BENCHMARK(BM_BareParse)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3)->Repetitions(3);
BENCHMARK(BM_Lint)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3)->Repetitions(3);
BENCHMARK(BM_BareParse)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3)->Repetitions(3);
BENCHMARK(BM_Lint)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3)->Repetitions(3);


}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  corpus();
  tl::bench::MedianReporter rep;
  benchmark::RunSpecifiedBenchmarks(&rep);
  double mb = corpus().bytes / 1e6;
  for (const char* th : {"1", "0"}) {
    std::string a = std::string("BM_Lint/") + th, b = std::string("BM_BareParse/") + th;
    if (!rep.median_ms.count(a) || !rep.median_ms.count(b)) continue;
    double l = rep.median_ms[a], p = rep.median_ms[b];
    std::printf("threads=%s: lint %.0f ms (%.1f MB/s), bare parse %.0f ms (%.1f MB/s), lint/parse = %.2fx\n",
                std::string(th) == "0" ? std::to_string(all_threads()).c_str() : th, l, mb / (l / 1e3), p,
                mb / (p / 1e3), l / p);
  }
  return 0;
}
