// TL501 cudnn-benchmark-off (C++): a program training torch::nn::Conv* on CUDA that never calls
// at::globalContext().setBenchmarkCuDNN(true). Points at the step loop's backward() call of the
// program's entry file.
#include <algorithm>

#include "analyzer/cpp/torch_names.h"
#include "rules/cpp/common.h"
#include "rules/cpp/rules.h"

namespace tl::cpp {

void check_cudnn_benchmark_off(RuleContext& ctx) {
  const Model& m = ctx.model;
  for (auto& p : m.programs()) {
    if (p.entry != ctx.tu.index || !p.on_cuda) continue;
    auto member = [&](uint32_t tu) { return std::find(p.members.begin(), p.members.end(), tu) != p.members.end(); };
    bool conv = false;
    for (auto& v : m.variables())
      if (member(v.tu) && torch_names::is_convolution(v.type.name)) conv = true;
    for (auto& c : m.calls())
      if (member(c.tu) && (torch_names::is_convolution(c.callee) || torch_names::is_convolution(c.result.name))) conv = true;
    if (!conv) continue;
    bool sets = false;
    for (auto& c : m.calls())
      if (member(c.tu) && c.method == "setBenchmarkCuDNN") sets = true;
    if (sets) continue;
    // the anchor: a backward() call in a training step loop, the entry file's first
    const CallSite* anchor = nullptr;
    for (auto& c : m.calls()) {
      if (c.method != "backward" || !m.runs_in_program(p, c)) continue;
      auto sc = m.runs_every_step(c);
      if (!sc || m.loops()[sc->loop].kind != LoopKind::TrainingStep) continue;
      if (!anchor || (c.tu == p.entry && anchor->tu != p.entry)) anchor = &c;
    }
    if (!anchor) continue;
    ctx.report(*anchor,
               "this program trains convolution layers on CUDA without "
               "`at::globalContext().setBenchmarkCuDNN(true)`: cuDNN keeps its default algorithms instead of timing "
               "the fastest one for your input shapes");
  }
}

}  // namespace tl::cpp
