// The merge of `trainlint run` on a long GPU run: 1,000 steps of 1,000 kernels each (1 M kernel
// records, 10 us kernels with 1 us gaps, one data wait and one flagged 2 ms site per step), written
// the two ways the shim writes GPU activity, read and merged side by side (Google Benchmark, real
// time, repetitions):
//   "lines": one `gpu` line per kernel, name included (the shim's first TRAINLINT_GPU_DETAIL records);
//   "busy":  `gpu_busy` lines, merged intervals as offsets and durations (everything after that).
// Printed at the end: the records' size on disk and the read+merge time of each, and their ratios.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "analyzer/runtime/measure.h"
#include "analyzer/runtime/records.h"
#include "bench/median_reporter.h"

namespace fs = std::filesystem;
namespace rt = tl::runtime;

namespace {

constexpr int kSteps = 1000, kKernels = 1000;

struct Folders {
  fs::path root, lines, busy;
  uintmax_t lines_bytes = 0, busy_bytes = 0;
  Folders() {
    root = fs::temp_directory_path() / ("trainlint-bench-records-" + std::to_string(::getpid()));
    lines = root / "lines";
    busy = root / "busy";
    fs::create_directories(lines);
    fs::create_directories(busy);
    std::ofstream a(lines / "rec-5.jsonl"), b(busy / "rec-5.jsonl");
    const char* head =
        "{\"t\":\"proc\",\"pid\":5,\"ppid\":1,\"role\":\"main\",\"rank\":null,\"argv0\":\"train.py\",\"python\":\"3.12.0\"}\n"
        "{\"t\":\"gpu_status\",\"state\":\"ok\",\"reason\":\"\"}\n";
    a << head;
    b << head;
    int64_t t = 1'000'000'000'000;
    for (int s = 1; s <= kSteps; ++s) {
      std::string wait = "{\"t\":\"wait\",\"start\":" + std::to_string(t) + ",\"end\":" + std::to_string(t + 100000) + "}\n";
      a << wait;
      b << wait;
      t += 100000;
      const int64_t base = t;
      std::string iv;
      for (int k = 0; k < kKernels; ++k) {
        a << "{\"t\":\"gpu\",\"kind\":\"kernel\",\"start\":" << t << ",\"end\":" << t + 10000
          << ",\"stream\":7,\"device\":0,\"name\":\"void at::native::elementwise_kernel<128, 2, "
             "at::native::gpu_kernel_impl<at::native::AUnaryFunctor<float, float, float>>>\"}\n";
        iv += (k ? "," : "") + std::to_string(t - base) + ",10000";
        t += 11000;
      }
      b << "{\"t\":\"gpu_busy\",\"device\":0,\"kernels\":" << kKernels << ",\"memsets\":0,\"base\":" << base
        << ",\"iv\":[" << iv << "]}\n";
      std::string tail = "{\"t\":\"site\",\"id\":0,\"start\":" + std::to_string(t) + ",\"end\":" +
                         std::to_string(t + 2000000) + "}\n";
      t += 2000000;
      tail += "{\"t\":\"step\",\"n\":" + std::to_string(s) + ",\"end\":" + std::to_string(t) + "}\n";
      a << tail;
      b << tail;
    }
    a << "{\"t\":\"end\",\"reason\":\"exit\",\"steps\":" << kSteps << "}\n";
    b << "{\"t\":\"end\",\"reason\":\"exit\",\"steps\":" << kSteps << "}\n";
    a.close();
    b.close();
    lines_bytes = fs::file_size(lines / "rec-5.jsonl");
    busy_bytes = fs::file_size(busy / "rec-5.jsonl");
  }
  ~Folders() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
};

Folders& folders() {
  static Folders f;
  return f;
}

void read_and_merge(benchmark::State& st, const fs::path& dir) {
  rt::PlanSite s;
  s.id = 0;
  s.code = "TL101";
  s.path = "/abs/train.py";
  s.line = 1;
  s.probe = "site";
  rt::MeasureOptions o;
  o.shim_present = true;
  o.bootstrap_present = true;
  for (auto _ : st) {
    auto procs = rt::read_records(dir.string());
    auto m = rt::measure({s}, procs, o);
    if (m.run.kernels != int64_t{kSteps} * kKernels) st.SkipWithError("wrong kernel count");
    benchmark::DoNotOptimize(m);
  }
}

void BM_Lines(benchmark::State& st) { read_and_merge(st, folders().lines); }
void BM_Busy(benchmark::State& st) { read_and_merge(st, folders().busy); }

BENCHMARK(BM_Lines)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(2)->Repetitions(3);
BENCHMARK(BM_Busy)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(2)->Repetitions(3);


}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  folders();
  tl::bench::MedianReporter rep;
  benchmark::RunSpecifiedBenchmarks(&rep);
  const auto& f = folders();
  std::printf("1 M kernels: lines %.1f MB, busy %.1f MB on disk (%.1fx smaller)\n", f.lines_bytes / 1e6,
              f.busy_bytes / 1e6, static_cast<double>(f.lines_bytes) / static_cast<double>(f.busy_bytes));
  if (rep.median_ms.count("BM_Lines") && rep.median_ms.count("BM_Busy"))
    std::printf("read + merge: lines %.0f ms, busy %.0f ms (%.1fx faster)\n", rep.median_ms["BM_Lines"],
                rep.median_ms["BM_Busy"], rep.median_ms["BM_Lines"] / rep.median_ms["BM_Busy"]);
  benchmark::Shutdown();
  return 0;
}
