// TL105 host-sync-per-step (C++): .item<T>(), .item(), .cpu(), .to(torch::kCPU),
// torch::cuda::synchronize() and `std::cout << tensor` every step, in a program that trains on
// CUDA. One finding per statement. A synchronize right before a clock read times the GPU on
// purpose and is left alone, and so are reads of host-resident tensors (docs/concepts.md): caption
// lengths taken from a loader's batch and never moved, the result of `.cpu()` passed to a helper.
#include <algorithm>
#include <cstdint>
#include <set>
#include <utility>

#include "analyzer/cpp/torch_names.h"
#include "rules/cpp/common.h"
#include "rules/cpp/rules.h"

namespace tl::cpp {
namespace {

std::string sync_of(const CallSite& c) {
  if (c.method.empty()) {
    if (c.callee == "torch::cuda::synchronize" || c.callee == "at::cuda::synchronize" ||
        c.callee == "c10::cuda::device_synchronize")
      return c.callee + "()";
    return "";
  }
  if (c.receiver_type.kind != TypeKind::Tensor) return "";
  // a tensor that lives in host memory (a loader batch's field, `.cpu()`'s result...): no GPU wait
  if (c.receiver_on_host) return "";
  if (c.method == "item") return c.template_args.empty() ? ".item()" : ".item<" + c.template_args + ">()";
  if (c.method == "cpu" && c.args.empty()) return ".cpu()";
  if (c.method == "to" && !c.args.empty() && torch_names::last(c.args[0]) == "kCPU") return ".to(" + c.args[0] + ")";
  return "";
}

// `torch::cuda::synchronize(); start = std::chrono::steady_clock::now();`: the sync is there to
// time the GPU work (a benchmark or per-image latency), not an accidental wait.
bool times_the_gpu(const Model& m, const CallSite& sync) {
  if (sync.function < 0) return false;
  const auto& calls = m.functions()[sync.function].calls;
  // the next statement that makes a call: does it read a clock?
  uint32_t next = UINT32_MAX;
  for (uint32_t cid : calls) {
    const CallSite& k = m.calls()[cid];
    if (k.range.begin >= sync.statement.end) next = std::min(next, k.statement.begin);
  }
  for (uint32_t cid : calls) {
    const CallSite& k = m.calls()[cid];
    if (k.statement.begin != next || k.range.begin < sync.statement.end) continue;
    if ((k.method == "now" || k.callee.ends_with("::now")) &&
        (k.callee.find("chrono") != std::string::npos || k.callee.find("clock") != std::string::npos))
      return true;
  }
  return false;
}

}  // namespace

void check_host_sync_per_step(RuleContext& ctx) {
  std::set<std::pair<uint32_t, uint32_t>> statements;
  struct Hit {
    const Site* site;
    std::string message;
  };
  std::vector<Hit> hits;
  for (auto& c : ctx.model.calls()) {
    if (!ctx.here(c)) continue;
    std::string what = sync_of(c);
    if (what.empty()) continue;
    if (c.method.empty() && times_the_gpu(ctx.model, c)) continue;
    hits.push_back({&c, "`" + what + "` blocks the host until the GPU has finished every queued kernel, every step: "
                                    "the CPU cannot queue the next step's work while it waits; read values every N "
                                    "steps"});
  }
  for (auto& w : ctx.model.stream_writes()) {
    if (!ctx.here(w)) continue;
    for (size_t i = 0; i < w.operands.size(); ++i) {
      if (w.operand_types[i].kind != TypeKind::Tensor) continue;
      if (i < w.operand_on_host.size() && w.operand_on_host[i]) continue;
      hits.push_back({&w, "writing the tensor `" + w.operands[i] + "` to `" + w.stream +
                              "` copies its value to the host, which waits for the GPU to finish every queued "
                              "kernel, every step; print a `.item()` read every N steps"});
      break;
    }
  }
  std::stable_sort(hits.begin(), hits.end(), [](const Hit& a, const Hit& b) { return a.site->range.begin < b.site->range.begin; });
  for (auto& h : hits) {
    if (!on_accelerator(ctx, *h.site)) continue;
    auto key = std::make_pair(h.site->statement.begin, h.site->statement.end);
    if (statements.count(key)) continue;
    auto sc = ctx.model.runs_every_step(*h.site);
    if (!sc) continue;
    statements.insert(key);
    ctx.report_per_step(*h.site, h.message, *sc);
  }
}

}  // namespace tl::cpp
