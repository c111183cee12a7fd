// TL201 dataloader-no-workers (C++): make_data_loader whose DataLoaderOptions has no
// `.workers(n>0)`. Not flagged when the options come from a value the analysis cannot see, nor for
// a dataset whose samples are already tensors in memory (a TensorDataset, LibTorch's MNIST, a
// project dataset whose get() only indexes tensors it holds).
#include <optional>

#include "rules/cpp/common.h"
#include "rules/cpp/rules.h"

namespace tl::cpp {
namespace {

bool is_int_literal(std::string_view s) {
  if (s.empty()) return false;
  for (char ch : s)
    if (!std::isdigit(static_cast<unsigned char>(ch))) return false;
  return true;
}

// The argument of `.workers(...)` in an options expression, "" when there is none; nullopt when
// the options are a value the analysis cannot see.
std::optional<std::string> workers_of(const RuleContext& ctx, const CallSite& c, const std::string& opts, int depth = 0) {
  std::string s;
  for (char ch : opts)
    if (!std::isspace(static_cast<unsigned char>(ch))) s += ch;
  if (is_int_literal(s)) return std::string();  // make_data_loader(dataset, 64): a batch size
  auto p = s.find(".workers(");
  if (p != std::string::npos) {
    auto e = s.find(')', p);
    return s.substr(p + 9, e == std::string::npos ? std::string::npos : e - p - 9);
  }
  if (s.find("DataLoaderOptions(") != std::string::npos) return std::string();
  // make_data_loader(dataset, options.train_batch_size): a batch size (DataLoaderOptions is
  // implicitly built from it), whatever holds it
  if (s.find('(') == std::string::npos) {
    auto p = s.find_last_of(".>:");
    std::string last = p == std::string::npos ? s : s.substr(p + 1);
    for (auto& ch : last) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (last.find("batch") != std::string::npos) return std::string();
  }
  // a variable: its initializer and later assignments (`opts.workers(4)` on a separate line counts
  // as unseen)
  bool ident = !s.empty() && (std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_');
  for (char ch : s)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_')) ident = false;
  if (!ident || depth > 2) return std::nullopt;
  int32_t v = ctx.model.lookup(c.tu, c.function, s, c.range.begin);
  if (v < 0) return std::nullopt;
  for (auto& o : ctx.model.calls())
    if (o.tu == c.tu && o.function == c.function && o.receiver == s && o.method == "workers") return std::nullopt;
  const Variable& var = ctx.model.variables()[v];
  if (var.parameter || var.init.empty()) return std::nullopt;
  return workers_of(ctx, c, var.init, depth + 1);
}

// `CIFAR10(root).map(...)`: a project dataset whose get() only indexes tensors it holds (loaded
// when it was built): every call in get() is a tensor method or a cast, or there is none
// (`return {images_[index], targets_[index]};`).
bool indexes_only(const Model& m, std::string_view init) {
  size_t e = 0;
  while (e < init.size() && (std::isalnum(static_cast<unsigned char>(init[e])) || init[e] == '_' || init[e] == ':')) ++e;
  if (e == 0 || e >= init.size() || init[e] != '(') return false;
  std::string cls(init.substr(0, e));
  if (auto p = cls.rfind("::"); p != std::string::npos) cls = cls.substr(p + 2);
  for (auto& f : m.functions()) {
    if (f.cls != cls || f.name != "get") continue;
    for (uint32_t cid : f.calls) {
      const CallSite& k = m.calls()[cid];
      if (k.callee == "static_cast" || k.callee == "std::move") continue;  // not work on the sample
      if (k.receiver_type.kind != TypeKind::Tensor) return false;
    }
    return true;
  }
  return false;
}

// The dataset already holds its samples as tensors: a TensorDataset, LibTorch's MNIST (read whole
// into two tensors when it is built) or a project dataset that only indexes tensors it holds,
// directly or through the variable passed.
bool in_memory(const RuleContext& ctx, const CallSite& c) {
  auto held = [](std::string_view s) {
    return s.find("TensorDataset") != std::string_view::npos || s.find("datasets::MNIST(") != std::string_view::npos;
  };
  std::string a;
  for (char ch : c.args[0])
    if (!std::isspace(static_cast<unsigned char>(ch))) a += ch;
  if (held(a)) return true;
  if (a.starts_with("std::move(") && a.back() == ')') a = a.substr(10, a.size() - 11);
  int32_t v = ctx.model.lookup(c.tu, c.function, a, c.range.begin);
  std::string init = v >= 0 ? ctx.model.variables()[v].init : a;
  if (held(init)) return true;
  return indexes_only(ctx.model, init);
}

}  // namespace

void check_dataloader_no_workers(RuleContext& ctx) {
  for (auto& c : ctx.model.calls()) {
    if (!ctx.here(c) || c.result.kind != TypeKind::DataLoader || !c.method.empty()) continue;
    if (c.args.empty()) continue;
    if (in_memory(ctx, c)) continue;
    std::optional<std::string> workers = std::string();
    for (size_t i = 1; i < c.args.size() && workers; ++i) {
      auto w = workers_of(ctx, c, c.args[i]);
      if (!w) workers = std::nullopt;
      else if (!w->empty()) workers = w;
    }
    if (!workers) continue;
    bool missing = workers->empty();
    if (!missing && *workers != "0") continue;
    ctx.report(c, std::string(missing ? "`make_data_loader` has no `.workers(n)` in its DataLoaderOptions"
                                      : "`make_data_loader` has `.workers(0)`") +
                      (on_accelerator(ctx, c)
                           ? ": batches are loaded and collated in the training thread, so the GPU waits for every "
                             "batch; set `torch::data::DataLoaderOptions().workers(n)` with n > 0"
                           : ": batches are loaded and collated in the training thread, between steps, adding to "
                             "every step's time; set `torch::data::DataLoaderOptions().workers(n)` with n > 0"));
  }
}

}  // namespace tl::cpp
