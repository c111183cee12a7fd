// TL401 tensor-to-discarded (C++): `x.to(...)` (and cuda/cpu/half/float/double/bfloat16) as an
// expression statement on a receiver the model knows is an at::Tensor.
#include "rules/cpp/common.h"
#include "rules/cpp/rules.h"

namespace tl::cpp {

namespace {

bool conversion(std::string_view m) {
  return m == "to" || m == "cuda" || m == "cpu" || m == "half" || m == "float" || m == "double" || m == "bfloat16";
}

// The kept value a receiver's text converts: `x` of `x.to(torch::kFloat)`, `loss` of
// `loss.detach()` (conversions, and the copies and views that keep the value: detach, contiguous,
// clone). Empty when the receiver is a tensor made in the statement itself (`torch::ones({1})` of
// `torch::ones({1}).cuda()`, `model->forward(x)` of `model->forward(x).cpu()`): no variable is
// left unchanged, so the finding's point and its fix would not apply.
std::string_view kept_value(std::string_view r) {
  for (int depth = 0; depth < 64 && !r.empty() && r.back() == ')'; ++depth) {
    int level = 0;
    size_t open = std::string_view::npos;
    for (size_t i = r.size(); i-- > 0;) {
      if (r[i] == ')') ++level;
      else if (r[i] == '(' && --level == 0) {
        open = i;
        break;
      }
    }
    if (open == std::string_view::npos) return {};
    size_t name_end = open;
    while (name_end > 0 && std::isspace(static_cast<unsigned char>(r[name_end - 1]))) --name_end;
    size_t name_start = name_end;
    while (name_start > 0 && (std::isalnum(static_cast<unsigned char>(r[name_start - 1])) || r[name_start - 1] == '_'))
      --name_start;
    std::string_view method = r.substr(name_start, name_end - name_start);
    bool keeps = conversion(method) || method == "detach" || method == "contiguous" || method == "clone";
    if (!keeps || name_start == 0 || r[name_start - 1] != '.') return {};
    r = r.substr(0, name_start - 1);
  }
  return r.find('(') == std::string_view::npos ? r : std::string_view();
}

}  // namespace

void check_tensor_to_discarded(RuleContext& ctx) {
  for (auto& c : ctx.model.calls()) {
    if (!ctx.here(c) || !c.discarded || c.arrow) continue;
    const std::string& m = c.method;
    if (!conversion(m)) continue;
    if (c.receiver_type.kind != TypeKind::Tensor) continue;
    const std::string& r = c.receiver;
    std::string_view var = kept_value(r);
    if (var.empty()) continue;
    const std::string v(var);
    Finding& f = ctx.report(c, "`" + r + "." + m + "(...)` returns a new tensor and the result is dropped: `" + v +
                                   "` is unchanged (only `torch::nn::Module::to()` works in place); assign it: `" + v +
                                   " = " + r + "." + m + "(...)`");
    // only for the plain case: through a chain (`loss.detach().cpu()`) assigning back would also
    // detach `loss`, which later code may still need
    bool plain = !v.empty() && v == r;
    for (char ch : v)
      if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_')) plain = false;
    if (plain) {
      Fix fix;
      fix.title = "Assign the result back to `" + v + "`";
      Edit ed;
      ed.range = c.range;
      ed.range.end = ed.range.begin;
      ed.range.stop = ed.range.start;
      ed.replacement = v + " = ";
      fix.edits.push_back(ed);
      f.fix = std::move(fix);
    }
  }
}

}  // namespace tl::cpp
