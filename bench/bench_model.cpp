// Micro-benchmarks of the stages of a lint run (issue 13's "profile before optimising"), on the
// same in-memory corpus as trainlint_bench (Debian's torch tree by default; TRAINLINT_BENCH_DIR
// picks another folder):
//
// - BM_ModelBuild/T: py::ProgramModel::build from in-memory sources on T threads (0 = all cores):
//   parse, collect, then the link passes. Each pass's time is a counter (ms per build), taken
//   from the model's own phase clock, so the passes are compared inside one measured build.
// - BM_Rules: every Python rule over every module of a model built once, on one thread, in the
//   engine's order, with one fact cache shared by the rules (as a run does).
// - BM_Rule/<code>: one rule alone over every module, on one thread, with a fresh fact cache (so a
//   rule pays for the module facts it asks for, which in a run the first asker pays).
//
// Real time; the program ends with a table of the passes and the ten costliest rules.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "analyzer/python/model.h"
#include "bench/corpus.h"
#include "bench/median_reporter.h"
#include "rules/python/rule_context.h"
#include "rules/registry.h"

namespace {

using tl::bench::corpus;

unsigned all_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

const tl::py::ProgramModel& model_once() {
  static tl::py::ProgramModel m = tl::py::ProgramModel::build(corpus().sources(true), all_threads());
  return m;
}

std::vector<const tl::RuleEntry*> python_rules() {
  std::vector<const tl::RuleEntry*> out;
  for (auto& r : tl::registry())
    if (r.python) out.push_back(&r);
  return out;
}

size_t run_rules(const std::vector<const tl::RuleEntry*>& rules) {
  const auto& m = model_once();
  tl::FactCache facts(m.modules().size());
  size_t findings = 0;
  for (auto& mod : m.modules()) {
    std::vector<tl::Finding> out;
    for (auto* r : rules) {
      tl::RuleContext ctx(m, *mod, *r, out, facts);
      r->python(ctx);
    }
    findings += out.size();
  }
  return findings;
}

void BM_ModelBuild(benchmark::State& st) {
  unsigned th = st.range(0) ? static_cast<unsigned>(st.range(0)) : all_threads();
  std::map<std::string, double> phase_ms;
  for (auto _ : st) {
    st.PauseTiming();
    auto srcs = corpus().sources(true);
    st.ResumeTiming();
    tl::py::ProgramModel m = tl::py::ProgramModel::build(std::move(srcs), th);
    for (auto& [name, ms] : m.build_phases()) phase_ms[name] += ms;
    st.PauseTiming();
    { tl::py::ProgramModel gone = std::move(m); }  // freeing the model is not the build's time
    st.ResumeTiming();
  }
  for (auto& [name, ms] : phase_ms) st.counters[name] = benchmark::Counter(ms, benchmark::Counter::kAvgIterations);
  st.counters["threads"] = th;
}

void BM_Rules(benchmark::State& st) {
  auto rules = python_rules();
  model_once();
  size_t n = 0;
  for (auto _ : st) n = run_rules(rules);
  st.counters["findings"] = static_cast<double>(n);
  st.counters["rules"] = static_cast<double>(rules.size());
}

void BM_Rule(benchmark::State& st, const tl::RuleEntry* rule) {
  model_once();
  size_t n = 0;
  for (auto _ : st) n = run_rules({rule});
  st.counters["findings"] = static_cast<double>(n);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  corpus();
  benchmark::RegisterBenchmark("BM_ModelBuild", BM_ModelBuild)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime()
      ->Iterations(2)->Repetitions(3);
  benchmark::RegisterBenchmark("BM_Rules", BM_Rules)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(2)->Repetitions(3);
  for (auto* r : python_rules())
    benchmark::RegisterBenchmark(("BM_Rule/" + std::string(r->code)).c_str(), BM_Rule, r)
        ->Unit(benchmark::kMillisecond)->UseRealTime()->Repetitions(3);
  tl::bench::MedianReporter rep;
  benchmark::RunSpecifiedBenchmarks(&rep);
  // the passes of one build on one thread, then the costliest rules
  auto build = tl::py::ProgramModel::build(corpus().sources(true), 1);
  double total = 0;
  for (auto& [name, ms] : build.build_phases()) total += ms;
  std::printf("\nmodel build on 1 thread (one more build, its own phase clock): %.0f ms\n", total);
  for (auto& [name, ms] : build.build_phases()) std::printf("  %-28s %8.1f ms  %4.1f%%\n", name.c_str(), ms, 100 * ms / total);
  std::vector<std::pair<double, std::string>> rules;
  for (auto& [name, ms] : rep.median_ms)
    if (name.rfind("BM_Rule/", 0) == 0) rules.emplace_back(ms, name.substr(8));
  std::sort(rules.rbegin(), rules.rend());
  if (rep.median_ms.count("BM_Rules"))
    std::printf("all %zu Python rules, one thread, shared facts: %.1f ms (median)\n", python_rules().size(),
                rep.median_ms["BM_Rules"]);
  for (size_t i = 0; i < rules.size() && i < 10; ++i) std::printf("  %-8s %8.1f ms alone\n", rules[i].second.c_str(), rules[i].first);
  return 0;
}
