// TL106 log-per-step: print / logging / logger.* / writer.add_* / wandb.log / mlflow.log_* every step.
#include <unordered_set>

#include "rules/python/common.h"
#include "rules/python/rules.h"

namespace tl::rules {
namespace {

bool is_log_method(std::string_view m) {
  return m == "debug" || m == "info" || m == "warning" || m == "warn" || m == "error" || m == "critical" ||
         m == "exception" || m == "log";
}

std::string log_of(const RuleContext& ctx, const py::Call& c) {
  const auto& t = ctx.tree;
  std::string_view q = c.qname;
  if (q == "builtins.print") {
    // print(..., file=out) to a file the program opened writes its results (one line per
    // generated sample), not a log line; stdout and stderr are logging
    py::NodeId f = ctx.model.keyword_arg(ctx.mod, c, "file");
    if (f != py::kNone) {
      std::string d = py::dotted_text(t, f);
      if (d != "sys.stdout" && d != "sys.stderr" && d != "sys.__stdout__" && d != "sys.__stderr__") return "";
    }
    return "print";
  }
  if (q.rfind("logging.", 0) == 0 && is_log_method(py::last_component(q))) return std::string(q);
  if (q == "wandb.log") return "wandb.log";
  if (q.rfind("mlflow.log_", 0) == 0) return std::string(q);
  if (c.receiver == py::kNone || c.method.empty()) return "";
  std::string recv = py::dotted_text(t, c.receiver);
  std::string_view last = py::last_component(recv);
  if (is_log_method(c.method)) {
    // logger.info(...): a logging.Logger (getLogger) or a name that says logger
    for (auto& o : ctx.model.origins(ctx.mod, c.receiver))
      if (o == "logging.getLogger" || o.rfind("loguru", 0) == 0) return recv + "." + std::string(c.method);
    if (py::icontains(last, "logger") || last == "log" || last == "LOG" || last == "_log")
      return recv + "." + std::string(c.method);
    std::string rq = ctx.model.qualified_name(ctx.mod, c.receiver);
    if (rq.rfind("loguru.logger", 0) == 0) return recv + "." + std::string(c.method);
    return "";
  }
  if (c.method.rfind("add_", 0) == 0) {
    for (auto& o : ctx.model.origins(ctx.mod, c.receiver))
      if (py::last_component(o) == "SummaryWriter") return recv + "." + std::string(c.method);
    if (py::icontains(last, "writer") || last == "tb" || py::icontains(last, "tensorboard"))
      return recv + "." + std::string(c.method);
  }
  return "";
}

// `logger.debug("backward done")`, `logging.debug("step %d", step)`: the standard library's
// loggers drop debug records unless someone lowers their level, and a call whose arguments are
// literals and plain names (no formatting done before the call, no call of its own) costs one
// level check when they do. loguru's default sink shows debug records: those are kept.
bool quiet_debug(const RuleContext& ctx, const py::Call& c, std::string_view what) {
  const auto& t = ctx.tree;
  if (py::last_component(what) != "debug" || what.find("loguru") != std::string_view::npos) return false;
  if (c.receiver != py::kNone) {
    for (auto& o : ctx.model.origins(ctx.mod, c.receiver))
      if (o.rfind("loguru", 0) == 0) return false;
    if (ctx.model.qualified_name(ctx.mod, c.receiver).rfind("loguru", 0) == 0) return false;
  }
  py::NodeId args = t.field(c.node, py::F::Arguments);
  if (args == py::kNone) return true;
  for (py::NodeId a : t.named_child_range(args)) {
    if (t.is(a, py::K::KeywordArgument)) a = t.field(a, py::F::Value);
    if (a == py::kNone) continue;
    for (py::NodeId x = a, end = t[a].subtree_end; x < end; ++x) {
      py::K k = t.kind(x);
      if (k == py::K::Call || k == py::K::BinaryOperator || k == py::K::ListSplat || k == py::K::DictionarySplat ||
          t.type_name(x) == "interpolation")
        return false;
    }
  }
  return true;
}

}  // namespace

void check_log_per_step(RuleContext& ctx) {
  if (!ctx.model.has_step_code(ctx.mod)) return;  // every report below asks runs_every_step
  std::unordered_set<py::NodeId> reported;
  for (auto& c : ctx.mod.calls) {
    std::string what = log_of(ctx, c);
    if (what.empty() || quiet_debug(ctx, c, what)) continue;
    py::NodeId stmt = py::ProgramModel::statement_of(ctx.tree, c.node);
    if (reported.count(stmt)) continue;
    auto sc = ctx.model.runs_every_step(ctx.mod, c.node, false);
    if (!sc) continue;
    reported.insert(stmt);
    ctx.report_per_step(c.node,
                        trains_on_accelerator(ctx, &*sc)
                            ? "`" + what + "(...)` runs every step: formatting and writing a log line (and any tensor "
                                           "values it reads) costs host time in the loop that feeds the GPU; log every N "
                                           "steps"
                            : "`" + what + "(...)` runs every step: formatting and writing a log line costs time in "
                                           "every step; log every N steps",
                        *sc);
  }
}

}  // namespace tl::rules
