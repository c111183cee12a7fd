// Google Benchmark's console output, plus the median real time of every benchmark run with
// repetitions, by "Function" or "Function/args", for the ratio lines the benchmarks print last.
#pragma once

#include <benchmark/benchmark.h>

#include <map>
#include <string>
#include <vector>

namespace tl::bench {

class MedianReporter : public benchmark::ConsoleReporter {
 public:
  std::map<std::string, double> median_ms;
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (auto& r : runs)
      if (r.run_type == Run::RT_Aggregate && r.aggregate_name == "median")
        median_ms[r.run_name.function_name + (r.run_name.args.empty() ? "" : "/" + r.run_name.args)] =
            r.GetAdjustedRealTime();
  }
};

}  // namespace tl::bench
